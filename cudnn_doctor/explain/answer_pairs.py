"""Two frameworks of one paste's environment that need different cuDNN majors: onnxruntime-gpu beside the PyTorch
whose cuDNN the process loads (onnxruntime-22491: onnxruntime-gpu 1.19.2, built on cuDNN 9, beside torch
2.3.1+cu121 and its cuDNN 8.9.7). One process holds one libcudnn major, so the way out is the release of either
framework built on the other's major: the onnxruntime-gpu whose PyPI build links the major PyTorch brings (and its
CUDA major), or the PyTorch release whose build for the same CUDA pins the major ONNX Runtime needs; never a second
cuDNN wheel, which PyTorch's pin would fight. Pure: knowledge, PyPI's recorded release list and the paste's facts."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ..knowledge import Compat
from ..knowledge.wheel_index import Node, load_wheel_index
from ..model import Fix
from ..remedies import paste
from ..remedies.onnxruntime import onnxruntime_release_fix
from ..remedies.paste_python import one_cudnn_major_fix, onnxruntime_for_cuda_fix
from ..versions import major_of, mm_text, ver
from .answered import Answer
from .evidence import Evidence, VersionCheck


def _torch_build(compat: Compat, release: str, cuda: str) -> Optional[Dict[str, str]]:
    return next(({k: str(v) for k, v in r.items()} for r in compat.torch_rows(release) if mm_text(str(r["cuda"])) == cuda),
                None)


def _newest_onnxruntime(compat: Compat, cuda_major: Optional[int], python: Optional[str],
                        cudnn: Optional[int] = None) -> Optional[str]:
    """The newest onnxruntime-gpu on PyPI whose build links CUDA `cuda_major` (and cuDNN `cudnn`, where given), with
    a wheel for the paste's Python (where it says one)."""
    index = load_wheel_index()
    for release in index.versions("onnxruntime-gpu") if cuda_major is not None else []:
        build = compat.framework_build("onnxruntime_gpu", release)
        if build and major_of(str(build["cuda"])) == cuda_major and \
                (cudnn is None or int(build["cudnn_major"]) == cudnn) and \
                index.installable("onnxruntime-gpu", release, Node(python=python or "")) is None:
            return release
    return None


def _torch_on(compat: Compat, cudnn: int, cuda_major: int, mine: str, since: str,
              python: Optional[str]) -> Optional[Tuple[str, str]]:
    """(release, CUDA) of the oldest PyTorch minor from `since` on with a build for CUDA `cuda_major` that pins cuDNN
    `cudnn` and has wheels for the paste's Python (where it says one), as its newest release: the build for the
    CUDA it has now (`mine`) where that is of the major, else the minor's default (stable) one."""
    rows = [r for r in compat.framework_rows("pytorch") if major_of(str(r["cuda"])) == cuda_major
            and major_of(str(r["cudnn"])) == cudnn and (not python or SpecifierSet(str(r["python"])).contains(python))]
    have = ver(mm_text(since) or since)
    minors = sorted({str(r["torch"]) for r in rows if have is None or Version(str(r["torch"])) >= have}, key=Version)
    if not minors:
        return None
    of_minor = [r for r in rows if str(r["torch"]) == minors[0]]
    row = next((r for r in of_minor if mm_text(str(r["cuda"])) == mine), None) or \
        next((r for r in of_minor if r.get("channel") == "stable"), of_minor[0])
    releases = [r for r in load_wheel_index().versions("torch") if mm_text(r) == minors[0]]
    return (releases[0], mm_text(str(row["cuda"])) or str(row["cuda"])) if releases else None


def onnxruntime_for_cuda(bad: VersionCheck, ev: Evidence, compat: Compat, toolkit: Fix) -> Optional[Answer]:
    """onnxruntime-gpu built for another CUDA major than the one the paste states (onnxruntime-19292: 1.16.2, CUDA
    11.8's, on CUDA 12.1): its release built for that CUDA, or the CUDA it was built for."""
    cuda = major_of(bad.runtime) if bad.framework == "ONNX Runtime" and bad.library == "CUDA" else None
    release = _newest_onnxruntime(compat, cuda, ev.python)
    if release is None or cuda is None:
        return None
    return Answer("ONNX Runtime was built with CUDA %s and the CUDA here is %s; its CUDA provider links one CUDA major"
                  % (bad.compiled, bad.runtime), onnxruntime_for_cuda_fix(release, cuda, _has_extras(compat, release),
                                                                          toolkit))


