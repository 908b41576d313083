"""Cold-start timing of the smoke convolution: cudnn-doctor beside PyTorch, each run as a whole new process.

    PYTHONPATH=. python3 benchmarks/smoke_bench.py [--runs 5] [--library PATH] [--python EXE]

Rows that cannot run here (no GPU, no torch) print 'n/a' with the reason.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]

# The same problem as the smoke test (N=2, C=3, 16×16, K=4, 3×3, pad 1), float32 without TF32, timed inside the
# process from before `import torch` to the result on the host.
TORCH_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
try:
    import torch
except ImportError as exc:
    print(json.dumps({"na": "torch is not installed (%s)" % exc})); sys.exit(0)
t_import = time.perf_counter()
if not torch.cuda.is_available():
    print(json.dumps({"na": "torch sees no CUDA GPU"})); sys.exit(0)
torch.backends.cudnn.enabled = True
torch.backends.cudnn.allow_tf32 = False
x = torch.rand(2, 3, 16, 16, device="cuda") * 2 - 1
w = torch.rand(4, 3, 3, 3, device="cuda") * 2 - 1
y = torch.nn.functional.conv2d(x, w, padding=1).cpu()
t_first = time.perf_counter()
ref = torch.nn.functional.conv2d(x.double().cpu(), w.double().cpu(), padding=1)
err = float((y.double() - ref).abs().max() / ref.abs().max())
print(json.dumps({"import_ms": (t_import - t0) * 1e3, "first_ms": (t_first - t0) * 1e3, "rel_error": err,
                  "cudnn": torch.backends.cudnn.version(), "torch": torch.__version__}))
"""


def _timed(argv: Sequence[str], env: dict) -> Tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=str(REPO), env=env, capture_output=True, text=True, timeout=600)
    return (time.perf_counter() - start) * 1e3, proc


def _median(values: List[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def bench_doctor(runs: int, python: str, library: Optional[str]) -> Tuple[List[float], List[float], str]:
    """(whole-process ms, in-child ms to first result, why not) over ``runs`` cold runs."""
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    argv = [python, "-m", "cudnn_doctor", "smoke", "--json"] + (["--library", library] if library else [])
    walls, firsts = [], []
    for _ in range(runs):
        wall, proc = _timed(argv, env)
        try:
            results = json.loads(proc.stdout)["results"]
        except (ValueError, KeyError):
            return [], [], "smoke did not run: %s" % (proc.stderr.strip().splitlines() or ["no output"])[-1]
        failed = [r for r in results if not r["ok"]]
        if not results or failed:
            return [], [], "smoke failed: %s" % (failed[0]["summary"] if failed else "no cuDNN found")
        walls.append(wall)
        firsts.append(results[0]["first_result_ms"])
    return walls, firsts, ""


def bench_torch(runs: int, python: str) -> Tuple[List[float], List[float], List[float], str, dict]:
    """(whole-process ms, import ms, ms to first result inside, why not, last report)."""
    walls, imports, firsts, last = [], [], [], {}
    for _ in range(runs):
        wall, proc = _timed([python, "-c", TORCH_SCRIPT], dict(os.environ))
        try:
            last = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return [], [], [], "torch run failed: %s" % (proc.stderr.strip().splitlines() or ["no output"])[-1], {}
        if "na" in last:
            return [], [], [], last["na"], last
        walls.append(wall)
        imports.append(last["import_ms"])
        firsts.append(last["first_ms"])
    return walls, imports, firsts, "", last


def bench_cpu_reference(runs: int) -> List[float]:
    sys.path.insert(0, str(REPO))
    from cudnn_doctor.smoke import conv_math

    times = []
    for seed in range(runs):
        x, w = conv_math.random_inputs(seed)
        start = time.perf_counter()
        conv_math.reference(x, w)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def _row(label: str, values: List[float], why: str = "") -> str:
    if not values:
        return "%-52s %10s   %s" % (label, "n/a", why)
    return "%-52s %10.1f   min %.1f, max %.1f, n=%d" % (label, _median(values), min(values), max(values), len(values))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold runs per row (median reported)")
    parser.add_argument("--library", help="cuDNN library for cudnn-doctor (default: the loader's choice)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for both (torch must import in it)")
    args = parser.parse_args(argv)

    walls, firsts, why = bench_doctor(args.runs, args.python, args.library)
    t_walls, t_imports, t_firsts, t_why, t_last = bench_torch(args.runs, args.python)
    cpu = bench_cpu_reference(args.runs)

    print("%-52s %10s   %s" % ("median of cold runs", "ms", "spread"))
    print(_row("cudnn-doctor smoke --json (whole process)", walls, why))
    print(_row("  inside the child: dlopen → handle → first result", firsts, why))
    print(_row("PyTorch conv2d (whole process)", t_walls, t_why))
    print(_row("  inside: import torch", t_imports, t_why))
    print(_row("  inside: import torch → first result", t_firsts, t_why))
    print(_row("CPU reference, pure Python double (in process)", cpu))
    if t_last and "na" not in t_last:
        print("\ntorch %s, cuDNN %s, max rel error vs float64 CPU %.1e"
              % (t_last.get("torch"), t_last.get("cudnn"), t_last.get("rel_error", float("nan"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
