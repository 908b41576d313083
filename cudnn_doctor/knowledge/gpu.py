"""GPU architectures, compute capabilities and forward-compatibility support (compat/gpu_arch.toml)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional

from ..versions import major_of, mm, mm_text
from .tables import CONFIRMED, Tables, row_source


@dataclass
class CcFloor:
    """The lowest compute capability; low < high when the exact value is not confirmed."""

    low: str
    high: str
    status: str = CONFIRMED
    source: str = ""

    @property
    def known(self) -> bool:
        return self.low == self.high


@dataclass
class Arch:
    name: str
    ccs: List[str]
    first_cuda: str
    last_cuda: str
    last_driver_branch: str
    first_cuda_by_cc: Dict[str, str] = field(default_factory=dict)
    source: str = ""

    def first_cuda_for(self, cc: str) -> str:
        return self.first_cuda_by_cc.get(cc, self.first_cuda)


class GpuKnowledge(Tables):
    """What each GPU generation needs and which CUDA releases still build for it."""

    def architectures(self) -> List[Arch]:
        table = self.table("gpu_arch", "architectures")
        return [Arch(name=r["name"], ccs=list(r["ccs"]), first_cuda=str(r["first_cuda"]),
                     last_cuda=str(r.get("last_cuda", "")), last_driver_branch=str(r.get("last_driver_branch", "")),
                     first_cuda_by_cc=dict(r.get("first_cuda_by_cc", {})), source=str(table.get("source", "")))
                for r in table.get("rows", [])]

    def arch_for_cc(self, cc: Optional[str]) -> Optional[Arch]:
        want = mm_text(cc)
        for arch in self.architectures():
            if want in arch.ccs:
                return arch
        return None

    def cuda_min_cc(self, cuda_major: Any) -> Optional[CcFloor]:
        table = self.table("gpu_arch", "cuda_min_cc")
        for row in table.get("rows", []):
            if str(row["cuda_major"]) == str(major_of(cuda_major)):
                status, source = row_source(table, row)
                return CcFloor(str(row["min_cc"]), str(row["min_cc"]), status, source)
        return None

    def first_cuda_for_cc(self, cc: Optional[str]) -> Optional[str]:
        arch, text = self.arch_for_cc(cc), mm_text(cc)
        return arch.first_cuda_for(text) if arch and text else None

    def forward_compat_gpu(self, name: Optional[str]) -> Optional[bool]:
        """True: forward compatibility supported; False: not (GeForce); None: cannot tell from the name."""
        if not name:
            return None
        table = self.table("gpu_arch", "forward_compat_gpu_names")
        padded = " %s " % name
        if any(p.lower() in padded.lower() for p in table.get("unsupported", [])):
            return False
        for pattern in table.get("supported", []):
            if re.search(r"(?<![A-Za-z0-9])%s(?![0-9])" % re.escape(pattern.strip()), name, re.I):
                return True
        return None

    def sass_runs(self, arch_list: Iterable[str], ptx: Optional[str], cc: Optional[str]) -> bool:
        """Whether a binary with SASS for `arch_list` (plus PTX for `ptx`) has code for a GPU of `cc`."""
        gpu = mm(cc)
        if gpu is None:
            return True
        for a in arch_list:
            built = mm(a)
            if built and built[0] == gpu[0] and built[1] <= gpu[1]:
                return True
        p = mm(ptx) if ptx else None
        return bool(p and p <= gpu)
