"""How long `cudnn-doctor explain --no-check` takes on hostile pastes (issue 44: any paste up to 10 MB, one unbroken
token of any length, answered in under 2 s on 2 cores); prints one table, whole processes, medians.

    python3 benchmarks/explain_bench.py [--runs 5]

Beside it the peer: `grep -c` of one pattern over the same file, the floor of reading the text at all.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List


def _log(n_bytes: int) -> str:
    r = random.Random(1)
    lines, size = [], 0
    while size < n_bytes:
        line = "2026-11-28 12:%02d:%02d I trainer/loop.py:%d] step %d loss=%.5f /data/shard-%05d" % (
            r.randrange(60), r.randrange(60), r.randrange(999), size, r.random(), r.randrange(99999))
        lines.append(line)
        size += len(line) + 1
    lines.insert(len(lines) // 2, "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open "
                                  "shared object file: No such file or directory")
    return "\n".join(lines)


def _time(argv: List[str], stdin_path: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        with open(stdin_path, "rb") as stdin:
            start = time.perf_counter()
            subprocess.run(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pastes = {
        "20,000-character token": "A" * 20_000,
        "120,000-character token": "A" * 120_000,
        "1 MB of binary junk": random.Random(2).randbytes(1_000_000).decode("latin-1"),
        "10 MB training log": _log(10_000_000),
    }
    doctor = [sys.executable, "-m", "cudnn_doctor", "explain", "--no-check", "-"]
    print("%-26s %12s %12s" % ("paste", "explain", "grep -c"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in pastes.items():
            path = os.path.join(tmp, "paste.txt")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
            print("%-26s %11.2fs %11.2fs" % (name, _time(doctor, path, args.runs),
                                              _time(["grep", "-c", "libcudnn", path], path, args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
