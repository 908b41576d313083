"""What each start-up trick of `check` saves beside the plain way; prints one table (issue 42: a trick stays only
where it saves more than 5 ms on the lent GPU machine).

    python3 benchmarks/startup_tricks.py [--runs 20] [--root DIR] [--python EXE]

Rows, each timed in fresh processes, interleaved run by run (a busy machine slows both sides alike), medians:
- teardown: a whole `check --json` process ending through cli._leave (os._exit once threads, atexit and the
  streams are done) against the interpreter's own teardown; timed from the report's last byte to the exit.
- early native child: a whole `check --json` with the native child started before typer and the command's imports
  (cli._early_native) against the child started by the probes; only a live machine (no --root) shows it.
- typer: importing typer and building the `check` app, in a process that already imported the run (the price of
  having one command-line parser, not a trick: shown so its cost is known).
- hashlib, datetime: importing and using them (SHA-256 of the fingerprint; started_at) against the private ways
  removed in issue 42 (CPython's _sha2 module; time.strftime), each in a fresh process; where typer imports the
  module anyway, avoiding it saves nothing and the saving reads 0.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THRESHOLD_MS = 5.0

# A whole `check --json` as the console script runs it; {patch} may replace a function of cli first. The child
# prints a marker on stderr just before it ends, so the parent can time the exit alone.
WHOLE = ("import sys, time; sys.argv = ['cudnn-doctor'] + sys.argv[1:]\n"
         "import cudnn_doctor.cli as cli\n"
         "leave = cli._leave\n"
         "def marked(code):\n"
         "    sys.stdout.flush(); sys.stderr.write('END\\n'); sys.stderr.flush()\n"
         "    {teardown}\n"
         "cli._leave = marked\n"
         "{patch}\n"
         "cli.main()\n")
TEARDOWN_SKIPPED = "leave(code)"
TEARDOWN_RUN = "pass  # sys.exit goes on to the interpreter's teardown"

# In-process, in a fresh process: the seconds one way takes (typer's after the modules the run imports anyway).
BEFORE = {"typer": "import cudnn_doctor.commands.check_run\n"}
IN_PROCESS = {
    "typer": ("import cudnn_doctor.cli as cli; cli.build_app('check')", "pass"),
    "hashlib": ("import hashlib; hashlib.sha256(b'x').hexdigest()",
                ("from _sha2 import sha256\n" if sys.version_info >= (3, 12) else "from _sha256 import sha256\n")
                + "sha256(b'x').hexdigest()"),
    "datetime": ("import datetime; datetime.datetime.fromtimestamp(1.5, datetime.timezone.utc)"
                 ".strftime('%Y-%m-%dT%H:%M:%S.%fZ')",
                 "time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(1.0))"),
}


def whole_run(python: str, args: Sequence[str], teardown: str, patch: str = "") -> Dict[str, float]:
    """Wall seconds of one whole `check` process, and of its exit after the marker."""
    code = WHOLE.format(teardown=teardown, patch=patch)
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir(), env=_env())
    assert proc.stderr is not None
    marked = None
    for line in proc.stderr:
        if line == b"END\n":
            marked = time.perf_counter()
    proc.wait()
    end = time.perf_counter()
    return {"wall": end - start, "exit": end - (marked or end)}


def in_process(python: str, name: str, statement: str) -> float:
    code = BEFORE.get(name, "") + "import time\nt = time.perf_counter()\n" + statement
    code += "\nprint(time.perf_counter() - t)\n"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir(), env=_env())
    if out.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (statement, out.stderr[-1000:]))
    return float(out.stdout)


def loaded_by_typer(python: str) -> set:
    """The modules importing typer loads: avoiding one of them saves nothing once typer parses the line."""
    proc = subprocess.run([python, "-c", "import sys, typer; print(' '.join(sys.modules))"], capture_output=True,
                          text=True, cwd=tempfile.gettempdir(), env=_env())
    return set(proc.stdout.split())


def _env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")


def _ms(values: List[float]) -> float:
    return 1e3 * statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--root", help="check this folder (--root DIR) instead of the live machine")
    parser.add_argument("--python", default=sys.executable)
    opts = parser.parse_args()
    args = ["check", "--json"] + (["--root", opts.root] if opts.root else [])
    late_child = "cli._early_native = lambda args: None"
    times: Dict[str, List[float]] = {k: [] for k in ("leave", "teardown", "early", "late")}
    exits: Dict[str, List[float]] = {"leave": [], "teardown": []}
    steps: Dict[str, List[float]] = {"%s %d" % (k, i): [] for k in IN_PROCESS for i in (0, 1)}
    for _ in range(opts.runs):
        for key, teardown, patch in (("leave", TEARDOWN_SKIPPED, ""), ("teardown", TEARDOWN_RUN, ""),
                                     ("early", TEARDOWN_SKIPPED, ""), ("late", TEARDOWN_SKIPPED, late_child)):
            run = whole_run(opts.python, args, teardown, patch)
            times[key].append(run["wall"])
            if key in exits:
                exits[key].append(run["exit"])
        for name, ways in IN_PROCESS.items():
            for i, statement in enumerate(ways):
                steps["%s %d" % (name, i)].append(in_process(opts.python, name, statement))
    loaded = loaded_by_typer(opts.python)
    print("`%s`, %d runs each, interleaved; medians in ms; keep = saves more than %.0f ms"
          % (" ".join(["cudnn-doctor"] + args), opts.runs, THRESHOLD_MS))
    print("| trick | with it | the plain way | saving | keep |")
    print("|---|---|---|---|---|")
    rows = [("os._exit at the end (cli._leave): the exit itself", _ms(exits["leave"]), _ms(exits["teardown"])),
            ("os._exit at the end: the whole run", _ms(times["leave"]), _ms(times["teardown"])),
            ("native child started before typer (cli._early_native): the whole run", _ms(times["early"]),
             _ms(times["late"]))]
    for label, trick, plain in rows:
        print("| %s | %.1f | %.1f | %.1f | %s |" % (label, trick, plain, plain - trick,
                                                      "yes" if plain - trick > THRESHOLD_MS else "no"))
    typer_ms = _ms(steps["typer 0"]) - _ms(steps["typer 1"])
    print("| no typer (one parser kept: typer's import and the check app, after the run's imports) | 0 | %.1f | "
          "%.1f | - |" % (typer_ms, typer_ms))
    for name, label in (("hashlib", "_sha2 instead of hashlib (removed)"),
                        ("datetime", "time.strftime instead of datetime (removed)")):
        trick, plain = _ms(steps[name + " 1"]), _ms(steps[name + " 0"])
        anyway = name in loaded
        saving = 0.0 if anyway else plain - trick
        print("| %s%s | %.1f | %.1f | %.1f | %s |" % (label, ", typer imports it anyway" if anyway else "", trick, plain,
                                                       saving, "yes" if saving > THRESHOLD_MS else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
