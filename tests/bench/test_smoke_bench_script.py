"""benchmarks/smoke_bench.py prints its whole table anywhere, with 'n/a' rows where torch or a GPU is missing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_prints_every_row_even_without_gpu_or_torch(tmp_path):
    not_cudnn = tmp_path / "libcudnn.so.9"
    not_cudnn.write_bytes(b"\x7fELF" + b"\0" * 60)  # passes the CLI's check, fails to load: a fast failing row
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "smoke_bench.py"), "--runs", "1",
                           "--library", str(not_cudnn)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for label in ("cudnn-doctor smoke --json", "inside the child", "PyTorch conv2d", "inside: import torch",
                  "CPU reference"):
        assert any(line.startswith(label) or line.strip().startswith(label) for line in lines), label
    doctor = next(line for line in lines if line.startswith("cudnn-doctor smoke"))
    assert " n/a " in doctor and "cannot be loaded" in doctor
