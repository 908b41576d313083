"""Answers for a framework build without CUDA (check's CD701): a CPU-only PyTorch, answered with check's own
remedy for the release the paste names (remedies.frameworks.framework_gpu_build_fix), and an OpenCV whose DNN
module has no CUDA backend (a source build with CUDA, cuDNN and this GPU's architecture). Pure."""
from __future__ import annotations

from typing import Optional

from ..knowledge import Compat
from ..model import Facts, FrameworkFacts
from ..remedies import paste_runtime as rt
from ..remedies.frameworks import framework_gpu_build_fix
from .answer_facts import gpu_cc, torch_held_by_python
from .answered import Answer
from .evidence import Evidence


def _torch(kind: str, ev: Evidence, compat: Compat) -> Answer:
    torch = ev.facts.program("PyTorch")
    release = torch.release if torch is not None and torch.release else ""
    held = None if release else torch_held_by_python(ev)  # the paste's Python caps the release pip can install
    tag = torch.tag if torch is not None else None
    said = ("PyTorch %s%s" % (release, ("+" + tag) if tag else "")) if release else "the installed PyTorch"
    # The paste is not this machine: check's remedy with no facts of the machine picks the release's CUDA build.
    fix = framework_gpu_build_fix(Facts(), compat, FrameworkFacts(name="torch", version=release or held or "",
                                                                  location=""))
    if kind == "torch-no-cuda" and tag != "cpu":
        cause = ("torch.cuda.is_available() is False: most often %s is a CPU-only build (pip's default on some "
                 "platforms, or a +cpu wheel); if it is a CUDA build, no NVIDIA driver or GPU is reachable" % said)
    else:
        cause = "%s is a CPU-only build (compiled without CUDA): it never uses the GPU" % said
    if held and ev.facts.python is not None:
        cause += "; PyTorch %s is the newest release with wheels for the paste's Python %s" % (
            held, ev.facts.python.value)
    return Answer(cause, fix)


def _opencv(ev: Evidence, compat: Compat) -> Answer:
    cc = gpu_cc(ev, compat)
    return Answer("this OpenCV was built without its CUDA DNN backend, so it falls back to the CPU: pip's "
                  "opencv-python wheels have none, and a source build drops it without cuDNN or when CUDA_ARCH_BIN "
                  "lists an architecture below the floor OpenCV's CMake checks", rt.opencv_cuda_build_fix(cc))


def from_builds(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A framework built without CUDA, by the named condition the paste shows."""
    if kind in ("torch-cpu-only", "torch-no-cuda"):
        return _torch(kind, ev, compat)
    if kind == "opencv-dnn-no-cuda":
        return _opencv(ev, compat)
    return None
