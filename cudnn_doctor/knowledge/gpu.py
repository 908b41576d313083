"""GPU architectures, compute capabilities and forward-compatibility support (compat/gpu_arch.toml)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..versions import major_of, mm, mm_text
from .tables import CONFIRMED, Domain, row_source


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
    first_driver_branch: str = ""
    first_driver_branch_by_cc: Dict[str, str] = field(default_factory=dict)

    def first_cuda_for(self, cc: str) -> str:
        return self.first_cuda_by_cc.get(cc, self.first_cuda)

    def first_driver_for(self, cc: str) -> str:
        """The lowest driver branch that drives a GPU of this compute capability ('' when unknown)."""
        return self.first_driver_branch_by_cc.get(cc, self.first_driver_branch)


@dataclass
class GpuName:
    """A GPU model as NVIDIA's CUDA GPUs list names it."""

    name: str
    cc: str
    kind: str  # data centre, workstation, consumer, jetson, cloud
    status: str
    source: str


# Words a driver or a user may put before a model name that tell nothing about it.
_NOISE = {"nvidia", "geforce", "tesla", "quadro"}


def name_tokens(name: str) -> List[str]:
    """'NVIDIA GeForce RTX4090' -> ['rtx', '4090']: lower case, letters and digits apart, vendor words dropped."""
    words = re.findall(r"[a-z]+|[0-9]+", name.lower())
    return [w for w in words if w not in _NOISE]


def _inside(part: List[str], whole: List[str]) -> bool:
    n = len(part)
    return n > 0 and any(whole[i:i + n] == part for i in range(len(whole) - n + 1))


class GpuKnowledge(Domain):
    """What each GPU generation needs and which CUDA releases still build for it."""

    def architectures(self) -> List[Arch]:
        table = self.table("gpu_arch", "architectures")
        return [Arch(name=r["name"], ccs=list(r["ccs"]), first_cuda=str(r["first_cuda"]),
                     last_cuda=str(r.get("last_cuda", "")), last_driver_branch=str(r.get("last_driver_branch", "")),
                     first_cuda_by_cc=dict(r.get("first_cuda_by_cc", {})), source=str(table.get("source", "")),
                     first_driver_branch=str(r.get("first_driver_branch", "")),
                     first_driver_branch_by_cc=dict(r.get("first_driver_branch_by_cc", {})))
                for r in table.get("rows", [])]

    def gpu_names(self) -> List[GpuName]:
        table = self.table("gpu_arch", "gpu_names")
        out: List[GpuName] = []
        for row in table.get("rows", []):
            status, source = row_source(table, row)
            out.extend(GpuName(n, str(row["cc"]), str(row.get("class", "")), status, source) for n in row["names"])
        return out

    def gpu_by_name(self, name: str) -> Optional[GpuName]:
        """The listed GPU a name means: the longest listed name inside it ('NVIDIA H100 80GB HBM3' is the H100), else
        the one compute capability of every listed name it is part of ('Jetson Orin'); None when it names none."""
        want = name_tokens(name)
        named = [(len(name_tokens(g.name)), g) for g in self.gpu_names() if _inside(name_tokens(g.name), want)]
        if named:
            return max(named, key=lambda pair: pair[0])[1]
        wider = [g for g in self.gpu_names() if _inside(want, name_tokens(g.name))]
        return wider[0] if wider and len({g.cc for g in wider}) == 1 else None

    def driver_drives_gpu(self, driver: str, cc: str) -> Tuple[Optional[bool], str, str]:
        """Whether a driver (a version or a bare branch) supports a GPU at all: its architecture's first driver branch
        and, for architectures NVIDIA retired, its last one. (ok, why, source)."""
        arch, branch, key = self.arch_for_cc(cc), major_of(driver), mm_text(cc) or cc
        if arch is None or branch is None:
            return None, "compute capability %s is not an architecture the knowledge knows" % cc, ""
        table = self.table("gpu_arch", "architectures")
        first, last = arch.first_driver_for(key), arch.last_driver_branch
        where = "driver branch R%d" % branch
        if first and branch < int(first):
            return False, "%s predates %s: compute capability %s needs R%s or newer (the driver of CUDA %s)" % (
                where, arch.name, cc, first, arch.first_cuda_for(key)), str(table.get("first_driver_source"))
        if last and branch > int(last):
            return False, "%s no longer drives %s: R%s was the last branch for compute capability %s" % (
                where, arch.name, last, cc), arch.source
        return True, "%s drives %s (compute capability %s needs R%s%s)" % (
            where, arch.name, cc, first or "?", (" to R%s" % last) if last else " or newer"), \
            str(table.get("first_driver_source"))

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
