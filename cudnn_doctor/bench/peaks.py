"""The GPU's datasheet peak per data type (compat/gpu_peaks.toml) and the fraction of it a run reached."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..knowledge import load_compat


@dataclass
class Peak:
    """One row of compat/gpu_peaks.toml: dense TFLOP/s per data type, boost clock, SM count."""

    model: str
    cc: str
    sm_count: int
    boost_mhz: int
    tflops: Dict[str, float] = field(default_factory=dict)
    status: str = "confirmed"

    def for_dtype(self, dtype: str) -> Optional[float]:
        return self.tflops.get(dtype)

    def to_dict(self) -> Dict[str, Any]:
        return {"model": self.model, "cc": self.cc, "sm_count": self.sm_count, "boost_mhz": self.boost_mhz,
                "tflops": dict(self.tflops), "status": self.status}


def _rows(data: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """The [gpus] rows, each carrying its status (the table's unless the row says otherwise)."""
    table = (data if data is not None else load_compat().gpu_peaks())["gpus"]
    return [dict({"status": table.get("status", "confirmed")}, **row) for row in table["rows"]]


def find_peak(name: str, sm_count: Optional[int] = None, data: Optional[Dict[str, Any]] = None) -> Optional[Peak]:
    """The row for a device name as the driver reports it ("NVIDIA H100 80GB HBM3"); None for an unknown GPU.

    The SM count, when known, tells apart boards that share a name (an H100 PCIe reports 114 SMs).
    """
    for row in _rows(data):
        if not any(re.search(p, name or "", re.IGNORECASE) for p in row["match"]):
            continue
        if sm_count and row.get("sm_count") and int(row["sm_count"]) != int(sm_count):
            continue
        return Peak(model=row["model"], cc=row["cc"], sm_count=int(row["sm_count"]), boost_mhz=int(row["boost_mhz"]),
                    tflops={k: float(row[k]) for k in ("fp32", "tf32", "fp16", "bf16") if k in row},
                    status=row["status"])
    return None


def fraction(measured_tflops: Optional[float], peak_tflops: Optional[float]) -> Optional[float]:
    """measured / peak, None when either is unknown."""
    if not measured_tflops or not peak_tflops:
        return None
    return measured_tflops / peak_tflops
