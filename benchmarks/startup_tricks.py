"""What each start-up trick of `check` saves beside the plain way; prints one table (issue 42: a trick stays only
where it saves more than 5 ms on the lent GPU machine).

    python3 benchmarks/startup_tricks.py [--runs 20] [--root DIR] [--python EXE]

Rows, each timed in fresh processes, interleaved run by run (a busy machine slows both sides alike), medians:
- teardown: a whole `check --json` process ending through cli._leave (os._exit once threads, atexit and the
  streams are done) against the interpreter's own teardown; timed from the report's last byte to the exit.
- early native child: a whole `check --json` with the native child started before typer and the command's imports
  (cli._early_native) against the child started by the probes; only a live machine (no --root) shows it.
- typer: importing typer and building the `check` app, in a process that already imported the run, and a whole run
  through typer against check_run.run_check called directly (the price of having one command-line parser, not a
  trick: shown so its cost is known).
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
from typing import Dict, List, Sequence, Tuple

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
# The run without typer, as the plain path removed in issue 42 ran it: check_run.run_check on the options the line
# gives (--json and --root only), the early child and the exit as cli.main has them.
WITHOUT_TYPER = ("from cudnn_doctor.commands.check_run import CheckOptions, run_check\n"
                 "def direct():\n"
                 "    args = sys.argv[1:]\n"
                 "    root = args[args.index('--root') + 1] if '--root' in args else '/'\n"
                 "    early = cli._early_native(args)\n"
                 "    try:\n"
                 "        code = run_check(CheckOptions(as_json=True, root=root), early)\n"
                 "    finally:\n"
                 "        if early is not None:\n"
                 "            early.close()\n"
                 "    cli._leave(code)\n"
                 "cli.main = direct")
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
    """Wall seconds of one whole `check` process and of its exit after the marker; its CPU seconds (wait4)."""
    code = WHOLE.format(teardown=teardown, patch=patch)
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir(), env=_env())
    assert proc.stderr is not None
    marked = None
    for line in proc.stderr:
        if line == b"END\n":
            marked = time.perf_counter()
    _, _, usage = os.wait4(proc.pid, 0)
    end = time.perf_counter()
    return {"wall": end - start, "exit": end - (marked or end), "cpu": usage.ru_utime + usage.ru_stime}


def in_process(python: str, name: str, statement: str) -> Tuple[float, float]:
    """(wall, CPU) seconds of ``statement`` in a fresh process."""
    code = BEFORE.get(name, "") + "import time\nt, c = time.perf_counter(), time.process_time()\n" + statement
    code += "\nprint(time.perf_counter() - t, time.process_time() - c)\n"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir(), env=_env())
    if out.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (statement, out.stderr[-1000:]))
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


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
    ways = {"leave": (TEARDOWN_SKIPPED, ""), "teardown": (TEARDOWN_RUN, ""), "late": (TEARDOWN_SKIPPED, late_child),
            "direct": (TEARDOWN_SKIPPED, WITHOUT_TYPER)}
    runs: Dict[str, List[Dict[str, float]]] = {k: [] for k in ways}
    steps: Dict[str, List[Tuple[float, float]]] = {"%s %d" % (k, i): [] for k in IN_PROCESS for i in (0, 1)}
    for _ in range(opts.runs):
        for key, (teardown, patch) in ways.items():
            runs[key].append(whole_run(opts.python, args, teardown, patch))
        for name, statements in IN_PROCESS.items():
            for i, statement in enumerate(statements):
                steps["%s %d" % (name, i)].append(in_process(opts.python, name, statement))
    loaded = loaded_by_typer(opts.python)

    def whole(key: str, what: str) -> float:
        return _ms([r[what] for r in runs[key]])

    def step(key: str, i: int) -> float:
        return _ms([w[i] for w in steps[key]])

    print("`%s`, %d runs each, interleaved; medians in ms, wall (CPU); keep = saves more than %.0f ms of wall time "
          "on an idle machine (on a busy one, read the CPU figures)" % (" ".join(["cudnn-doctor"] + args), opts.runs,
                                                                      THRESHOLD_MS))
    print("| trick | with it | the plain way | saving | keep |")
    print("|---|---|---|---|---|")
    rows = [("os._exit at the end (cli._leave): the exit itself", whole("leave", "exit"), None,
             whole("teardown", "exit"), None),
            ("os._exit at the end: the whole run", whole("leave", "wall"), whole("leave", "cpu"),
             whole("teardown", "wall"), whole("teardown", "cpu")),
            ("native child started before typer (cli._early_native): the whole run", whole("leave", "wall"),
             whole("leave", "cpu"), whole("late", "wall"), whole("late", "cpu"))]
    typer = (0.0, 0.0, step("typer 0", 0) - step("typer 1", 0), step("typer 0", 1) - step("typer 1", 1))
    rows.append(("no typer (not a trick: the one parser's import and the check app, after the run's imports)",) + typer)
    rows.append(("no typer: the whole run with run_check called directly (the plain path issue 42 removed)",
                 whole("direct", "wall"), whole("direct", "cpu"), whole("leave", "wall"), whole("leave", "cpu")))
    for name, label in (("hashlib", "_sha2 instead of hashlib (removed)"),
                        ("datetime", "time.strftime instead of datetime (removed)")):
        if name in loaded:
            label += ", typer imports it anyway: saves nothing"
        rows.append((label, step(name + " 1", 0), step(name + " 1", 1), step(name + " 0", 0), step(name + " 0", 1)))
    for label, trick, trick_cpu, plain, plain_cpu in rows:
        saving = 0.0 if "saves nothing" in label else plain - trick
        print("| %s | %s | %s | %s | %s |" % (
            label, _pair(trick, trick_cpu), _pair(plain, plain_cpu),
            _pair(saving, None if trick_cpu is None or plain_cpu is None else plain_cpu - trick_cpu),
            "-" if label.startswith("no typer") else "yes" if saving > THRESHOLD_MS else "no"))
    return 0


def _pair(wall: float, cpu: "float | None") -> str:
    return "%.1f" % wall if cpu is None else "%.1f (%.1f)" % (wall, cpu)


if __name__ == "__main__":
    sys.exit(main())
