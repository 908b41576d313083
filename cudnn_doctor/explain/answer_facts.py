"""Answers the machine a paste describes decides (explain.paste_facts), before any message class: a framework
release known for what the paste shows (compat/known_bad.toml), a warning that is not an error; and the facts the
message classes ask (the program, its build's CUDA, the driver's CUDA, the GPU). An undefined symbol's answers are
explain.answer_symbols'. Pure: evidence and knowledge in, sentences and a Fix out."""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..model import Fix
from ..remedies import paste, paste_python as py_fix, paste_runtime as rt
from ..remedies.paste_tools import build_or_memory_fix, contiguous_or_build_fix, memory_or_build_fix, or_reinstall_fix
from ..versions import major_of, tag_cuda, ver, version_key as _v
from .answered import Answer
from .evidence import Evidence


def gpu_cc(ev: Evidence, compat: Compat) -> Optional[str]:
    """The GPU's compute capability: stated, else from a GPU name the paste gives."""
    if ev.gpu_cc:
        return ev.gpu_cc
    for said in ev.facts.gpus:
        known = compat.gpus.gpu_by_name(said.value)
        if known is not None:
            return known.cc
    return None


def _torch_rows(ev: Evidence, compat: Compat) -> List[Dict[str, Any]]:
    torch = ev.facts.program("PyTorch")
    return compat.known_bad("torch", torch.release) if torch is not None and torch.release else []


# PyTorch prints a TORCH_WARN as "UserWarning: ... (Triggered internally at <file>:<line>.)"; an error never ends so.
_TORCH_WARNING = ("UserWarning", "(Triggered internally at")


def torch_dll(ev: Evidence, compat: Compat, dll: str) -> Optional[Answer]:
    """A DLL of PyTorch's own wheel that the paste's PyTorch release is known to ship without one it imports."""
    torch = ev.facts.program("PyTorch")
    named = torch is not None and torch.release
    rows = _torch_rows(ev, compat) if named else compat.flagged("torch", "dll")
    row = next((r for r in rows if str(r.get("dll", "")).lower() == dll.lower()), None)
    if row is None:
        return None
    cuda = ev.facts.build_cuda() or compat.torch_default_cuda(row["fixed_in"])  # the paste's build, else the default
    if cuda is None:
        return None
    release = py_fix.torch_release_fix(compat, row["fixed_in"], cuda, "the release that fixed it", ev.platform,
                                       ev.python)
    if named and torch is not None:
        return Answer("PyTorch %s is known for this (%s): %s; fixed in %s" % (
            torch.release, row["source"].split(" ")[0], row["problem"], row["fixed_in"]), release)
    bad = row["version"].lstrip("=")  # the release unsaid: the row's, or a plain reinstall where it is another
    return Answer("where this PyTorch is %s, it is known for this (%s): %s; fixed in %s" % (
        bad, row["source"].split(" ")[0], row["problem"], row["fixed_in"]),
        or_reinstall_fix(bad, release, "torch"))


