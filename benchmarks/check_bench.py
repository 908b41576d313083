"""Times `cudnn-doctor check` as a whole process beside nvidia-smi and torch's collect_env; prints a table."""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import List, Optional, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def time_command(argv: Sequence[str], runs: int, env: Optional[dict] = None,
                 ok_codes: Sequence[int] = (0,)) -> Optional[List[float]]:
    """Wall seconds of each run; None when the command cannot run here."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        try:
            proc = subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                  timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return None
        times.append(time.perf_counter() - start)
        if proc.returncode not in ok_codes:
            return None
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = [
        ("cudnn-doctor check", [sys.executable, "-m", "cudnn_doctor", "check"]),
        ("cudnn-doctor check --json", [sys.executable, "-m", "cudnn_doctor", "check", "--json"]),
        ("nvidia-smi", ["nvidia-smi"] if shutil.which("nvidia-smi") else None),
        ("python -m torch.utils.collect_env", [sys.executable, "-m", "torch.utils.collect_env"]),
    ]
    print("%-36s %8s %8s %8s  %s" % ("command", "median", "min", "max", "runs"))
    for name, argv in rows:
        # check exits 1 when it finds an error (a GPU-less machine): that is a completed run.
        ok = (0, 1) if name.startswith("cudnn-doctor") else (0,)
        times = time_command(argv, args.runs, env, ok) if argv else None
        if not times:
            print("%-36s %8s %8s %8s  %s" % (name, "n/a", "", "", "not available here"))
            continue
        print("%-36s %7.3fs %7.3fs %7.3fs  %d" % (name, statistics.median(times), min(times), max(times), len(times)))


if __name__ == "__main__":
    main()
