"""Times `cudnn-doctor fleet` over N good reports plus one poison file (100k-deep, oversized, a FIFO) beside the
same folder without it: what a hostile report costs the merge (wall seconds, CPU seconds, peak memory)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
from fleet_bench import generate, measure  # noqa: E402  (the same generator and measuring wrapper)

POISONS = {
    "none": None,
    "100k-deep [[[[": lambda path: path.write_text("[" * 100_000 + "\n"),
    "200 MiB report": lambda path: path.write_bytes(b'{"pad": "' + b"x" * (200 << 20) + b'"}\n'),
    "FIFO named *.json": lambda path: os.mkfifo(str(path)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="20000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    fleet = [sys.executable, "-m", "cudnn_doctor", "fleet"]
    rows: List[Tuple[str, ...]] = []
    for n in (int(s) for s in args.sizes.split(",")):
        folder = Path(tempfile.mkdtemp(prefix="fleet-hostile-%d-" % n))
        try:
            generate(folder, n)
            for name, make in POISONS.items():
                poison = folder / "zz-poison.json"
                if make:
                    make(poison)
                got = measure(fleet + [str(folder), "--json"], env, args.runs)
                rows.append((str(n), name, "%.2f" % got[0] if got else "failed", "%.2f" % got[1] if got else "-",
                             "%.0f" % got[2] if got else "-"))
                if poison.exists() or poison.is_symlink():
                    poison.unlink()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print("Load average after the runs: %.2f %.2f %.2f on %d cores" % (os.getloadavg() + (os.cpu_count() or 0,)))
    print("| good reports | poison | best wall s (of %d) | best CPU s | peak RSS MiB |" % args.runs)
    print("|---:|---|---:|---:|---:|")
    for row in rows:
        print("| %s |" % " | ".join(row))


if __name__ == "__main__":
    main()