def _unnamed_warning(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A warning only one PyTorch release prints, in a paste that names no release: the row's release is the one."""
    if not any(w in ev.text for w in _TORCH_WARNING):
        return None
    for row in compat.harmless_warnings("torch"):
        seen = [row["warning"]] + list(row.get("also_seen", []))
        said = next((s for s in seen if s in ev.text), None)
        if said is not None and str(row["version"]).startswith("=="):
            return Answer("harmless: a warning only PyTorch %s prints ('%s': %s; PyTorch %s no longer prints it)" % (
                str(row["version"])[2:], said, row["problem"], row["fixed_in"]),
                rt.harmless_warning("the convolution runs; upgrade to PyTorch %s or newer to silence it" %
                                    row["fixed_in"]), False)
    return None


def from_releases(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A release the paste names that is known for what it shows: a bug fixed later, GPUs it dropped, a warning."""
    torch = ev.facts.program("PyTorch")
    statuses = {s.code.name for s in ev.statuses}
    cc = gpu_cc(ev, compat)
    if torch is None or not torch.release:
        found = _unnamed_warning(ev, compat)
        if found is not None:
            return found
    for row in _torch_rows(ev, compat):
        if row.get("warning") and row["warning"] in ev.text:
            return Answer("harmless: PyTorch %s's warning '%s' (%s; PyTorch %s no longer prints it)" % (
                torch.release if torch else "", row["warning"], row["problem"], row["fixed_in"]),
                rt.harmless_warning("the convolution runs; upgrade to PyTorch %s or newer to silence it" %
                                    row["fixed_in"]), False)
        if row.get("status_code") in statuses:
            cuda = ev.facts.build_cuda() or "10.2"
            return Answer("PyTorch %s (%s) is known for %s: %s; fixed in %s" % (
                torch.release if torch else "", row["source"].split(" ")[0], row["status_code"], row["problem"],
                row["fixed_in"]), py_fix.torch_release_fix(compat, row["fixed_in"], cuda, "the release that fixed it",
                                                           ev.platform, ev.python))
    dropped = _dropped_gpu(ev, compat, cc, torch.release if torch is not None else None)
    return dropped or from_warnings(ev, compat)


# PyTorch's own words for a GPU its binaries dropped (torch/cuda/__init__.py): "The minimum cuda capability that we
# support is 3.5" (older) or "...supported by this library is 3.7" (newer).
_TORCH_MINIMUM = re.compile(r"minimum cuda capability (?:that we support|supported by this library) is (\d+\.\d+)",
                            re.I)


# The programs a paste names that run no framework's kernels: the driver's and the container's tools.
_NOT_FRAMEWORKS = ("nvidia-smi", "modprobe", "docker", "nvidia-container-cli")


def _dropped_gpu(ev: Evidence, compat: Compat, cc: Optional[str], release: Optional[str]) -> Optional[Answer]:
    """A GPU PyTorch's binaries dropped: the release the paste names, or, where it names none, the floor PyTorch
    itself printed. The lowest floor the GPU is below names the last release with kernels for it."""
    stated = _TORCH_MINIMUM.search(ev.text)
    arch = compat.arch_for_cc(cc) if cc and ver(cc) is not None else None
    # A GPU of an architecture NVIDIA retired, named beside a status error of a paste that names no release and no
    # other framework (stable-diffusion-webui-9589: a Tesla K80 with CUDNN_STATUS_NOT_INITIALIZED): the builds of
    # today dropped it, and PyTorch's rows name the last release with kernels for it.
    retired = bool(arch and arch.last_cuda and ev.statuses and
                   all(p.name in _NOT_FRAMEWORKS or p.name == "PyTorch" for p in ev.facts.programs))
    if cc is None or ver(cc) is None or (release is None and stated is None and not retired):
        return None
    rows = compat.known_bad("torch", release) if release else compat.dropped_gpus("torch")
    row = next((r for r in sorted((r for r in rows if r.get("below_cc")), key=lambda r: _v(r["below_cc"]))
                if _v(cc) < _v(r["below_cc"])), None)
    if row is None:
        return None
    floor = stated.group(1) if stated else row["below_cc"]
    said = "PyTorch %s" % release if release else "PyTorch (its minimum is compute capability %s)" % floor
    cause = "%s has no kernels for this %s GPU (compute capability %s): %s" % (
        said, arch.name if arch else "old", cc, row["problem"])
    if arch and release is None and stated is None:
        cause = "%s is a %s GPU (compute capability %s), which today's builds dropped: CUDA %s was the last to " \
            "build for it and driver R%s the last branch to drive it; %s" % (
                next((g.value for g in ev.facts.gpus), "this GPU"), arch.name, cc, arch.last_cuda,
                arch.last_driver_branch or "?", row["problem"])
    if row.get("last_cuda"):
        return Answer(cause, py_fix.torch_release_fix(compat, row["last_release"], row["last_cuda"],
                                                      "the last with kernels for it", ev.platform, ev.python))
    return Answer(cause, rt.unsupported_gpu_fix(floor, row["last_release"]))


def from_warnings(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """TensorRT's cuDNN minor warning: a warning, not the error."""
    check = next((c for c in ev.checks if c.framework == "TensorRT" and c.library == "cuDNN"), None)
    if check is None or not check.runtime or major_of(check.runtime) != major_of(check.compiled):
        return None
    # The row of the warning this version check prints (`check`), which users often retell in their own words.
    row = next((r for r in compat.harmless_warnings("tensorrt")
                if r["warning"] in ev.text or r.get("check") == check.library), None)
    if row is None:
        return None
    # A process loads one cuDNN: the first library to ask brings it, often PyTorch's own, imported before TensorRT
    # (torch2trt-154: torch 1.1's 7.5 under TensorRT's 7.6.3; PyTorch 1.3, built with 7.6.3, ended the warning).
    torch = _torch_with_cudnn(compat, check.compiled) if _v(check.runtime) < _v(check.compiled) else None
    first = "; the older copy is the one the process loaded first, often PyTorch's own cuDNN where torch is imported " \
        "before TensorRT (PyTorch %s and newer bring cuDNN %s or newer)" % (torch, check.compiled) if torch else ""
    return Answer("a warning, not an error: TensorRT was built with cuDNN %s and loaded %s (the same major); %s%s" % (
        check.compiled, check.runtime, row["problem"], first), rt.harmless_warning(
        "look for the first real error; to silence it install cuDNN %s or a newer %s.x%s" % (
            check.compiled, major_of(check.compiled), ", or PyTorch %s or newer where torch loads first" % torch
            if torch else "")), False)


def _torch_with_cudnn(compat: Compat, release: str) -> Optional[str]:
    """The first PyTorch release whose CUDA builds bring a cuDNN of that major at least ``release`` (compat's build
    rows: the cuDNN each release's wheels were built with)."""
    rows = [r for r in compat.framework_rows("pytorch") if r.get("cudnn") and
            major_of(str(r["cudnn"])) == major_of(release) and _v(str(r["cudnn"])) >= _v(release)]
    return str(min(rows, key=lambda r: _v(str(r["torch"])))["torch"]) if rows else None


def no_kernel_image(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """No kernels for the GPU, where the paste's program or Python decides the fix: Lua Torch7 rebuilds, and a
    Python no new PyTorch wheel installs on needs a newer Python first (the wheel index as judge)."""
    cc = gpu_cc(ev, compat)
    if ev.facts.runs("Torch7"):
        return Answer("Torch7 (Lua)'s cutorch and cunn have no kernels for this GPU%s" % (
            (" (compute capability %s)" % cc) if cc else ""), rt.torch7_rebuild_fix(cc))
    python = ev.python
    if python is None or not ev.facts.runs("PyTorch"):
        return None
    from ..knowledge.resolve import newest  # why: the wheel index loads in 0.9 s; only this answer needs it
    from ..knowledge.wheel_index import Node, load_wheel_index

    index = load_wheel_index()
    found = newest(index, "torch", "", Node(python=python))
    if found.version is not None:
        return None  # a release installs there: the architecture decides (torch_for_python says which release)
    why = "; ".join(found.why_none()) or "none of its wheels is for Python %s" % python
    latest = newest(index, "torch", "", Node()).version  # the release with kernels for the newest GPUs
    use = _nearest_python(python, lambda p: index.resolves("torch", latest, Node(python=p), ()) is None) \
        if latest else None
    return Answer("the build has no kernels for this GPU%s, and no PyTorch wheel on PyPI installs on the paste's "
                  "Python %s (%s)" % ((" (compute capability %s)" % cc) if cc else "", python, why),
                  py_fix.other_python_fix(python, why, use, latest, ev.platform))


def _nearest_python(python: str, installs: Callable[[str], bool]) -> Optional[str]:
    """The Python 3 minor nearest ``python`` (the newer of two as near) that a release installs on."""
    m = re.fullmatch(r"3\.(\d+)", python)
    if not m:
        return None
    have = int(m.group(1))
    return next(("3.%d" % n for d in range(1, 16) for n in (have + d, have - d) if n >= 0 and installs("3.%d" % n)),
                None)


def torch_held_by_python(ev: Evidence) -> Optional[str]:
    """The newest PyTorch with wheels for the paste's Python, where that Python holds it below the newest release
    (the wheel index as judge); None where the paste names no Python or it holds nothing back."""
    python = ev.python
    if python is None or not ev.facts.runs("PyTorch"):
        return None
    from ..knowledge.resolve import newest  # why: the wheel index loads in 0.9 s; only this answer needs it
    from ..knowledge.wheel_index import Node, load_wheel_index

    index = load_wheel_index()
    found = newest(index, "torch", "", Node(python=python))
    top = index.versions("torch")
    return found.version if found.version is not None and top and found.version != top[0] else None


def torch_for_python(ev: Evidence) -> Optional[str]:
    """'; on Python 3.6 pip installs PyTorch 1.10.2, the newest release with wheels for it', or None."""
    held = torch_held_by_python(ev)
    if held is None or ev.facts.python is None:
        return None
    return "; on Python %s pip installs PyTorch %s, the newest release with wheels for it" % (ev.facts.python.value,
                                                                                          held)


# cuDNN's own arch status, by name or as bindings spell it (cudnnStatusArchMismatch, "Arch mismatch").
_CUDNN_ARCH = re.compile(r"ARCH_MISMATCH|ArchMismatch|ArchitectureMismatch|\bArch mismatch")
# "cudnn version;5.1", "cuDNN v5.1", "CUDNN_VERSION: 6.0": the cuDNN a paste names by hand.
_CUDNN_SAID = re.compile(r"(?<![\w.])cudnn[ _-]?(?:version)?[ \t]{0,3}[:;=]?[ \t]{0,3}v?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)\b",
                         re.I)


def cudnn_arch_floor(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """CUDNN_STATUS_ARCH_MISMATCH: the GPU is below the lowest compute capability of the cuDNN the paste names (of
    every cuDNN where it names none: compat/cudnn.toml [min_cc_eras])."""
    if "cudnn" not in ev.text.lower() or not _CUDNN_ARCH.search(ev.text):
        return None
    said = ev.facts.cudnn_loaded or ev.facts.cudnn_compiled
    m = _CUDNN_SAID.search(ev.text) if said is None else None
    release = said.value if said else (m.group(1) if m else None)
    floor = compat.cudnn_min_cc(release) if release else None
    lowest = compat.cudnn_min_cc("1.0.0")
    if floor is None and lowest is None:
        return None
    low = floor.low if floor else lowest.low if lowest else ""
    cc = gpu_cc(ev, compat)
    if cc and floor is None and _v(cc) >= _v(low):
        return None  # a GPU above every floor: which cuDNN loaded decides, and the paste does not say
    gpu = (" this GPU's compute capability is %s;" % cc) if cc else ""
    need = ("cuDNN %s supports GPUs of compute capability %s or higher" % (release, low)) if floor else \
        "no cuDNN release supports a GPU below compute capability %s (newer releases need more)" % low
    return Answer("CUDNN_STATUS_ARCH_MISMATCH:%s %s: the GPU is too old for it" % (gpu, need),
                  rt.supported_gpu_fix(low))


def forward_compat(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """Error 804 on a GPU forward compatibility does not serve (GeForce): the cuda-compat folder off the path."""
    gpu = next((g.value for g in ev.facts.gpus if compat.forward_compat_gpu(g.value) is False), None)
    folder = next((d.value for d in ev.facts.library_dirs if re.search(r"/compat\b", d.value)), None)
    if gpu is None and folder is None:
        # a container's CUDA newer than the host driver, whose image carries cuda-compat (fresh paste ICRA2024-5:
        # an RTX 3090 with driver 525 under CUDA 12.1): the driver that CUDA needs
        cuda = ev.facts.build_cuda() or next(iter(ev.cuda), None)
        floor = compat.min_driver(cuda, ev.driver_floor_platform) if cuda else None
        return Answer("CUDA's forward-compatibility libcuda (cuda-compat, carried by CUDA container images) was used "
                      "because the driver is older than %s needs, and the driver refuses it on this GPU: it serves "
                      "data-center GPUs only (error 804)" % ("CUDA %s" % cuda if cuda else "the program's CUDA"),
                      rt.newer_driver_or_no_compat_fix(floor.version if floor else None, ev.driver_platform))
    cause = ("%s: CUDA's forward-compatibility libcuda (cuda-compat%s) is for data-center GPUs only, and the driver "
             "refuses it (error 804)" % (("the %s is a consumer GPU" % gpu) if gpu else "this GPU",
                                         (", in %s" % folder) if folder else ""))
    return Answer(cause, rt.drop_folder_fix(folder, "the cuda-compat libcuda") if folder else rt.remove_compat_fix())


# The paste rules GPU memory out itself: "even if reduced batch size to 1" (CLRNet#24).
_SMALLEST_BATCH = re.compile(r"batch[ _]size\D{0,20}\b1\b", re.I)


def torch_cudnn_status(ev: Evidence, compat: Compat, kind: str, build: Callable[[], Fix]) -> Optional[Answer]:
    """PyTorch's "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED" (or NOT_SUPPORTED): its own cuDNN could not start, or
    has no engine for the convolution. GPU memory first for the one (unless the paste rules it out at batch size 1)
    and PyTorch's own hint, the input's layout, first for the other; then a build older than the GPU (a CUDA 10 build
    on an Ampere card: CLRNet#24, DPGN#15). A known-bad release is answered before this (answer_facts.from_releases)."""
    if ev.facts.program("PyTorch") is None:
        return None
    names: Dict[str, List[str]] = {}
    for arch in compat.architectures()[-5:]:  # the newest architectures, each with the first CUDA that knows it
        if arch.first_cuda:
            names.setdefault(arch.first_cuda, []).append(arch.name)
    older = "the PyTorch build is older than the GPU (each architecture's first CUDA: %s)" % ", ".join(
        "CUDA %s for %s" % (cuda, " and ".join(archs)) for cuda, archs in names.items())
    if kind == "cudnn-not-supported":
        return Answer("PyTorch's own cuDNN has no engine for this convolution (CUDNN_STATUS_NOT_SUPPORTED): the input "
                      "is non-contiguous or of a layout or data type this cuDNN does not take (PyTorch's own hint), or "
                      "%s" % older, contiguous_or_build_fix(build()))
    memory = not _SMALLEST_BATCH.search(ev.text)
    return Answer("PyTorch's own cuDNN could not initialise (CUDNN_STATUS_NOT_INITIALIZED): %s%s; or the driver does "
                  "not run" % ("GPU memory ran out when it created its handle, or " if memory else "",
                               older + ("" if memory else ", since it fails even at batch size 1")),
                  memory_or_build_fix(build()) if memory else build_or_memory_fix(build()))


def build_reach(ev: Evidence, compat: Compat) -> str:
    """Where the GPU is not named: how far the failing build's CUDA reaches ('; a build for CUDA 10.1 has kernels up
    to Turing GPUs: Ampere GPUs (compute capability 8.0 and up) need a build for CUDA 11.0 or newer'), from the
    build tag (+cu101), else the build's CUDA the text states, else the release's default build (compat's `stable`
    row: torch 1.4.0 is CUDA 10.1's, UFold#20), else the CUDA the text names. A GPU newer than that is the usual
    cause (Factor-Graph-Neural-Network-4: torch 1.5.1+cu101 on an RTX 3080 Ti)."""
    torch = ev.facts.program("PyTorch")
    default = compat.torch_default_cuda(torch.release) if torch is not None and torch.release and not torch.tag \
        else None
    cuda = tag_cuda(torch.tag if torch else None) or ev.facts.build_cuda() or default or next(iter(ev.cuda), None)
    if cuda is None or ver(cuda) is None:
        return ""
    known: List[Tuple[str, Any]] = []
    later: List[Tuple[str, Any]] = []
    for arch in compat.architectures():
        for cc in arch.ccs:
            first = arch.first_cuda_for(cc)
            if ver(first) is not None:
                (known if _v(first) <= _v(cuda) else later).append((cc, arch))
    if not known or not later:
        return ""
    top_arch = max(known, key=lambda pair: _v(pair[0]))[1]
    nxt, nxt_arch = min(later, key=lambda pair: _v(pair[0]))
    return "; a build for CUDA %s has kernels up to %s GPUs: %s GPUs (compute capability %s and up) need a build " \
        "for CUDA %s or newer" % (cuda, top_arch.name, nxt_arch.name, nxt, nxt_arch.first_cuda_for(nxt))
