"""How far a build's GPU code reaches, said for a GPU the paste names: its architecture, the first CUDA with kernels
for it, and the architectures the failing build says it carries (PyTorch's own warning lists them: "The current
PyTorch install supports CUDA capabilities sm_37 sm_50 ... sm_75 compute_37"). Pure."""
from __future__ import annotations

import re
from typing import Optional, Tuple

from ..knowledge import Compat
from .evidence import Evidence

# PyTorch's own words for the code its build carries (torch/cuda/__init__.py _check_capability)
_SUPPORTS = re.compile(r"supports CUDA capabilities ((?:(?:sm|compute)_\d+a? ?)+)")


def _ver_key(cc: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in cc.split(".") if p.isdigit())


def _carried(ev: Evidence, oldest: Optional[str], cc: str) -> str:
    """'; the installed build carries sm_37 to sm_75 only (built with a CUDA older than 11.0)' where the text lists
    the build's architectures, and how old its CUDA is for this GPU then (`oldest`: the first CUDA with its kernels)."""
    m = _SUPPORTS.search(ev.text)
    sass = [w for w in m.group(1).split() if w.startswith("sm_")] if m else []
    if not sass:
        return ""
    newest = max(sass, key=lambda w: int(re.sub(r"\D", "", w)))
    above = int(cc.replace(".", "")) > int(re.sub(r"\D", "", newest))  # a GPU newer than all it carries
    return "; the installed build carries %s to %s only%s" % (
        sass[0], newest, (" (built with a CUDA older than %s)" % oldest) if oldest and above else "")


def first_cuda_serving(compat: Compat, cc: str) -> Tuple[str, Optional[str]]:
    """The oldest compute capability of the GPU's family whose code runs on it, and the first CUDA with kernels for
    that one: SASS for X.y runs on X.z, z >= y (gpu_arch.toml [binary_compat])."""
    arch, major = compat.arch_for_cc(cc), cc.split(".")[0]
    kin = [c for c in (arch.ccs if arch else []) if c.split(".")[0] == major and _ver_key(c) <= _ver_key(cc)]
    runs = min(kin, key=_ver_key) if kin else cc
    return runs, compat.first_cuda_for_cc(runs) or compat.first_cuda_for_cc(cc)


def arch_words(ev: Evidence, compat: Compat, cc: Optional[str]) -> str:
    """' (the RTX 3090: Ampere, compute capability 8.6; builds for CUDA 11.1 or newer have kernels for it)', and for
    an architecture a CUDA major dropped, ' ... CUDA 8.0 to 12.9 ... (CUDA 13.0 dropped Pascal)'."""
    if not cc:
        return ""
    arch = compat.arch_for_cc(cc)
    runs, oldest = first_cuda_serving(compat, cc)
    gpu = next((g.value for g in ev.facts.gpus), None)
    serves = (" (sm_%s's run on %s)" % (runs.replace(".", ""), cc)) if runs != cc else ""
    # an architecture a CUDA major dropped (Pascal's last is 12.9): a build for a newer CUDA has no kernels for it
    reach = ("%s to %s" % (oldest, arch.last_cuda)) if arch and arch.last_cuda else "%s or newer" % oldest
    gone = ("; CUDA %d.0 dropped %s" % (int(arch.last_cuda.split(".")[0]) + 1, arch.name)) \
        if arch and arch.last_cuda else ""
    return " (%s%scompute capability %s%s)%s" % (
        ("the %s: " % gpu) if gpu else "", ("%s, " % arch.name) if arch else "", cc,
        ("; builds for CUDA %s have kernels for it%s%s" % (reach, serves, gone)) if oldest else "",
        _carried(ev, oldest, cc))
