"""The pair question: does cuDNN X work with CUDA Y (and driver Z, on a GPU of compute capability W)?

One answer for everyone: `matrix --cuda --cudnn`, check's rules, install's CUDA-match line and explain all reach
the same two questions underneath, cudnn_cuda_verdict() (the build against the toolkit) and driver_runs_cuda()
(the driver against the toolkit); this module only puts them and the GPU checks together, with sources."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..versions import cuda_label, major_of, mm, mm_before, mm_of, mm_text, release3, release3_of, ver
from .cudnn import CudnnBuild, CudnnKnowledge
from .cudnn_fit import CudnnFitKnowledge
from .derived import DerivedKnowledge
from .driver import DriverKnowledge
from .gpu import GpuKnowledge
from .reference import ReferenceKnowledge
from .tables import Domain, Tables

WORKS = "works"
WORKS_MVC = "works through minor-version compatibility"
DOES_NOT = "does not work"
CANNOT_TELL = "cannot tell"


@dataclass
class Reason:
    """One step of a verdict: what was checked, what it found, and where that comes from."""

    check: str  # "cudnn-cuda", "driver", "gpu", "knowledge"
    ok: Optional[bool]
    text: str
    source: str = ""
    via_mvc: bool = False

    def to_dict(self) -> Dict[str, Any]:
        return {"check": self.check, "ok": self.ok, "text": self.text, "source": self.source,
                "minor_version_compatibility": self.via_mvc}


@dataclass
class PairVerdict:
    cudnn: str
    cuda: str
    build: str = ""  # the build variant judged ("cuda12")
    driver: Optional[str] = None
    platform: str = "linux"
    cc: Optional[str] = None
    reasons: List[Reason] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        oks = [r.ok for r in self.reasons]
        if False in oks:
            return DOES_NOT
        if None in oks or not oks:
            return CANNOT_TELL
        return WORKS_MVC if any(r.via_mvc for r in self.reasons) else WORKS

    @property
    def ok(self) -> Optional[bool]:
        return {WORKS: True, WORKS_MVC: True, DOES_NOT: False}.get(self.verdict)

    def to_dict(self) -> Dict[str, Any]:
        return {"cudnn": self.cudnn, "cuda": self.cuda, "build": self.build, "driver": self.driver,
                "platform": self.platform, "cc": self.cc, "verdict": self.verdict, "ok": self.ok,
                "reasons": [r.to_dict() for r in self.reasons]}


class PairKnowledge(Domain):
    """The cuDNN x CUDA x driver x GPU verdict."""

    def __init__(self, tables: Tables, cudnn: CudnnKnowledge, fit: CudnnFitKnowledge, drivers: DriverKnowledge,
                 gpus: GpuKnowledge, published: DerivedKnowledge, reference: ReferenceKnowledge) -> None:
        super().__init__(tables)
        self.cudnn = cudnn
        self.fit = fit
        self.drivers = drivers
        self.gpus = gpus
        self.published = published
        self.reference = reference

    def build_for(self, cudnn: str, cuda: str) -> Optional[CudnnBuild]:
        """The build of a cuDNN release meant for this CUDA: the per-minor one that names it, else the one per
        major; None when no row describes one."""
        major = major_of(cuda)
        builds = [b for b in self.cudnn.cudnn_builds(cudnn) if b.cuda_major == major]
        exact = [b for b in builds if mm_text(cuda) in b.cuda]
        family = [b for b in builds if b.family]
        found = exact or family or builds
        return found[0] if found else None

    def pair_verdict(self, cuda: str, cudnn: str, driver: Optional[str] = None, platform: str = "linux",
                     cc: Optional[str] = None) -> PairVerdict:
        want = mm_text(cuda) or str(cuda)
        out = PairVerdict(cudnn=str(release3(cudnn) or cudnn), cuda=want, driver=driver, platform=platform, cc=cc)
        if not self._known_enough(out):
            return out
        build = self.build_for(cudnn, want)
        out.build = build.variant if build else "cuda%s" % major_of(want)
        if build is None and not self._has_build_for_major(out.cudnn, major_of(want)):
            era = self.cudnn.variant_era(major_of(want) or 0)
            out.reasons.append(Reason("cudnn-cuda", False, "cuDNN %s has no build for CUDA %s (it was built for CUDA "
                                      "%s)." % (out.cudnn, major_of(want), ", ".join(
                                          "%d.x" % m for m in self._build_majors(out.cudnn))),
                                      era["source"] if era else self.cudnn.family_source()))
        else:
            ok, why = self.fit.cudnn_cuda_verdict(cudnn, build.variant[4:] if build else str(major_of(want)), want)
            via = ok is True and "minor-version compatibility" in why
            out.reasons.append(Reason("cudnn-cuda", ok, why, build.source if build else self.cudnn.family_source(),
                                      via))
        if driver:
            out.reasons.extend(self._driver_reasons(want, driver, platform, build))
        if cc:
            out.reasons.extend(self._gpu_reasons(want, cudnn, cc, build))
        out.reasons.extend(self._driver_gpu_reasons(driver, cc))
        return out

    def _build_majors(self, cudnn: str) -> List[int]:
        rows = {b.cuda_major for b in self.cudnn.cudnn_builds(cudnn) if b.cuda_major is not None}
        return sorted(rows | set(self.published.cudnn_release_cuda_majors(cudnn)))

    def _has_build_for_major(self, cudnn: str, major: Optional[int]) -> bool:
        """Whether a release was built for a CUDA major: its rows or PyPI/manifests say so, or (releases the
        derived knowledge does not list) the major's era of builds covers it."""
        majors = self._build_majors(cudnn)
        if majors:
            return major in majors
        era = self.cudnn.variant_era(major or 0)
        r = release3(cudnn)
        return bool(era and r and release3_of(era["first"]) <= r and (not era["last"] or r <= release3_of(era["last"])))

    def _known_enough(self, out: PairVerdict) -> bool:
        """False (with the reason) when the release is one the knowledge cannot judge."""
        if release3(out.cudnn) is None or mm(out.cuda) is None:
            out.reasons.append(Reason("knowledge", None, "cuDNN %r or CUDA %r is not a version." % (
                out.cudnn, out.cuda)))
            return False
        if self.cudnn.cudnn_release_known(out.cudnn) or self.cudnn.cudnn_builds(out.cudnn):
            return True
        newer = self.published.is_newer_than_knowledge("cudnn", out.cudnn)
        out.reasons.append(Reason(
            "knowledge", None, "cuDNN %s is %s the knowledge (dated %s, newest release %s)%s." % (
                out.cudnn, "newer than" if newer else "not a release in", self.published.knowledge_date() or "?",
                self.published.newest_cudnn_release() or "?", ": run `cudnn-doctor update`" if newer else ""),
            "; ".join(self.published.knowledge_sources()[:3])))
        return False

    def _driver_reasons(self, cuda: str, driver: str, platform: str, build: Optional[CudnnBuild]) -> List[Reason]:
        # A bare branch ("580") means any driver of that branch: judge its newest release.
        probe = "%s.9999.9999" % driver if driver.strip().isdigit() else driver
        ok, how, floor = self.drivers.driver_runs_cuda(probe, cuda, platform)
        where = "driver %s" % (("branch R%s" % driver) if driver.strip().isdigit() else driver)
        out = []
        if ok is None:
            out.append(Reason("driver", None, "Cannot tell whether %s runs CUDA %s: %s." % (where, cuda, how),
                              floor.source if floor else ""))
        elif ok:
            out.append(Reason("driver", True, "%s runs CUDA %s (%s; needs %s)." % (
                where, cuda, how if how != "exact" else "its own driver floor", floor.text() if floor else "?"),
                floor.source if floor else "", how == "minor-version compatibility"))
        else:
            out.append(Reason("driver", False, "%s is too old for CUDA %s (needs %s)." % (
                where, cuda, floor.text() if floor else "a newer driver"), floor.source if floor else ""))
        if build is None:
            return out
        need = build.driver_windows if platform == "windows" else build.driver_linux
        d, floor_version = ver(probe), ver(need)
        if d is not None and floor_version is not None and d < floor_version:  # ver("N/A") is None
            out.append(Reason("driver", False, "cuDNN %s's %s build lists driver >= %s; %s is older." % (
                build.releases_text(), build.variant, need, where), build.source))
        return out

    def _gpu_reasons(self, cuda: str, cudnn: str, cc: str, build: Optional[CudnnBuild]) -> List[Reason]:
        """`cuda` is a major.minor text (pair_verdict checked it)."""
        if mm(cc) is None:
            return [Reason("gpu", None, "compute capability %r is not a version" % cc)]
        out = self.cudnn_gpu_reasons(cudnn, cc, build)
        out.extend(self.cuda_gpu_reasons(cuda, cc))
        bw = self.cudnn.blackwell_cuda12()
        if (major_of(cuda) == 12 and mm_text(cc) in bw.get("ccs", []) and mm_before(cuda, bw.get("min_cuda"))
                and major_of(release3(cudnn)) == 9):
            out.append(Reason("gpu", False, "Blackwell (compute capability %s) needs cuDNN's CUDA 12 build with CUDA "
                              "%s or newer." % (cc, bw.get("min_cuda")), str(bw.get("source", ""))))
        return out

    def cudnn_gpu_reasons(self, cudnn: str, cc: str, build: Optional[CudnnBuild] = None) -> List[Reason]:
        """Whether a cuDNN release (its build `build`, else the release's rows and eras) has code for a GPU of
        compute capability `cc`: [] where the knowledge gives no floor."""
        have = mm_of(cc)
        floor = build.min_cc if build and build.min_cc else self.cudnn.cudnn_min_cc(cudnn)
        if floor and floor.known:
            fits = have >= mm_of(floor.low)
            return [Reason("gpu", fits, "cuDNN %s %s GPUs of compute capability %s and newer; this one is %s." % (
                cudnn, "supports" if fits else "supports only", floor.low, cc), floor.source)]
        if floor:
            below, above = have < mm_of(floor.low), have >= mm_of(floor.high)
            return [Reason("gpu", False if below else (True if above else None),
                           "cuDNN %s's lowest compute capability is between %s and %s (unconfirmed); this GPU is %s."
                           % (cudnn, floor.low, floor.high, cc), floor.source)]
        return []

    def cuda_gpu_reasons(self, cuda: str, cc: str) -> List[Reason]:
        """Whether a CUDA release has code for a GPU: not before its architecture, not after CUDA dropped it."""
        out: List[Reason] = []
        first = self.gpus.first_cuda_for_cc(cc)
        if first and mm_before(cuda, first):
            out.append(Reason("gpu", False, "Compute capability %s needs CUDA %s or newer; CUDA %s has no code for "
                              "it." % (cc, first, cuda), self.reference.architectures_source()))
        cuda_floor = self.gpus.cuda_min_cc(major_of(cuda))
        if cuda_floor and mm_before(cc, cuda_floor.low):
            out.append(Reason("gpu", False, "CUDA %s builds for compute capability %s and newer; this GPU is %s."
                              % (major_of(cuda), cuda_floor.low, cc), cuda_floor.source))
        return out

    def cuda_driver_verdict(self, cuda: str, driver: Optional[str], platform: str = "linux",
                            cc: Optional[str] = None) -> PairVerdict:
        """CUDA with a driver (and a GPU), without a cuDNN: `matrix --cuda 12.8 --driver 550`."""
        want = mm_text(cuda) or str(cuda)
        out = PairVerdict(cudnn="", cuda=want, driver=driver, platform=platform, cc=cc)
        if driver:
            out.reasons.extend(self._driver_reasons(want, driver, platform, None))
        if cc:
            out.reasons.extend(self.cuda_gpu_reasons(want, cc))
        out.reasons.extend(self._driver_gpu_reasons(driver, cc))
        return out

    def _driver_gpu_reasons(self, driver: Optional[str], cc: Optional[str]) -> List[Reason]:
        """Whether the driver drives the GPU at all (R470 has no Hopper, R550 no Blackwell); [] without both."""
        if not (driver and cc):
            return []
        ok, why, source = self.gpus.driver_drives_gpu(driver, cc)
        return [Reason("driver", ok, why + ".", source)]

    def cc_for_gpu(self, name: str) -> Optional[str]:
        """The compute capability of a GPU by name, as a user or the driver names it ('RTX 4090', 'NVIDIA H100 80GB
        HBM3'), from NVIDIA's CUDA GPUs list (gpu_names), else the data-centre models of gpu_peaks; None otherwise."""
        listed = self.gpus.gpu_by_name(name)
        if listed is not None:
            return listed.cc
        for row in self.table("gpu_peaks", "gpus").get("rows", []):
            if any(re.search(p, name, re.I) for p in row.get("match", [])):
                return str(row["cc"])
        return None
