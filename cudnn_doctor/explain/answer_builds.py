"""Answers for a framework build without CUDA (check's CD701): a CPU-only PyTorch, answered with check's own
remedy for the release the paste names (remedies.frameworks.framework_gpu_build_fix), and an OpenCV whose DNN
module has no CUDA backend (a source build with CUDA, cuDNN and this GPU's architecture), bitsandbytes without its
native library, conda's CPU build superseding a CUDA one by channel priority, and a program whose --device offers
only cpu. Pure."""
from __future__ import annotations

import re
from typing import Callable, Dict, Optional, Tuple

from ..knowledge import Compat
from ..model import Facts, FrameworkFacts
from ..remedies import paste, paste_builds as builds, paste_runtime as rt, paste_tools as tools
from ..remedies.frameworks import framework_gpu_build_fix
from ..remedies.software import torch_install
from .answer_facts import gpu_cc, torch_held_by_python
from .answered import Answer
from .evidence import Evidence


def replaced_framework(ev: Evidence, usual: bool = False) -> str:
    """PyTorch where the text is PyTorch's (its build is what to replace), else '' (the program is rebuilt); Lua
    Torch7 paths name torch too, and have no wheel. `usual`: PyTorch, the usual author of a bare cuDNN failure, also
    where the text shows no other program nor its own CUDA source (darknet-2836: src/convolutional_kernels.cu)."""
    if ev.facts.runs("Torch7"):
        return ""
    other = any(p.name not in ("PyTorch", "NCCL") for p in ev.facts.programs) or re.search(r"\.cu\b", ev.text)
    torch = re.search(r"torch|pytorch", ev.text, re.I) or ev.facts.runs("PyTorch")
    return "PyTorch" if torch or (usual and not other) else ""


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
        floor = _default_build_floor(compat, release, ev.driver_floor_platform) if release else None
        cause = ("torch.cuda.is_available() is False: most often %s is a CPU-only build (pip's default on some "
                 "platforms, or a +cpu wheel); if it is a CUDA build, %s" % (said, (
                     "its default build is for CUDA %s, which needs driver %s or newer: an older driver, or none, "
                     "leaves no GPU reachable" % floor) if floor else "no NVIDIA driver or GPU is reachable"))
        if floor:  # which of the two: torch.version.cuda says (None on a CPU-only build)
            fix = builds.cpu_build_or_driver_fix(fix, paste.driver_fix(floor[1], ev.driver_platform))
    else:
        cause = "%s is a CPU-only build (compiled without CUDA): it never uses the GPU" % said
    if held and ev.facts.python is not None:
        cause += "; PyTorch %s is the newest release with wheels for the paste's Python %s" % (
            held, ev.facts.python.value)
    return Answer(cause, fix)


def _default_build_floor(compat: Compat, release: str, platform: str) -> Optional[Tuple[str, str]]:
    """(CUDA, driver) for a PyTorch release's default build (its `stable` row in compat's release matrix): the
    driver that CUDA needs without minor-version compatibility."""
    cuda = compat.torch_default_cuda(release)
    floor = compat.min_driver(cuda, platform) if cuda else None
    return (cuda, floor.version) if cuda and floor and floor.version else None


def _opencv(ev: Evidence, compat: Compat) -> Answer:
    cc = gpu_cc(ev, compat)
    return Answer("this OpenCV was built without its CUDA DNN backend, so it falls back to the CPU: pip's "
                  "opencv-python wheels have none, and a source build drops it without cuDNN or when CUDA_ARCH_BIN "
                  "lists an architecture below the floor OpenCV's CMake checks", tools.opencv_cuda_build_fix(cc))


# the command line that asked for the device, its first word the program: "target/debug/tabby  serve ... --device cuda"
_DEVICE_RUN = re.compile(r"^[ \t]*(?:\$[ \t]*)?([\w./-]+)[ \t][^\n]*--device[ \t]+(?:cuda|gpu)\b", re.M)
# words that start another program: the program is then not named by the line's first word
_LAUNCHERS = ("cargo", "python", "python3", "uv", "poetry", "pipx", "npx", "node", "bash", "sh", "sudo", "env",
              "docker", "podman")
# conda's plan: "pytorch   pytorch::pytorch-1.7.1-py3.8_cuda10.2~ --> pkgs/main::pytorch-1.7.1-cpu_py38h6a09485_0"
_SUPERSEDED = re.compile(r"(\w[\w./-]*)::([\w.-]+?)-(\d[\w.]*)-\S*cuda\S*\s+-->\s+(\S+)::\S+-cpu_")


def _superseded(ev: Evidence) -> Optional[Answer]:
    m = _SUPERSEDED.search(ev.text)
    if m is None:
        return None
    channel, package, release, other = m.groups()
    return Answer("conda replaces %s %s's CUDA build from the %s channel with the CPU-only build of the same release "
                  "from %s, a channel of higher priority: channel priority, not a choice of CPU over GPU" % (
                      package, release, channel, other), builds.conda_channel_fix(channel, package, release))


