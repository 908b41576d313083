"""What starting native work costs: spawn vs fork, one child per copy vs the run's one child; prints a table.

    python3 benchmarks/native_bench.py [--runs 15] [--copies 3]

Rows (medians of interleaved runs, wall milliseconds):
- spawn: a fresh interpreter running native/child.py with no task, with and without -S (site hooks);
- fork: os.fork() of this process (after the doctor's own imports, as `check` would) and _exit in the child;
- the old design: run_native with one child per copy; the new one: one NativeSession, each copy in a fork of it.
Each "copy" is a dlopen of a library that is not there (the call and its error, no vendor code), so the rows
measure the machinery, not cuDNN.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from cudnn_doctor.native.runner import CHILD_SCRIPT, _child_env, run_native  # noqa: E402
from cudnn_doctor.native.session import NativeSession  # noqa: E402
import cudnn_doctor.probes  # noqa: E402,F401  (a parent as large as check's when it forks)


def spawn(flags: List[str]) -> Callable[[], None]:
    env = _child_env(os.environ, [])

    def run() -> None:
        subprocess.run([sys.executable] + flags + [CHILD_SCRIPT], input=b"[]", env=env, check=True,
                       stdout=subprocess.DEVNULL)
    return run


def fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def tasks(copies: int) -> List[dict]:
    return [{"op": "cudart", "lib": "/nonexistent/copy%d/libcudart.so.12" % i} for i in range(copies)]


def old_design(copies: int) -> Callable[[], None]:
    return lambda: run_native([[t] for t in tasks(copies)], timeout=30)


def new_design(copies: int) -> Callable[[], None]:
    def run() -> None:
        session = NativeSession(task_timeout=30)
        session.start()
        session.submit(tasks(copies))
        session.collect(30)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--copies", type=int, default=3)
    args = parser.parse_args()
    rows: Dict[str, Callable[[], None]] = {
        "spawn python child.py": spawn([]),
        "spawn python -S child.py": spawn(["-S"]),
        "fork of the doctor's process": fork,
        "old: one child per copy (%d copies)" % args.copies: old_design(args.copies),
        "new: one child, a fork per copy (%d copies)" % args.copies: new_design(args.copies),
    }
    times: Dict[str, List[float]] = {name: [] for name in rows}
    for _ in range(args.runs):
        for name, fn in rows.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) * 1e3)
    print("%-46s %10s %10s  (%d interleaved runs)" % ("what", "median ms", "min ms", args.runs))
    for name, values in times.items():
        print("%-46s %10.1f %10.1f" % (name, statistics.median(values), min(values)))


if __name__ == "__main__":
    main()
