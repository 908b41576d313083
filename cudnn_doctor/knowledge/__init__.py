"""The knowledge base (compat/*.toml) behind the Compat facade. Imports versions and parsed_cache, never the machine."""
from __future__ import annotations

import functools

from .containers import ContainerKnowledge
from .cudnn import CudnnBuild
from .lookup import LookupKnowledge
from .pair import PairVerdict
from .driver import CudaRun, DriverFloor
from .framework_features import FrameworkFeatureKnowledge
from .frameworks import FrameworkKnowledge
from .gpu import Arch, CcFloor, GpuKnowledge
from .known_bad import Symptom
from .layout import LayoutKnowledge
from .load import COMPAT_FILES, read_all
from .node import NodeKnowledge
from .pastes import ErrorText, PastesKnowledge
from .reference import ReferenceKnowledge
from .sonames import Shipped, SonameKnowledge
from .status import StatusCode
from .tables import CONFIRMED
from .theano import TheanoKnowledge

__all__ = ["Arch", "CONFIRMED", "COMPAT_FILES", "CcFloor", "Compat", "CudaRun", "CudnnBuild", "DriverFloor",
           "ErrorText", "PairVerdict", "Shipped", "StatusCode", "Symptom", "load_compat"]


class Compat(LookupKnowledge, LayoutKnowledge, SonameKnowledge, GpuKnowledge, ReferenceKnowledge, FrameworkKnowledge,
             ContainerKnowledge, TheanoKnowledge, PastesKnowledge, FrameworkFeatureKnowledge, NodeKnowledge):
    """Read-only view of the compat tables. Every answer carries the source it came from.

    Drivers and CUDA: knowledge/driver.py; cuDNN builds: cudnn.py and cudnn_fit.py; the pair verdict (cuDNN x CUDA
    x driver x GPU): pair.py; matrix's look-ups: lookup.py; what PyPI and NVIDIA's manifests add and how current
    the knowledge is: derived.py; file layouts, wheels and archive names: layout.py; GPUs: gpu.py; frameworks:
    frameworks.py; known-bad releases and symptoms: known_bad.py; smaller reference tables: reference.py; Theano
    releases and the cuDNN they accept: theano.py; the node's health (Xid events, clock events): node.py.
    """


@functools.lru_cache(maxsize=1)
def load_compat() -> Compat:
    """The knowledge base, read once per process."""
    data, origin = read_all()
    return Compat(data, origin)
