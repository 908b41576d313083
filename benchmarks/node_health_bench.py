"""What the node checks add to `check`: NVML's health and topology reads, the readiness kernel, beside nvidia-smi.

    python3 benchmarks/node_health_bench.py [--runs 7] [--nvml PATH] [--cuda PATH] [--no-ready]

Rows (medians of interleaved runs, wall milliseconds; the GPU count is NVML's):
- reads only: every GPU's health reads and every pair's P2P/topology reads in this process, NVML already started
  (the budget: at most 50 ms on 8 GPUs);
- session nvml / nvml + gpu_health: the run's native child answering check's NVML task alone, then with the health
  task beside it (each in its own fork, side by side, as check runs them): the difference is what check waits more;
- node + container-runtime probes: the file-system side (kernel log, IOMMU, ACS, runtime configs), from check's
  own per-probe timings under --root /;
- ready: check --ready's kernel on every GPU (cuInit, context, PTX load, launch, read back), all GPUs side by side;
- nvidia-smi -q, nvidia-smi topo -m: the tools an operator runs for the same answers.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Callable, Dict, List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "cudnn_doctor", "native"))  # the child's own modules, as the child imports them

from cudnn_doctor.native.session import NativeSession  # noqa: E402


def _ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def reads_only(nvml: Optional[str]) -> Callable[[], object]:
    import ctypes

    import pynvml
    from gpu_health import node_health

    if nvml:
        pynvml.nvmlLib = ctypes.CDLL(nvml)
    pynvml.nvmlInit()
    return lambda: node_health(pynvml)


def session(tasks: List[dict]) -> Callable[[], object]:
    def run() -> List[dict]:
        s = NativeSession(task_timeout=20)
        s.start()
        s.submit(tasks)
        results = s.collect(30)
        bad = [r for r in results if r.get("crashed") or r.get("timeout") or r.get("init_error")]
        if bad:
            raise SystemExit("native task failed: %s" % bad[0])
        return results
    return run


def probe_timings() -> Dict[str, float]:
    from cudnn_doctor.diagnose import collect_facts

    facts = collect_facts("/")
    return {k: facts.timings_ms.get(k, 0.0) for k in ("node", "container-runtime", "node-health")}


def command(argv: List[str]) -> Optional[Callable[[], object]]:
    if not shutil.which(argv[0]):
        return None
    return lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--nvml", help="libnvidia-ml to use (default: the loader's libnvidia-ml.so.1)")
    parser.add_argument("--cuda", default="libcuda.so.1", help="libcuda for the readiness rows")
    parser.add_argument("--no-ready", action="store_true", help="leave out the readiness kernel")
    args = parser.parse_args()
    try:
        reads = reads_only(args.nvml)
    except Exception as exc:  # no driver here: nothing to measure
        print("NVML does not start here (%s): nothing to measure" % exc)
        return 0
    import pynvml

    gpus = pynvml.nvmlDeviceGetCount()
    nvml_task = {"op": "nvml", "lib": args.nvml}
    rows: Dict[str, Optional[Callable[[], object]]] = {
        "reads only (in process, NVML started)": reads,
        "session: nvml task": session([nvml_task]),
        "session: nvml + gpu_health tasks": session([nvml_task, {"op": "gpu_health", "lib": args.nvml}]),
        "nvidia-smi -q": command(["nvidia-smi", "-q"]),
        "nvidia-smi topo -m": command(["nvidia-smi", "topo", "-m"]),
    }
    if not args.no_ready:
        rows["ready: kernel on every GPU"] = session([{"op": "cuda_ready", "lib": args.cuda,
                                                       "gpus": [{"index": i} for i in range(gpus)]}])
    times: Dict[str, List[float]] = {name: [] for name, fn in rows.items() if fn is not None}
    for _ in range(args.runs):  # interleaved: a slow moment of the machine hits every row alike
        for name in times:
            times[name].append(_ms(rows[name]))  # type: ignore[misc]
    probes = probe_timings()
    width = max(len(n) for n in times) + 2
    print("node health on %d GPU%s (%s), %d runs, wall ms" % (gpus, "" if gpus == 1 else "s",
                                                               pynvml.nvmlSystemGetDriverVersion(), args.runs))
    print("%-*s %10s %10s" % (width, "", "median", "min"))
    for name, values in times.items():
        print("%-*s %10.1f %10.1f" % (width, name, statistics.median(values), min(values)))
    added = statistics.median(times["session: nvml + gpu_health tasks"]) - statistics.median(
        times["session: nvml task"])
    print("%-*s %10.1f" % (width, "check waits more for gpu_health", added))
    print("%-*s %10.1f" % (width, "node + container-runtime probes", probes["node"] + probes["container-runtime"]))
    print("budget: the health and topology reads add at most 50 ms to check on 8 GPUs: reads %.1f ms, %s"
          % (statistics.median(times[next(iter(times))]), "within" if statistics.median(
              times[next(iter(times))]) <= 50 else "OVER"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
