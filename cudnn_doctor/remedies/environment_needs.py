"""What one framework asks of its environment's one site-packages/nvidia/cudnn folder (its Need): its own
nvidia-cudnn pin, else its release's pin in compat, else the wheel of its build's CUDA at the major it asks for."""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, TYPE_CHECKING

from ..knowledge import Compat
from ..model import FrameworkFacts
from ..queries import framework_kind
from ..versions import canonical_name, major_of, requirements

if TYPE_CHECKING:
    from packaging.requirements import Requirement

_LINUX = {"platform_system": "Linux", "sys_platform": "linux", "platform_machine": "x86_64", "os_name": "posix"}


def applying_requirements(fw: FrameworkFacts) -> List["Requirement"]:
    """The framework's nvidia-* requirements that apply on Linux x86_64, without an extra or under one of its
    extras (TensorFlow's and-cuda, JAX's with-cuda, ONNX Runtime's cudnn), first per project."""
    out: Dict[str, "Requirement"] = {}
    for _, req in requirements(fw.requires):
        name = canonical_name(req.name)
        if name in out:
            continue
        try:
            applies = req.marker is None or any(req.marker.evaluate(dict(_LINUX, extra=e))
                                                for e in [""] + list(fw.extras))
        except Exception:  # an exotic marker: not a pin we can stand on
            continue
        if applies:
            out[name] = req
    return list(out.values())


class Need(NamedTuple):
    """What one framework asks of its environment's one nvidia/cudnn folder."""

    framework: FrameworkFacts
    project: str  # nvidia-cudnn-cu12, nvidia-cudnn-cu13
    major: int
    requirement: Optional["Requirement"]  # its own pin; None when it has none (the major of its build counts)

    @property
    def label(self) -> str:
        return "%s %s" % (self.framework.name, self.framework.version)

    @property
    def wants(self) -> str:
        return "%s%s" % (self.project, self.requirement.specifier if self.requirement is not None
                         else "==%d.*" % self.major)


def need_of(compat: Compat, fw: FrameworkFacts) -> Optional[Need]:
    """The cuDNN wheel a framework that loads cuDNN needs: its own nvidia-cudnn pin, else the wheel of its build's
    CUDA at the major it asks the loader for."""
    res = fw.resolved_cudnn
    if res is None or fw.cuda_build is False:
        return None
    pins = [r for r in applying_requirements(fw) if canonical_name(r.name).startswith("nvidia-cudnn-")]
    asked = res.name.rsplit(".", 1)[1] if res.name[-1:].isdigit() else None
    major = major_of(asked) if asked else major_of(fw.cudnn_version)
    if major is None:
        return None
    if pins:
        floor = [s.version for s in pins[0].specifier if s.operator in ("==", ">=", "~=", "===")]
        return Need(fw, canonical_name(pins[0].name), (major_of(floor[0].replace(".*", "")) if floor else None) or major,
                    pins[0])
    build = compat.framework_build("onnxruntime_gpu", fw.version) if framework_kind(fw) == "onnxruntime" else None
    if build and build.get("cudnn_wheel") and build.get("cudnn_pin"):  # its release's own cuDNN wheel (compat)
        req = requirements(["%s==%s" % (build["cudnn_wheel"], build["cudnn_pin"])])
        if req:
            return Need(fw, canonical_name(build["cudnn_wheel"]), major_of(str(build["cudnn_pin"])) or major,
                        req[0][1])
    project = compat.cudnn_wheel(fw.cuda_version) if fw.cuda_version else None
    return Need(fw, project, major, None) if project else None