# torch.utils.cpp_extension's own words: "The detected CUDA version (11.8) mismatches the version that was used to
# compile PyTorch (12.1). Please make sure to use the same CUDA versions."
_EXTENSION_CUDA = re.compile(r"detected CUDA version \((\d+\.\d+)\) mismatches the version that was used to compile"
                             r"\s{1,20}PyTorch \((\d+\.\d+)\)"  # wrapped, and indented by a traceback or pip
                             # DeepSpeed's op builder: "Installed CUDA version 12.2 does not match the version torch was
                             # compiled with 11.7"
                             # (a title or a shortened copy: "... does not match torch version", no number)
                             r"|Installed CUDA version (\d+\.\d+) does not match (?:the version )?torch"
                             r"(?: was compiled with (\d+\.\d+))?")


def _extension_cuda(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """An extension built with a toolkit of another CUDA major than PyTorch's: a PyTorch built for the toolkit's
    CUDA, or the toolkit PyTorch was built with on CUDA_HOME."""
    m = _EXTENSION_CUDA.search(ev.text)
    if m is None:
        return None
    toolkit, built = m.group(1) or m.group(3), m.group(2) or m.group(4)
    return Answer("building a PyTorch extension: the CUDA toolkit it compiles with (nvcc, CUDA_HOME) is %s and this "
                  "PyTorch was built with %s; the extension builder needs the CUDA PyTorch was built with" % (
                      toolkit, "CUDA %s" % built if built else "another CUDA"),
                  rt.extension_cuda_fix(compat, toolkit, built, ev.platform))


# xFormers' own warning: "xFormers was built for:\n    PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.6.0+cu126)".
_XFORMERS_BUILT = re.compile(r"built for:\s{0,20}PyTorch ([\w.+]{1,40}) with CUDA (\d{3,5})[^\n(]{0,40}\(you have "
                             r"([\w.+]{1,40})\)")


def _xformers(ev: Evidence, compat: Compat) -> Answer:
    m = _XFORMERS_BUILT.search(ev.text)
    said = (": the wheel was built for PyTorch %s, and this torch is %s" % (m.group(1), m.group(3))) if m else \
        ": the xformers wheel was built for another PyTorch release or CUDA build than the torch installed"
    fix = builds.extension_rebuild_fix("xformers", "xformers")
    # a CPU-only torch where xformers was built for that release's CUDA build (xformers#982): that build is the fix
    # xFormers writes its CUDA as major * 100 + minor ("CUDA 1201": 12.1)
    cuda = "%d.%d" % divmod(int(m.group(2)), 100) if m and m.group(3).endswith("+cpu") and "+cu" in m.group(1) else None
    if m is not None and cuda:
        said += ", the CPU-only build, so nothing in it runs on the GPU"
        fix = builds.cuda_torch_first_fix(torch_install(compat, m.group(1).split("+")[0], cuda, ev.platform), fix)
    return Answer("xFormers' C++/CUDA extensions did not load (a build mismatch)%s; `python -m xformers.info` shows "
                  "both" % said, fix)


# A C++ symbol of PyTorch's own namespaces (c10, at, torch, caffe2 before 2.0), as the loader prints it mangled:
# _ZN3c10..., _ZNK2at...
_TORCH_SYMBOL = re.compile(r"_ZN[KVR]{0,3}(?:3c10|2at|5torch|6caffe2)(?=\d)")


def from_extension_abi(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A Python extension (flash-attn, a custom op) missing one of PyTorch's C++ symbols: it was compiled against
    another PyTorch release than the one installed (PyTorch keeps no C++ ABI between releases)."""
    for f in ev.loader:
        if f.kind != "undefined-symbol" or not _TORCH_SYMBOL.match(f.symbol):
            continue
        name = f.caller.rpartition("/")[2]
        if not name or name.startswith(("libtorch", "libc10")):
            continue
        # The package the extension belongs to (site-packages/<package>/_C.so, the path before its name), else its
        # module name.
        at = ev.text.find(name)
        pkg = re.search(r"-packages/(\w+)/(?:[\w.-]+/){0,4}$", ev.text[max(0, at - 300):at]) if at > 0 else None
        module = pkg.group(1) if pkg else name.split(".")[0]
        module = compat.extension_project(module) or module  # a top-level extension: the project that builds it
        torch = ev.facts.program("PyTorch")
        installed = ("PyTorch %s" % torch.release) if torch is not None and torch.release else "the installed PyTorch"
        # Built in a source checkout (/repo/lib/model/_C.so), not installed: no package of that name to reinstall.
        where = re.search(r"(/[\w.+-]+(?:/[\w.+-]+){0,30})/%s" % re.escape(name), ev.text)
        source = where.group(1) if where and not re.search(r"[-_]packages(?:/|$)", where.group(1)) else ""
        return Answer("the extension %s was built against another PyTorch release than %s: it needs %s, a C++ "
                      "symbol of PyTorch's that this torch does not have (PyTorch keeps no C++ ABI between releases)"
                      % (name, installed, f.symbol),
                      builds.source_extension_rebuild_fix(source) if source else
                      builds.extension_rebuild_fix(module, compat.extension_source(module)))
    return None


# bitsandbytes' own words: "BNB_CUDA_VERSION=124 environment variable detected; loading libbitsandbytes_cuda124.so",
# and the folder it looked in ("Could not find the bitsandbytes CUDA binary at PosixPath('/x/bitsandbytes/...')")
_BNB_FORCED = re.compile(r"BNB_CUDA_VERSION=(\d+) environment variable detected")
_BNB_WANTED = re.compile(r"Required library version not found: libbitsandbytes_cuda(\d{3,4})\.so")
_BNB_FOLDER = re.compile(r"bitsandbytes CUDA binary at (?:PosixPath|WindowsPath)?\(?'?([^'\s)]+)/libbitsandbytes_")


def _bitsandbytes(ev: Evidence, compat: Compat) -> Answer:
    forced = _BNB_FORCED.search(ev.text)
    folder = _BNB_FOLDER.search(ev.text)
    # the folder named is the package's own (.../bitsandbytes/bitsandbytes); the checkout is the one above it
    checkout = folder.group(1).rsplit("/bitsandbytes", 1)[0] or "/" if folder and not re.search(
        r"(site|dist)-packages", folder.group(1)) else None
    cause = "bitsandbytes could not load its native CUDA library (libbitsandbytes_cuda<version>.so): its release " \
            "has no build for the CUDA it found, or the one it has will not load, and its functions are then " \
            "called on None; or the PyTorch beside it is a CPU-only build, so it finds no CUDA at all " \
            "(torch.cuda.is_available() is False)"
    wanted = _BNB_WANTED.search(ev.text)  # before 0.42 it says which it looked for, after the CUDA it found
    if wanted and not forced:
        cuda = "%s.%s" % (wanted.group(1)[:-1], wanted.group(1)[-1])
        cause += "; it found CUDA %s and looked for libbitsandbytes_cuda%s.so, which this release does not ship" % (
            cuda, wanted.group(1))
    if forced:
        cause += "; BNB_CUDA_VERSION=%s makes it load libbitsandbytes_cuda%s.so, which this install does not have" % (
            forced.group(1), forced.group(1))
    if checkout:
        cause += "; it runs from a source checkout (%s), whose native library is built, not downloaded" % checkout
    return Answer(cause, builds.bitsandbytes_fix(bool(forced), checkout))


def _device_not_built(ev: Evidence, compat: Compat) -> Answer:
    run = _DEVICE_RUN.search(ev.text)
    program = run.group(1).rsplit("/", 1)[-1] if run else ""
    return Answer("the program was compiled without its CUDA feature: its --device accepts only cpu",
                  builds.cuda_feature_rebuild_fix(program if program and program not in _LAUNCHERS else "the program"))


_TCNN_CC = re.compile(r"tinycudann extension for compute capability (\d{2,3})")


def _tcnn(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """tiny-cuda-nn's bindings without an extension for the GPU: the compute capability its words carry ("87")."""
    m = _TCNN_CC.search(ev.text)
    if m is None:
        return None
    cc = "%s.%s" % (m.group(1)[:-1], m.group(1)[-1])
    arch = compat.arch_for_cc(cc)
    return Answer("tiny-cuda-nn's PyTorch bindings were built without an extension for this GPU, compute capability "
                  "%s%s: they were built for other architectures (on another machine, or with "
                  "TCNN_CUDA_ARCHITECTURES naming others)" % (cc, (" (%s)" % arch.name) if arch else ""),
                  tools.tcnn_arch_fix(cc))


# Each named condition (compat/symptoms.toml) these answer, and its answer.
_ANSWERS: Dict[str, Callable[[Evidence, Compat], Optional[Answer]]] = {
    "torch-cpu-only": lambda ev, compat: _torch("torch-cpu-only", ev, compat),
    "torch-no-cuda": lambda ev, compat: _torch("torch-no-cuda", ev, compat),
    "opencv-dnn-no-cuda": _opencv,
    "xformers-no-extension": _xformers,
    "extension-cuda-mismatch": _extension_cuda,
    "bitsandbytes-no-native": _bitsandbytes,
    "conda-cuda-build-superseded": lambda ev, compat: _superseded(ev),
    "device-cuda-not-built": _device_not_built,
    "tcnn-no-arch": _tcnn,
}


def from_builds(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A framework built without CUDA, by the named condition the paste shows."""
    answer = _ANSWERS.get(kind)
    return answer(ev, compat) if answer is not None else None
