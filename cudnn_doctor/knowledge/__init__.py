"""The knowledge base (compat/*.toml): one Compat facade over modules that each answer questions about their tables."""
from __future__ import annotations

import functools

from .containers import ContainerKnowledge
from .cudnn import CudnnBuild
from .cudnn_fit import CudnnFitKnowledge
from .driver import CudaRun, DriverFloor
from .framework_features import FrameworkFeatureKnowledge
from .frameworks import FrameworkKnowledge
from .gpu import Arch, CcFloor, GpuKnowledge
from .known_bad import Symptom
from .layout import LayoutKnowledge
from .load import COMPAT_FILES, read_all
from .tables import CONFIRMED

__all__ = ["Arch", "CONFIRMED", "COMPAT_FILES", "CcFloor", "Compat", "CudaRun", "CudnnBuild", "DriverFloor",
           "Symptom", "load_compat"]


class Compat(CudnnFitKnowledge, LayoutKnowledge, GpuKnowledge, FrameworkKnowledge, ContainerKnowledge,
             FrameworkFeatureKnowledge):
    """Read-only view of the compat tables. Every answer carries the source it came from.

    Drivers and CUDA: knowledge/driver.py; cuDNN builds: cudnn.py and cudnn_fit.py; file layouts, wheels and
    archive names: layout.py; GPUs: gpu.py; frameworks: frameworks.py; known-bad releases and symptoms: known_bad.py.
    """


@functools.lru_cache(maxsize=1)
def load_compat() -> Compat:
    """The knowledge base, read once per process."""
    data, origin = read_all()
    return Compat(data, origin)
