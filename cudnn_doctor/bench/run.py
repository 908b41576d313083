"""run_bench: the bench child in a process with a time limit, plus the CPU baseline; returns plain data."""
from __future__ import annotations

import ctypes.util
import glob
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..host import Host
from ..knowledge import load_compat
from . import cpu
from .shapes import DIRECTIONS, ConvShape, seed_step_flops

CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_child.py")
NVRTC_GLOBS = ("lib64/libnvrtc.so*", "lib/libnvrtc.so*", "targets/*/lib/libnvrtc.so*")
PIP_NVRTC_GLOBS = ("nvidia/cuda_nvrtc/lib/libnvrtc.so*", "nvidia/cu*/lib/libnvrtc.so*")


@dataclass
class BenchPlan:
    """What one run measures, and how long each part may take."""

    layers: List[ConvShape]
    dtypes: List[str]
    directions: List[str] = field(default_factory=lambda: list(DIRECTIONS))
    seed: bool = True
    cpu: bool = True
    budget_s: float = 50.0  # the child stops starting new layers after this
    target_ms: float = 6.0  # GPU time each timing aims for (a CUDA graph of that many calls)
    seed_target_ms: float = 30.0
    cpu_budget_s: float = 3.0
    workspace_limit: Optional[int] = None
    seed_batch: int = 32  # tests shrink it: the fake cuDNN convolves on the CPU
    min_iters: int = 3  # calls per timing at least
    graph_engines: int = 10  # backend-API engine configurations tried per convolution (torch's benchmark_limit)
    graph_compile: bool = True  # also those that compile their kernel when the plan is built

    def total_steps(self) -> int:
        return (2 if self.seed else 0) + len(self.layers) * len(self.dtypes) * len(self.directions)


def find_nvrtc(toolkit_dirs: Sequence[str] = (), site_dirs: Sequence[str] = ()) -> Optional[str]:
    """A libnvrtc for the plain-CUDA path: the toolkits' copies, pip wheels', then the loader's."""
    for base in list(toolkit_dirs) + ["/usr/local/cuda"]:
        for pattern in NVRTC_GLOBS:
            hits = sorted(p for p in glob.glob(os.path.join(base, pattern)) if "builtins" not in p)
            if hits:
                return hits[-1]
    for base in site_dirs:
        for pattern in PIP_NVRTC_GLOBS:
            hits = sorted(p for p in glob.glob(os.path.join(base, pattern)) if "builtins" not in p)
            if hits:
                return hits[-1]
    name = ctypes.util.find_library("nvrtc")
    return name or None


def _layer_task(shape: ConvShape) -> Dict[str, Any]:
    return {"name": shape.label(), "n": shape.n, "c": shape.c, "h": shape.h, "w": shape.w, "k": shape.k,
            "r": shape.r, "s": shape.s, "stride": shape.stride, "pad": shape.pad}


def run_bench(library: str, plan: BenchPlan, device: int = 0, driver_library: Optional[str] = None,
              nvrtc_library: Optional[str] = None, timeout: float = 120.0,
              on_progress: Optional[Callable[[Dict[str, Any]], None]] = None,
              env: Optional[Dict[str, str]] = None, host: Optional[Host] = None) -> Dict[str, Any]:
    """Run the child (and the CPU baseline alongside it) through ``host`` (the live machine's when none is given),
    with its environment unless ``env`` is given. Never raises for a broken GPU stack: the returned dict carries
    "error" (or "crashed"/"timeout") and the stage it happened in."""
    host = host if host is not None else Host()
    realpath = os.path.realpath(library)
    child_env = dict(host.env if env is None else env)
    with tempfile.TemporaryDirectory(prefix="cudnn-doctor-bench-") as tmp:
        progress = os.path.join(tmp, "progress")
        task = {
            "op": "bench", "lib": realpath, "search_dir": os.path.dirname(realpath), "device": int(device),
            "driver_lib": driver_library, "nvrtc_lib": nvrtc_library, "progress": progress,
            "seed": plan.seed, "layers": [_layer_task(s) for s in plan.layers], "dtypes": list(plan.dtypes),
            "directions": list(plan.directions), "budget_s": plan.budget_s, "target_ms": plan.target_ms,
            "seed_target_ms": plan.seed_target_ms, "seed_batch": plan.seed_batch,
            "min_iters": plan.min_iters,
            "dtype_min_cc": {k: v for k, v in load_compat().gpu_peaks()["dtype_min_cc"].items()
                             if k not in ("source", "status")}, "workspace_limit": plan.workspace_limit,
            "total_steps": plan.total_steps(), "graph_engines": plan.graph_engines,
            "graph_compile": plan.graph_compile,
        }
        box: Dict[str, Any] = {}

        def child() -> None:
            [[box["raw"]]] = host.run_native([[task]], timeout=timeout, task_timeout=timeout, env=child_env,
                                             script=CHILD_SCRIPT)
        worker = threading.Thread(target=child, daemon=True)
        worker.start()
        # The CPU baseline runs here meanwhile: it competes only for host cores the child barely uses.
        cpu_result = cpu.run_cpu(budget_s=plan.cpu_budget_s) if plan.cpu and plan.seed else None
        while worker.is_alive():
            worker.join(0.1)
            if on_progress is not None:
                state = _read(progress)
                if state:
                    on_progress(state)
        raw = dict(box.get("raw") or {"error": {"api": "child", "message": "no result"}})
        if "crashed" in raw or "timeout" in raw:
            state = _read(progress)
            raw = dict(_read(progress + ".known"), **raw)  # what the child knew at its last snapshot
            raw["stage"] = state.get("stage")
    raw["library"] = library
    raw["library_realpath"] = realpath
    raw["nvrtc_library"] = nvrtc_library
    if cpu_result is not None:
        raw.setdefault("seed", {})["cpu"] = cpu_result
    elif plan.seed and raw.get("seed"):
        raw["seed"]["cpu"] = {"skipped": "--no-cpu"}
    if raw.get("seed"):
        raw["seed"]["step_flops"] = seed_step_flops(int(raw["seed"].get("batch", 32)))
    return raw


def _read(path: str) -> Dict[str, Any]:
    try:
        with open(path) as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}
