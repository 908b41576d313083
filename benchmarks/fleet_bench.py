"""Times `cudnn-doctor fleet` on 1k/10k/50k generated node reports (wall seconds, peak memory) beside cat and jq."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # the report generator shared with the tests
sys.path.insert(0, str(REPO))


def measure(argv: Sequence[str], env: dict, runs: int) -> Optional[Tuple[float, float, float]]:
    """(best wall seconds, best CPU seconds, peak RSS MiB) over runs. CPU time (user + system) is the figure that
    does not depend on what else loads the machine; each run is a fresh process measured by a small wrapper,
    because RUSAGE_CHILDREN of this process would mix the runs."""
    best, cpu, peak = None, None, 0.0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode not in (0, 1):
            sys.stderr.write("%s failed: %s\n" % (argv[0], proc.stderr[-500:]))
            return None
        used, rss = (float(x) for x in proc.stderr.strip().splitlines()[-1].split())
        best = wall if best is None else min(best, wall)
        cpu = used if cpu is None else min(cpu, used)
        peak = max(peak, rss)
    return best, cpu, peak


_WRAPPER = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stderr.write('\\n%.3f %.1f\\n' % (u.ru_utime + u.ru_stime, u.ru_maxrss / 1024.0))\n"
    "sys.exit(p.returncode)\n"
)


def generate(folder: Path, n: int, edit: Optional[Callable[[dict], dict]] = None) -> int:
    """n reports written into folder (edit, if given, changes each first); returns their total size."""
    from fleet_factory import fleet_reports

    from cudnn_doctor.render.envelope import dumps

    size = 0
    for host, doc in fleet_reports(n, seed=n):
        if edit is not None:
            doc = edit(doc)
        text = dumps(doc) + "\n"  # exactly as `check --json` writes it
        size += len(text)
        (folder / ("%s.json" % host)).write_text(text)
    return size


def table_row(n: int, size: int, name: str, got: Optional[Tuple[float, float, float]]) -> Tuple[str, ...]:
    """One table row: reports, MiB of JSON, command, then measure()'s figures (n/a where it failed)."""
    return (str(n), "%.0f" % (size / 2**20), name, "%.2f" % got[0] if got else "n/a",
            "%.2f" % got[1] if got else "n/a", "%.0f" % got[2] if got else "n/a")


def print_table(rows: List[Tuple[str, ...]], runs: int) -> None:
    print("| reports | MiB of JSON | command | best wall s (of %d) | best CPU s | peak RSS MiB |" % runs)
    print("|---:|---:|---|---:|---:|---:|")
    for row in rows:
        print("| %s |" % " | ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    fleet = [sys.executable, "-m", "cudnn_doctor", "fleet"]
    rows: List[Tuple[str, ...]] = []
    load = os.getloadavg()
    for n in (int(s) for s in args.sizes.split(",")):
        folder = Path(tempfile.mkdtemp(prefix="fleet-bench-%d-" % n))
        try:
            size = generate(folder, n)
            tools = [("cudnn-doctor fleet DIR", fleet + [str(folder)]),
                     ("cudnn-doctor fleet DIR --json", fleet + [str(folder), "--json"]),
                     # find ... -exec + : 50,000 names do not fit one command line
                     ("cat every report (read floor)",
                      ["sh", "-c", "find %s -name '*.json' -exec cat {} + > /dev/null" % folder])]
            if shutil.which("jq"):
                tools.append(("jq -c .verdict on every report",
                              ["sh", "-c", "find %s -name '*.json' -exec jq -c .verdict {} +" % folder]))
            for name, argv in tools:
                rows.append(table_row(n, size, name, measure(argv, env, args.runs)))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print("Load average before the runs: %.2f %.2f %.2f on %d cores" % (load + (os.cpu_count() or 0,)))
    print("Load average after the runs: %.2f %.2f %.2f" % os.getloadavg())
    print_table(rows, args.runs)


if __name__ == "__main__":
    main()
