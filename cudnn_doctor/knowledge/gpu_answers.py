"""matrix's one-GPU questions: a GPU with a driver (which CUDA and cuDNN it can run, or which branch it needs), with
a CUDA release (does the toolkit build code for it; which driver), with a cuDNN release (does the release ship code
for it). Every step is one of the pair question's own (knowledge/pair.py: driver_drives_gpu, driver_runs_cuda,
cuda_gpu_reasons, cudnn_gpu_reasons, pair_verdict), so the answers agree with `matrix --cuda --cudnn` and check's
rules; each reason carries its source."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from packaging.version import Version

from ..versions import major_of, mm_of
from .pair import CANNOT_TELL, DOES_NOT, WORKS, PairKnowledge, Reason


@dataclass
class GpuAnswer:
    """The reasons (checked, ok or not) and the CUDA/cuDNN that fit this GPU, newest per CUDA major."""

    cc: str
    reasons: List[Reason] = field(default_factory=list)
    fits: List[Dict[str, Any]] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        oks = [r.ok for r in self.reasons]
        return DOES_NOT if False in oks else (CANNOT_TELL if None in oks or not oks else WORKS)

    @property
    def ok(self) -> Optional[bool]:
        return {WORKS: True, DOES_NOT: False}.get(self.verdict)

    def to_dict(self) -> Dict[str, Any]:
        return {"cc": self.cc, "verdict": self.verdict, "ok": self.ok,
                "reasons": [r.to_dict() for r in self.reasons], "fits": self.fits}


def _branch_probe(driver: str) -> str:
    """A bare branch ('550') means any driver of it: judged by its newest release, as pair_verdict does."""
    return "%s.9999.9999" % driver.strip() if driver.strip().isdigit() else driver


def _where(driver: str) -> str:
    return "driver branch R%s" % driver.strip() if driver.strip().isdigit() else "driver %s" % driver


def newest_cudnn(pairs: PairKnowledge, cuda: str, cc: str, driver: Optional[str], platform: str
                 ) -> Optional[Tuple[str, str]]:
    """(release, source) of the newest cuDNN whose build for `cuda` the pair question passes on this GPU (and
    driver); None when none does."""
    for release in sorted(pairs.cudnn.cudnn_releases(), key=Version, reverse=True):
        verdict = pairs.pair_verdict(cuda, release, driver=driver, platform=platform, cc=cc)
        if verdict.ok:
            return release, next((r.source for r in verdict.reasons if r.check == "cudnn-cuda"), "")
    return None


def fitting_cuda(pairs: PairKnowledge, cc: str, driver: Optional[str], platform: str) -> List[Dict[str, Any]]:
    """Per CUDA major, the newest CUDA release that builds code for this GPU (and that `driver` runs), with the
    newest cuDNN for it."""
    runs = {r.cuda: r for r in pairs.drivers.cuda_runnable(_branch_probe(driver), platform)} if driver else {}
    best: Dict[int, str] = {}
    for cuda in pairs.drivers.cuda_releases():
        if (driver and cuda not in runs) or pairs.cuda_gpu_reasons(cuda, cc):
            continue
        best[major_of(cuda) or 0] = cuda  # releases come oldest first: the last one kept is the newest
    out = []
    for major in sorted(best, reverse=True):
        cuda = best[major]
        floor = runs[cuda].floor if driver else pairs.drivers.min_driver(cuda, platform)
        cudnn = newest_cudnn(pairs, cuda, cc, driver, platform)
        out.append({"cuda": cuda, "how": runs[cuda].how if driver else "toolkit driver",
                    "driver": floor.text() if floor else "?", "cudnn": cudnn[0] if cudnn else None,
                    "source": floor.source if floor else "", "cudnn_source": cudnn[1] if cudnn else ""})
    return out


def alone(pairs: PairKnowledge, out: GpuAnswer, platform: str) -> None:
    """What the GPU needs, asked by itself: its architecture's CUDA releases and driver branches."""
    arch = pairs.gpus.arch_for_cc(out.cc)
    if arch is None:
        return
    first = arch.first_driver_for(out.cc)
    out.reasons.append(Reason("gpu", True, "%s (compute capability %s): CUDA %s%s, driver branch R%s%s." % (
        arch.name, out.cc, arch.first_cuda_for(out.cc), (" to %s" % arch.last_cuda) if arch.last_cuda else
        " and newer", first or "?", (" to R%s" % arch.last_driver_branch) if arch.last_driver_branch else
        " or newer"), arch.source))
    out.fits = fitting_cuda(pairs, out.cc, None, platform)


