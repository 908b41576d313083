"""A bench run as a BenchResult: the child's raw measurements, the derived tables and the CD95x findings."""
from __future__ import annotations

from typing import Any, Dict, Mapping

from ..run_results import BenchResult
from . import summary
from .verdicts import judge


def build_result(raw: Dict[str, Any], plan, duration_s: float, env: Mapping[str, str]) -> BenchResult:
    """What the bench child measured, with the derived figures and the CD95x findings."""
    peak = summary.gpu_peak(raw)
    device = raw.get("device") or {}
    layers = summary.layer_rows(raw.get("layers", []), plan.layers, peak)
    report: Dict[str, Any] = {
        "gpu": {k: device.get(k) for k in ("index", "name", "cc", "sm_count", "memory_free", "memory_total")},
        "cudnn": {"library": raw.get("library"), "realpath": raw.get("library_realpath"),
                  "version": raw.get("version"), "graph_api": raw.get("graph_api")},
        "driver_cuda_version": raw.get("driver_cuda_version"),
        "nvml": raw.get("nvml") or {},
        "peak": peak.to_dict() if peak else None,
        "seed": summary.seed_table(raw["seed"]) if raw.get("seed") else [],
        "seed_raw": raw.get("seed") or {},
        "seed_source": summary.source_note(),
        "layers": layers,
        "totals": summary.totals(layers, plan.layers, peak),
        "workspace_limit": raw.get("workspace_limit"),
        "timing": "CUDA graph of N calls, timed with CUDA events" if not raw.get("capture_error")
        else "timed loop (graph capture failed: %s)" % raw["capture_error"],
        "nvrtc_library": raw.get("nvrtc_library"),
        "plan": {"layers": [s.label() for s in plan.layers], "dtypes": plan.dtypes, "directions": plan.directions},
        "duration_s": round(duration_s, 2),
        "child_timings_ms": raw.get("timings") or {},  # where the child's time went: start, seed, layers
    }
    if raw.get("error") or raw.get("crashed") or raw.get("timeout"):
        report["error"] = raw.get("error") or {"crashed": raw.get("crashed"), "timeout": raw.get("timeout"),
                                               "stage": raw.get("stage")}
    result = BenchResult(**report)
    result.findings = judge(result, env)
    return result
