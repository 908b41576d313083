"""Questions about the GPUs: which count (visible, with a readable compute capability), identical ones grouped, how
each is named, and which cuDNN builds leave one behind."""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..model import Facts, GpuFacts
from ..versions import cuda_label, mm, mm_before, mm_of, mm_text, ver


class _NoFloor:
    low = "0.0"


_NO_FLOOR = _NoFloor()


def visible_gpus(facts: Facts) -> List[GpuFacts]:
    return [g for g in facts.gpus if g.visible is not False]


def gpus_with_cc(facts: Facts) -> List[GpuFacts]:
    """The visible GPUs whose compute capability is known and reads as major.minor (known_cc answers for them)."""
    return [g for g in visible_gpus(facts) if mm(g.compute_capability)]


def known_cc(gpu: GpuFacts) -> str:
    """The compute capability of a GPU gpus_with_cc returned; a ValueError for any other GPU without one."""
    if gpu.compute_capability is None or mm(gpu.compute_capability) is None:
        raise ValueError("GPU %s has no readable compute capability" % gpu.index)
    return gpu.compute_capability


def cc_below(cc: Optional[str], floor: Optional[str]) -> bool:
    """Whether a GPU of compute capability `cc` is below `floor`; False when either is unknown."""
    return mm_before(cc, floor)


@dataclass
class GpuGroup(GpuFacts):
    """Identical GPUs (one model, one compute capability) judged once: the first of them, with every index."""

    indices: List[int] = field(default_factory=list)


def gpu_groups(facts: Facts) -> List[GpuFacts]:
    """The visible GPUs with a compute capability, one per group of identical ones, in index order: a rule about
    the model says it once for a node of eight of them."""
    groups: Dict[Tuple[Optional[str], Optional[str]], GpuGroup] = {}
    for gpu in gpus_with_cc(facts):
        key = (gpu.name, gpu.compute_capability)
        if key not in groups:
            groups[key] = GpuGroup(**{f.name: getattr(gpu, f.name) for f in fields(GpuFacts)}, indices=[])
        groups[key].indices.append(gpu.index)
    return list(groups.values())


def gpu_label(gpu: GpuFacts) -> str:
    indices = getattr(gpu, "indices", None) or [gpu.index]
    which = "GPU %d" % indices[0] if len(indices) == 1 else "GPUs %s and %d" % (
        ", ".join(str(i) for i in indices[:-1]), indices[-1])
    return "%s (%s, compute capability %s)" % (which, gpu.name or "unknown model", gpu.compute_capability)


def floor_branch(floor: Any) -> Optional[str]:
    """The driver branch of a DriverFloor ('580' of 580.65.06)."""
    if floor is None:
        return None
    return floor.branch or ((floor.version or "").split(".")[0] or None)


def gpu_cudnn_problems(facts: Facts, compat: Compat, cudnn: Any, cuda: Any) -> List[str]:
    """Why a cuDNN release's build for `cuda` cannot run on the visible GPUs (its minimum compute capability)."""
    if not cudnn or ver(str(cudnn)) is None:
        return []
    floor = compat.cudnn_min_cc(str(cudnn), mm_text(cuda) or cuda_label(cuda))
    if floor is None:
        return []
    return ["%s is below cuDNN %s's minimum compute capability %s" % (
        gpu_label(g), cudnn, floor.low if floor.low == floor.high else "%s-%s" % (floor.low, floor.high))
        for g in gpus_with_cc(facts) if cc_below(g.compute_capability, floor.high)]


def lowest_cc(facts: Facts) -> Optional[str]:
    """The lowest compute capability among the visible GPUs (what every install must still run on)."""
    ccs = [known_cc(g) for g in gpus_with_cc(facts)]
    return min(ccs, key=mm_of) if ccs else None