def with_driver(pairs: PairKnowledge, out: GpuAnswer, driver: str, platform: str) -> None:
    """Does the driver drive this GPU at all, and which CUDA (and cuDNN) can it run for it."""
    ok, why, source = pairs.gpus.driver_drives_gpu(driver, out.cc)
    out.reasons.append(Reason("driver", ok, why + ".", source))
    if ok is False:
        return
    fits = fitting_cuda(pairs, out.cc, driver, platform)
    if not fits:
        out.reasons.append(Reason("cuda", False, "%s runs no CUDA release that builds code for compute capability "
                                  "%s." % (_where(driver), out.cc), pairs.reference.architectures_source()))
        return
    top = fits[0]
    out.reasons.append(Reason("cuda", True, "%s runs CUDA up to %s for this GPU (%s; needs %s)." % (
        _where(driver), top["cuda"], top["how"], top["driver"]), top["source"],
        top["how"] == "minor-version compatibility"))
    out.fits = fits


def with_cuda(pairs: PairKnowledge, out: GpuAnswer, cuda: str, platform: str) -> None:
    """Does this CUDA release build code for the GPU; which driver it needs (the toolkit's and the GPU's)."""
    failed = pairs.cuda_gpu_reasons(cuda, out.cc)
    arch = pairs.gpus.arch_for_cc(out.cc)
    if failed:
        out.reasons.extend(failed)
    elif arch is not None:
        out.reasons.append(Reason("gpu", True, "CUDA %s builds code for %s (compute capability %s: CUDA %s%s)." % (
            cuda, arch.name, out.cc, arch.first_cuda_for(out.cc), (" to %s" % arch.last_cuda) if arch.last_cuda
            else " and newer"), arch.source))
    floor = pairs.drivers.min_driver(cuda, platform)
    mvc = pairs.drivers.minor_compat_floor(str(major_of(cuda)), platform) \
        if pairs.drivers.has_minor_compat(major_of(cuda)) else None
    first = arch.first_driver_for(out.cc) if arch else ""
    if floor:
        out.reasons.append(Reason("driver", True, "CUDA %s needs driver %s%s%s." % (
            cuda, floor.text(), " (%s through minor-version compatibility)" % mvc.text() if mvc else "",
            "; this GPU needs branch R%s or newer" % first if first else ""), floor.source))
    if failed:
        return
    cudnn = newest_cudnn(pairs, cuda, out.cc, None, platform)
    if cudnn:
        out.reasons.append(Reason("cudnn", True, "The newest cuDNN for this GPU with CUDA %s: %s." % (cuda, cudnn[0]),
                                  cudnn[1]))
    else:
        out.reasons.append(Reason("cudnn", False, "No cuDNN release the knowledge knows serves this GPU with CUDA %s."
                                  % cuda))


def with_cudnn(pairs: PairKnowledge, out: GpuAnswer, cudnn: str, platform: str) -> None:
    """Does this cuDNN release ship code for the GPU; if not, the newest that does."""
    found = pairs.cudnn_gpu_reasons(cudnn, out.cc)
    out.reasons.extend(found or [Reason("gpu", None, "The knowledge gives no lowest compute capability for cuDNN %s."
                                        % cudnn)])
    if any(r.ok is False for r in found):
        newer_fit = [row for row in fitting_cuda(pairs, out.cc, None, platform) if row["cudnn"]]
        best = max(newer_fit, key=lambda row: Version(row["cudnn"]), default=None)
        if best:
            out.reasons.append(Reason("cudnn", True, "The newest cuDNN for compute capability %s "
                                      "is %s (with CUDA %s)." % (out.cc, best["cudnn"], best["cuda"]),
                                      best["cudnn_source"]))
        out.fits = newer_fit
        return
    majors = sorted(set(pairs.published.cudnn_release_cuda_majors(cudnn)) |
                    {b.cuda_major for b in pairs.cudnn.cudnn_builds(cudnn) if b.cuda_major is not None})
    floors = {m: pairs.gpus.cuda_min_cc(m) for m in majors}
    dropped = [m for m, f in floors.items() if f is not None and mm_of(out.cc) < mm_of(f.low)]
    serving = [m for m in majors if m not in dropped]
    if dropped and serving:
        floor = floors[dropped[0]]
        out.reasons.append(Reason("cuda", True, "Its builds for CUDA %s serve this GPU; the CUDA %s build does not "
                                  "(CUDA %s builds for compute capability %s and newer)." % (
                                      ", ".join(map(str, serving)), ", ".join(map(str, dropped)), dropped[0],
                                      floor.low if floor else "?"), floor.source if floor else ""))
    elif dropped:
        floor = floors[dropped[0]]
        out.reasons.append(Reason("cuda", False, "cuDNN %s is built only for CUDA %s, which builds no code for compute "
                                  "capability %s." % (cudnn, ", ".join(map(str, dropped)), out.cc),
                                  floor.source if floor else ""))
