"""Times `cudnn-doctor check` as a whole process beside nvidia-smi; prints issue 12's table.

    python3 benchmarks/check_bench.py [--runs 7] [--baseline [NAME=]DIR ... | --baseline-ref REF]
                                      [--python EXE] [--baseline-python EXE]
                                      [--root DIR | --fake-root] [--timeout-overhead]

Every command runs as a fresh process, all of them interleaved run by run (so a busy machine slows each
alike); the table gives medians, minimums, the CPU seconds (user + system, the native child's included) and the
peak RSS of each process (wait4). --baseline [NAME=]DIR (repeatable) adds the same rows for another source tree
(e.g. the previous release), labelled NAME, with its own interpreter if given (--python EXE runs this tree with
another interpreter, e.g. a virtual environment holding only cudnn-doctor's dependencies, as pipx installs it); --baseline-ref REF exports that
commit of this repository (git archive) into a temporary folder and uses it. --fake-root builds the test suite's CUDA 12.4 / cuDNN 9.1 fake
machine (needs gcc) and checks it with --root, so a machine without a GPU times a run with findings.
--timeout-overhead also times the probes in-process with and without the per-probe deadline threads.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(argv: Sequence[str], env: Optional[dict]) -> Optional[Tuple[float, int, int, str, float]]:
    """(wall seconds, peak RSS in KiB, exit code, stdout, CPU seconds) of one whole process; None when it cannot
    start."""
    start = time.perf_counter()
    try:
        # From a neutral folder: `python -m` puts the current folder first on sys.path, which would make a
        # baseline row import this checkout instead of its own tree.
        proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                stdin=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    except OSError:
        return None
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, proc.returncode, out.decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime


# Runs the doctor and prints its own peak RSS at exit: wait4's figure also counts the native child's forks.
OWN_RSS = ("import atexit, resource, runpy, sys; atexit.register(lambda: sys.stderr.write('OWN_RSS %d\\n' % "
           "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)); runpy.run_module('cudnn_doctor', "
           "run_name='__main__', alter_sys=True)")


def own_rss_kib(python: str, env: dict, args: Sequence[str]) -> Optional[int]:
    """Peak RSS of the doctor's own process (KiB), children left out."""
    proc = subprocess.run([python, "-c", OWN_RSS] + list(args), capture_output=True, text=True, env=env,
                          cwd=tempfile.gettempdir())
    lines = [line for line in proc.stderr.splitlines() if line.startswith("OWN_RSS ")]
    return int(lines[-1].split()[1]) if lines else None