def onnxruntime_own_cuda(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """ONNX Runtime's own words name the CUDA major its build needs ("Require cuDNN 9.* and CUDA 12.*") and the paste
    states a CUDA of another major (onnxruntime-21769: CUDA 11.7 with 1.19.0): the build's CUDA is the cause, whatever
    cuDNN it also misses."""
    said = next((c for c in ev.checks if c.framework == "ONNX Runtime" and c.library == "CUDA" and not c.runtime), None)
    driver = ev.facts.cuda_driver.value if ev.facts.cuda_driver else None  # nvidia-smi's: what the driver runs
    stated = [c for c in ev.cuda if major_of(c) is not None and c != driver]
    # any stated CUDA of the major it needs (a torch+cu121 beside it) leaves its cuDNN the one thing missing
    if said is None or not stated or any(major_of(c) == major_of(said.compiled) for c in stated):
        return None
    check = VersionCheck(said.framework, "CUDA", stated[0], said.compiled, said.rule, False, said.source)
    return onnxruntime_for_cuda(check, ev, compat, paste.toolkit_release_fix(compat, said.compiled, ev.platform))


def _has_extras(compat: Compat, release: str) -> bool:
    since = ver(compat.framework_feature_since("onnxruntime_gpu", "pip_extras") or "")
    have = ver(release)
    return since is not None and have is not None and have >= since


def onnxruntime_beside_torch(bad: VersionCheck, ev: Evidence, compat: Compat) -> Optional[Answer]:
    torch = ev.facts.program("PyTorch")
    ort = next((p for p in ev.facts.programs if p.name == "ONNX Runtime" and p.release), None)
    cuda = ev.facts.build_cuda()
    if bad.framework != "ONNX Runtime" or torch is None or not torch.release or not cuda or not bad.runtime:
        return None
    build = _torch_build(compat, torch.release, cuda)
    ort_build = compat.framework_build("onnxruntime_gpu", ort.release) if ort is not None and ort.release else None
    loaded, needed = major_of(bad.runtime), major_of(bad.compiled)
    if build is None or loaded is None or needed is None or major_of(build["cudnn"]) != loaded:
        return None
    cause = ("ONNX Runtime was built with cuDNN %d and the process has cuDNN %s, PyTorch %s+%s's (its CUDA %s build "
             "pins cuDNN %s); one process loads one libcudnn major, so the two frameworks need builds on the same "
             "one" % (needed, bad.runtime, torch.release, torch.tag or "", cuda, build["cudnn"]))
    python = ev.python
    same = _newest_onnxruntime(compat, major_of(cuda), python, loaded)
    # PyTorch's build must bring the CUDA major ONNX Runtime's build links too (a cu118 PyTorch has no CUDA 12)
    ort_cuda = major_of(str(ort_build["cuda"])) if ort_build else major_of(cuda)
    newer = _torch_on(compat, needed, ort_cuda, cuda, torch.release, python) if ort_cuda is not None else None
    if not same and not newer:
        return None
    return Answer(cause, one_cudnn_major_fix(compat, same, newer, cuda, loaded, needed, ev.platform))


def onnxruntime_release_cudnn(ev: Evidence, compat: Compat, library: str, major: int, cause: str) -> Optional[Answer]:
    """A cuDNN library missing where the paste names the onnxruntime-gpu release that asks for it (onnxruntime 1.18:
    libcudnn.so.8): that release's CUDA and cuDNN, or a newer release built for the newer cuDNN (compat's
    onnxruntime-gpu rows), never a guess between its builds."""
    release = next((p.release for p in ev.facts.programs if p.name == "ONNX Runtime" and p.release), None)
    build = compat.framework_build("onnxruntime_gpu", release) if release else None
    if release is None or build is None or int(build["cudnn_major"]) != major:
        return None
    return Answer(cause + "; ONNX Runtime %s is built with CUDA %s and cuDNN %d, and its CUDA provider links %s" % (
        release, build["cuda"], major, library), onnxruntime_release_fix(compat, release, [library]))
