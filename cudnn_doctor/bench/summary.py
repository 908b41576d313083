"""Turns the child's raw measurements into the figures bench reports: TFLOP/s, peak fractions, epoch times."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .peaks import Peak, find_peak, fraction
from .shapes import (DIRECTIONS, SEED_BATCH, SEED_EPOCH_IMAGES, SEED_FIGURES_S, SEED_SOURCE, ConvShape,
                     epoch_seconds, tflops, weighted_tflops)

SEED_PATHS = ("cpu", "gpu_plain", "cudnn")


def seed_table(seed: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One row per path: the seed article's epoch time beside the one measured here."""
    batch = int(seed.get("batch", SEED_BATCH))
    flops = seed.get("step_flops")
    rows = []
    cpu_epoch = None
    for path in SEED_PATHS:
        got = seed.get(path) or {}
        row: Dict[str, Any] = {"path": path, "seed_epoch_s": SEED_FIGURES_S[path]}
        if "step_ms" in got:
            row["step_ms"] = got["step_ms"]
            row["epoch_s"] = epoch_seconds(got["step_ms"] / 1000.0, batch, SEED_EPOCH_IMAGES)
            if flops:
                row["tflops"] = tflops(flops, got["step_ms"] / 1000.0)
            if "checks" in got:
                row["checked_ops"] = len(got["checks"])
                row["correct"] = bool(got.get("ok"))
        else:
            row["skipped"] = got.get("skipped") or (got.get("error") or {}).get("message") or "not run"
        if path == "cpu":
            cpu_epoch = row.get("epoch_s")
        if cpu_epoch and row.get("epoch_s"):
            row["speedup_vs_cpu"] = cpu_epoch / row["epoch_s"]
        row["seed_speedup_vs_cpu"] = SEED_FIGURES_S["cpu"] / SEED_FIGURES_S[path]
        rows.append(row)
    return rows


def layer_rows(raw_rows: List[Dict[str, Any]], shapes: List[ConvShape], peak: Optional[Peak]) -> List[Dict[str, Any]]:
    """Per layer and data type: each direction's algorithm, time, TFLOP/s, fraction of peak, workspace, and the
    fastest algorithm without workspace with its slowdown."""
    by_name = {s.label(): s for s in shapes}
    out = []
    for raw in raw_rows:
        shape = by_name.get(str(raw.get("layer")))
        if shape is None:
            continue
        row: Dict[str, Any] = {"layer": raw["layer"], "dtype": raw["dtype"], "layout": raw.get("layout"),
                               "shape": shape.to_dict()}
        for key in ("skipped", "error"):
            if key in raw:
                row[key] = raw[key]
        for direction in DIRECTIONS:
            got = raw.get(direction)
            if not got:
                continue
            if "error" in got:
                row[direction] = {"error": got["error"]}
                continue
            seconds = got["time_ms"] / 1000.0
            entry = {"algo": got["algo"], "math": got.get("math"), "layout": got.get("layout"),
                     "time_ms": got["time_ms"], "tflops": tflops(shape.flops(), seconds),
                     "workspace": got["workspace"], "check": got["check"], "timing": got.get("timing"),
                     "candidates": got.get("candidates") or [], "graph": got.get("graph"),
                     "legacy": got.get("legacy"), "spent_ms": got.get("spent_ms"), "close_ms": got.get("close_ms")}
            peak_value = peak.for_dtype(raw["dtype"]) if peak else None
            entry["peak_fraction"] = fraction(entry["tflops"], peak_value)
            no_ws = got.get("no_workspace")
            if no_ws:
                entry["no_workspace"] = dict(no_ws)
            else:
                entry["no_workspace"] = None
            row[direction] = entry
        out.append(row)
    return out


def totals(rows: List[Dict[str, Any]], shapes: List[ConvShape], peak: Optional[Peak]) -> List[Dict[str, Any]]:
    """All layers together, per data type and direction, each layer weighted by how often the network uses it."""
    by_name = {s.label(): s for s in shapes}
    out = []
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    for dtype in dtypes:
        for direction in DIRECTIONS:
            timed, no_ws = [], []
            for row in rows:
                entry = row.get(direction)
                if row["dtype"] != dtype or not entry or "time_ms" not in entry:
                    continue
                shape = by_name[row["layer"]]
                timed.append((shape, entry["time_ms"] / 1000.0))
                if entry.get("no_workspace"):
                    no_ws.append((shape, entry["no_workspace"]["time_ms"] / 1000.0))
            if not timed:
                continue
            value = weighted_tflops(timed)
            peak_value = peak.for_dtype(dtype) if peak else None
            item = {"dtype": dtype, "direction": direction, "layers": len(timed), "tflops": value,
                    "peak_tflops": peak_value, "peak_fraction": fraction(value, peak_value),
                    "max_workspace": max(row.get(direction, {}).get("workspace", 0) or 0 for row in rows
                                         if row["dtype"] == dtype)}
            if len(no_ws) == len(timed):
                item["no_workspace_tflops"] = weighted_tflops(no_ws)
                nws = item["no_workspace_tflops"]
                item["no_workspace_slowdown"] = value / nws if nws else None
            out.append(item)
    return out


def gpu_peak(raw: Dict[str, Any]) -> Optional[Peak]:
    device = raw.get("device") or {}
    return find_peak(device.get("name") or "", device.get("sm_count"))


def source_note() -> str:
    return SEED_SOURCE