def tree_env(tree: str) -> dict:
    return dict(os.environ, PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")


def rows_for(label: str, python: str, tree: str, root: Optional[str],
             smoke: bool) -> List[Tuple[str, List[str], dict]]:
    extra = ["--root", root] if root else []
    env = tree_env(tree)
    rows = [
        ("%scheck" % label, [python, "-m", "cudnn_doctor", "check"] + extra, env),
        ("%scheck --json" % label, [python, "-m", "cudnn_doctor", "check", "--json"] + extra, env),
    ]
    if smoke:
        rows.append(("%ssmoke --json" % label, [python, "-m", "cudnn_doctor", "smoke", "--json"], env))
    return rows


def export_ref(ref: str, into: str) -> str:
    """This repository's tree at ``ref`` (git archive, no worktree left behind) under ``into``; its path."""
    tree = os.path.join(into, "baseline")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", ref], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True)
    return tree


def _named(spec: str) -> Tuple[str, str]:
    """(label, absolute tree) from "NAME=DIR" or a plain DIR (labelled by its folder's name)."""
    name, _, tree = spec.rpartition("=")
    tree = os.path.abspath(tree)
    return name or os.path.basename(tree.rstrip(os.sep)) or tree, tree


def fake_root(into: str) -> str:
    """The test suite's cuda12_cudnn9 machine (fake NVIDIA libraries built with gcc) under ``into``; its root."""
    for sub in ("tests", "tests/commands"):
        sys.path.insert(0, os.path.join(REPO, sub))
    sys.path.insert(0, REPO)
    from pathlib import Path

    import test_check_on_fake_machines as machines
    from kit import FakeMachine

    machine = FakeMachine(Path(into) / "root")
    machines.cuda12_cudnn9(machine)
    return str(machine.root)


def timeout_overhead(runs: int, root: Optional[str]) -> None:
    """The probes in-process, with the deadline's worker threads and with plain calls (the old way)."""
    sys.path.insert(0, REPO)
    from cudnn_doctor.host import Host
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.probes import collect, executor

    from serial_probes import plain_call as plain

    real = executor.run_bounded
    times: Dict[str, List[float]] = {"with deadline threads": [], "plain calls": []}
    for i in range(runs * 2):
        which = "with deadline threads" if i % 2 == 0 else "plain calls"
        executor.run_bounded = real if i % 2 == 0 else plain
        import cudnn_doctor.probes as probes_pkg

        probes_pkg.run_bounded = executor.run_bounded  # collect() imports it by name at call time
        start = time.perf_counter()
        collect(Host(root or "/"), compat=load_compat())
        times[which].append((time.perf_counter() - start) * 1e3)
    executor.run_bounded = real
    print()
    print("%-28s %10s %10s  (collect() in-process, %d runs each, interleaved)" % ("probes", "median ms", "min ms",
                                                                               runs))
    for name, values in times.items():
        print("%-28s %10.1f %10.1f" % (name, statistics.median(values), min(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", metavar="[NAME=]DIR", action="append", default=[],
                        help="another source tree to time beside this one (repeatable)")
    parser.add_argument("--baseline-ref", metavar="REF", help="a commit of this repository to time beside it")
    parser.add_argument("--python", metavar="EXE", default=sys.executable, help="the interpreter for this tree")
    parser.add_argument("--baseline-python", metavar="EXE", help="the baselines' interpreter (default: --python)")
    parser.add_argument("--root", metavar="DIR", help="pass --root DIR to check")
    parser.add_argument("--fake-root", action="store_true", help="check the test suite's fake CUDA 12.4 machine")
    parser.add_argument("--timeout-overhead", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="also time `smoke --json` (needs a GPU)")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="check-bench-")
    try:
        if args.baseline_ref:
            args.baseline.append("%s=%s" % (args.baseline_ref, export_ref(args.baseline_ref, scratch)))
        args.baselines = [_named(tree) for tree in args.baseline]
        args.baseline_python = args.baseline_python or args.python
        if args.fake_root:
            args.root = fake_root(scratch)
        bench(args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def bench(args: argparse.Namespace) -> None:
    """Time every row, interleaved, and print the table."""
    # An installed package has its bytecode (pip compiles at install); a source tree may not, and with
    # PYTHONDONTWRITEBYTECODE set every run would compile every module again: time both as installed.
    for tree, python in [(REPO, args.python)] + [(tree, args.baseline_python) for _, tree in args.baselines]:
        if tree:
            subprocess.run([python, "-m", "compileall", "-q", os.path.join(os.path.abspath(tree), "cudnn_doctor")],
                           stdout=subprocess.DEVNULL, env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))
    commands = rows_for("", args.python, REPO, args.root, args.smoke)
    for name, tree in args.baselines:
        commands += rows_for("%s: " % name, args.baseline_python, tree, args.root, args.smoke)
    smi = shutil.which("nvidia-smi")
    if smi:
        commands += [("nvidia-smi", [smi], None),
                     ("nvidia-smi --query-gpu=name", [smi, "--query-gpu=name", "--format=csv,noheader"], None)]
    walls: Dict[str, List[float]] = {name: [] for name, _, _ in commands}
    rss: Dict[str, List[int]] = {name: [] for name, _, _ in commands}
    cpu: Dict[str, List[float]] = {name: [] for name, _, _ in commands}
    report_ms: Dict[str, List[float]] = {}
    for _ in range(args.runs):
        for name, argv, env in commands:
            got = run_once(argv, env)
            if got is None:
                continue
            wall, peak, code, out, seconds = got
            if code not in (0, 1, 4) and "cudnn_doctor" in argv or (code != 0 and "smi" in name):
                continue  # a failed run is not a timing (check's 1 and 4 are completed runs)
            walls[name].append(wall)
            rss[name].append(peak)
            cpu[name].append(seconds)
            if name == "check --json":
                for probe, ms in json.loads(out)["facts"].get("timings_ms", {}).items():
                    report_ms.setdefault(probe, []).append(ms)

    smi_median = statistics.median(walls["nvidia-smi"]) if walls.get("nvidia-smi") else None
    print("%-40s %8s %8s %8s %9s %8s" % ("command (whole process, %d interleaved runs)" % args.runs, "median",
                                          "min", "CPU", "peak RSS", "/ smi"))
    for name, _, _ in commands:
        values = walls[name]
        if not values:
            print("%-40s %8s" % (name, "n/a"))
            continue
        med = statistics.median(values)
        ratio = "%7.1fx" % (med / smi_median) if smi_median else ""
        print("%-40s %7.3fs %7.3fs %7.3fs %7.1fMB %8s" % (name, med, min(values), statistics.median(cpu[name]),
                                                        max(rss[name]) / 1024, ratio))
    if walls.get("check --json") and smi_median:
        med = statistics.median(walls["check --json"])
        print("issue 31's target (check --json <= 0.25 s median and <= 2.5x nvidia-smi): %.3f s, %.1fx: %s" % (
            med, med / smi_median, "met" if med <= 0.25 and med <= 2.5 * smi_median else "NOT met"))
    print()
    trees = [("", args.python, REPO)] + [("%s: " % name, args.baseline_python, tree)
                                            for name, tree in args.baselines]
    for label, python, tree in trees:
        extra = ["--root", args.root] if args.root else []
        own = own_rss_kib(python, tree_env(tree), ["check", "--json"] + extra)
        print("%-40s %s" % ("%scheck --json, own process peak RSS" % label,
                            "%.1fMB" % (own / 1024) if own else "n/a"))
    if args.baselines:
        print()
    for name, _ in args.baselines:
        for suffix in ("check", "check --json", "smoke --json"):
            ours, base = walls.get(suffix), walls.get("%s: %s" % (name, suffix))
            if ours and base:
                print("%-40s %.2f" % ("ratio %s / %s" % (suffix, name), statistics.median(ours) / statistics.median(base)))
    if report_ms:
        print()
        print("the report's own timings (check --json, median ms): " + ", ".join(
            "%s %.1f" % (k, statistics.median(v)) for k, v in sorted(report_ms.items(), key=lambda kv: -max(kv[1]))))
    if args.timeout_overhead:
        timeout_overhead(args.runs, args.root)


if __name__ == "__main__":
    main()
