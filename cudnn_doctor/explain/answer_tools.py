"""Answers for what a named tool says of itself: a TensorRT engine from another GPU model, ONNX Runtime listing no
CUDA provider, CTranslate2's float16 fallback, GPUs busy or held in an exclusive compute mode, JAX's cuSolver handle and its CUDA
plugin at another release than jaxlib, NCCL's NVLink SHARP transport, and pip finding
no release of a pin (the wheel index judges the paste's Python and platform). Pure: evidence and knowledge in."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from ..knowledge import Compat
from ..remedies import paste, paste_builds as builds, paste_runtime as rt, paste_tools as tools
from ..remedies.catalogue import platform_row, table_fix
from ..remedies.containers import container_gpu_fix
from ..remedies.driver import blacklist_nouveau_fix
from ..remedies.paste_answers import framework_build_for_cuda_fix
from ..remedies.frameworks import onnxruntime_gpu_fix, tensorflow_native_windows_fix
from ..versions import major_of, ver
from .answered import Answer, clause
from .evidence import Evidence

# TensorRT's words: "expecting compute 6.1 got compute 7.5" (this GPU, then the one the engine was built on)
_TRT_DEVICE = re.compile(r"expecting compute (\d+\.\d+) got compute (\d+\.\d+)")
# pip's words: the requirement, then the releases it found for this Python and platform ("none", or a list)
_PIP_NO_RELEASE = re.compile(r"Could not find a version that satisfies the requirement (\S+) (?:\(from [^)]{1,200}\) )?"
                             r"\(from versions: ([^)]{0,4000})\)")
_DOCKER_CUDA = re.compile(r"unsupported CUDA version: driver (\d+\.\d+) < image (\d+\.\d+)")
_PADDLE_ARCH = re.compile(r"The GPU architecture in your current machine is (\w+), which is not compatible with Paddle "
                          r"installation with arch: ([\d ]{1,60})")
_PLATFORM_NODE = {"windows": ("win32", "AMD64"), "linux": ("linux", ""), "wsl": ("linux", "")}


def from_tools(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    if kind == "trt-engine-device":
        m = _TRT_DEVICE.search(ev.text)
        here, built = m.groups() if m else ("?", "?")
        return Answer("the TensorRT engine was built on a GPU of compute capability %s, and this GPU is %s: an engine "
                      "holds kernels for the GPU model that built it" % (built, here), tools.trt_engine_device_fix())
    if kind == "ort-cpu-providers":
        return Answer("ONNX Runtime lists only its CPU (and Azure) providers: the CPU-only onnxruntime package is "
                      "installed, alone or beside onnxruntime-gpu, whose files it overwrote (both install the same "
                      "onnxruntime folder)", onnxruntime_gpu_fix())
    if kind == "ct2-float16-fallback":
        return Answer("CTranslate2's float16 warning is harmless: this GPU has no efficient float16 path, so the "
                      "model's float16 weights run as float32 on the same GPU (compute_type=\"float32\" or "
                      "\"int8_float32\" asks for that and silences it)", paste.harmless(), False)
    if kind == "cusolver-handle":
        ptxas = re.search(r"You are using ptxas (\d+\.\d+)(?:\.\d+)?", ev.text)
        cuda = next((c for c in ev.cuda if major_of(c) in (12, 13)), None)
        return Answer("cuSolver could not create its handle (cusolverDnCreate): the CUDA libraries and ptxas JAX uses "
                      "do not fit each other or the driver%s, or XLA's preallocation left cuSolver no GPU memory" % (
                          " (ptxas %s, older than this jaxlib wants)" % ptxas.group(1) if ptxas else
                          " (a pip nvidia-cuda-nvcc newer than the driver runs, or an image's older CUDA stack)"),
                      tools.cusolver_handle_fix(major_of(cuda) or 12 if cuda else 12))
    if kind == "nccl-nvls":
        driver = ev.facts.driver.value if ev.facts.driver else ""
        return Answer("NCCL's NVLink SHARP (NVLS) transport failed: on an NVSwitch system NVLS needs the Fabric "
                      "Manager service of exactly the driver's version running, and the GPUs reset after Fabric "
                      "Manager restarts", tools.nvls_fix(driver))
    if kind == "cupy-cuda-headers":
        headers = re.search(r"cupy[\\/]_cuda[\\/]cuda-(\d+\.\d+)", ev.text)  # the CUDA they are from
        if headers or re.search(r"\bcupy", ev.text, re.I):
            return Answer("CuPy's run-time compile (NVRTC) found no CUDA runtime headers: its float16 headers%s "
                          "include vector_types.h, which comes with a CUDA Toolkit or the CUDA runtime wheel, and "
                          "neither is here" % (" (CUDA %s's)" % headers.group(1) if headers else ""),
                          tools.cuda_runtime_headers_fix(compat, headers.group(1) if headers else None))
        return Answer("a run-time compile (NVRTC) found no CUDA runtime headers: they come with a CUDA Toolkit, on the "
                      "include path the program gives NVRTC (CUDA_HOME or CUDA_PATH), or the CUDA runtime wheel's "
                      "include folder", tools.cuda_runtime_headers_fix(compat, None))
    if kind == "trt-engine-version":
        return Answer("the TensorRT engine was built by another TensorRT release than the one loading it (most often "
                      "two TensorRT installs: trtexec from one, the Python package from another)", rt.trt_rebuild_fix())
    if kind == "tf-insufficient-driver":
        return _tf_driver(ev, compat)
    if kind == "nccl-duplicate-gpu":
        bus = re.search(r"both on CUDA device ([0-9a-fA-F]+)", ev.text)
        return Answer("two ranks of one NCCL communicator run on the same GPU%s, which NCCL refuses (invalid "
                      "usage): every process took the same device (one hard-coded, or none set so each took GPU 0), or "
                      "more processes were started than GPUs" % (" (PCI bus id %s)" % bus.group(1) if bus else ""),
                      builds.rank_per_gpu_fix())
    if kind == "pip-no-release":
        return _no_release(ev)
    if kind == "uv-no-wheel":
        return _uv_no_wheel(ev)
    if kind == "cuda-lazy-loading":
        return Answer("TensorRT's 'CUDA lazy loading is not enabled' is harmless: it only says that loading kernels when "
                      "first used (CUDA_MODULE_LOADING=LAZY) would save device memory and start-up time",
                      paste.harmless(), False)
    if kind == "ngc-no-driver":
        return Answer("the container found no NVIDIA driver: it was started without the GPUs (no --gpus, no NVIDIA "
                      "runtime), so none of the host driver's files were mounted", container_gpu_fix())
    if kind == "nvidia-docker-cuda-version":
        m = _DOCKER_CUDA.search(ev.text)
        has, image = m.groups() if m else ("?", "?")
        floor = compat.min_driver(image, ev.driver_floor_platform) if m else None
        return Answer("the image is CUDA %s and the host driver runs CUDA %s%s" % (
            image, has, ": CUDA %s needs driver %s or newer" % (image, floor.version) if floor else ""),
            tools.driver_or_older_image_fix(paste.driver_fix(floor.version if floor else None, ev.driver_platform), has))
    if kind == "nvrm-probe-not-called":
        return Answer("the NVIDIA kernel module did not bind the GPUs: another driver (nouveau, nvidiafb, rivafb) "
                      "owns them", blacklist_nouveau_fix(False))
    if kind == "not-compiled-with-cuda":
        arm = bool(re.search(r"aarch64|arm64|\bARM\b|Jetson", ev.text, re.I))
        ct2 = ev.facts.runs("CTranslate2")
        return Answer("the installed %s is a CPU-only build%s" % (
            "CTranslate2" if ct2 else "package", ": CTranslate2's wheels for AArch64 have no CUDA" if ct2 and arm
            else ""), tools.ctranslate2_cuda_fix(arm) if ct2 else tools.gpu_build_fix())
    if kind == "paddle-arch-list":
        return _paddle_arch(ev, compat)
    if kind == "tf-no-gpu-listed":
        return _tf_no_gpu(ev, compat)
    if kind == "tf-cannot-dlopen":
        return _tf_cannot_dlopen(ev, compat)
    if kind == "jax-plugin-jaxlib-mismatch":
        return _jax_plugin(ev)
    if kind == "devices-busy":  # the status table's words for cudaErrorDevicesUnavailable: data, as check's
        entry = platform_row(compat.status_words("cudaErrorDevicesUnavailable"), ev.platform)
        return Answer(clause(entry["diagnosis"]), table_fix(entry))
    return None


def _tf_driver(ev: Evidence, compat: Compat) -> Answer:
    """TensorFlow's own 'possibly insufficient driver version' after cuDNN failed: the driver it read against the
    floor of the CUDA the text names (TensorFlow 1.5 on CUDA 9.0 needs 384.81; the reporter had 384.69)."""
    said = re.search(r"possibly insufficient driver version: (\d+\.\d+)(?:\.0\b|(\.\d+))?", ev.text)
    have = said.group(1) + (said.group(2) or "") if said else None
    floor = next((f for f in (compat.min_driver(c, ev.driver_floor_platform) for c in ev.cuda) if f is not None), None)
    older = floor is not None and floor.version is not None and have is not None and \
        Version(have) < Version(floor.version)
    return Answer("cuDNN could not start and TensorFlow's own check names the driver%s%s" % (
        " (%s)" % have if have else "",
        ": it is older than CUDA %s needs (driver %s or newer)" % (floor.cuda, floor.version)
        if floor is not None and older else ""),
        paste.driver_fix(floor.version if floor else None, ev.driver_platform))


def _tf_no_gpu(ev: Evidence, compat: Compat) -> Answer:
    """TensorFlow lists no GPU: its release and the platform decide which build it is (compat's tensorflow_windows
    and tensorflow_linux tables, as CD703 and TensorFlow's own install page say)."""
    tf = ev.facts.program("TensorFlow")
    release = ver(tf.release) if tf and tf.release else None
    if "[and-cuda]" in ev.text:  # installed as its page says, yet no GPU: a release's own bug, where the text allows it
        rows = compat.known_bad("tensorflow", str(release)) if release else compat.flagged("tensorflow",
                                                                                           "no_gpu_with_wheels")
        known = next((r for r in rows if r.get("no_gpu_with_wheels")), None)
        if known is not None:
            return Answer("%s%s (%s)" % ("" if release else "if this is TensorFlow %s: " % known["version"].lstrip("=<>~"),
                                          known["problem"], known["source"].split(" ")[0]),
                          tools.tf_wheels_on_path_fix())
    last_gpu, wheels_from = compat.tensorflow_last_windows_gpu(), compat.tensorflow_pip_wheels_from()
    if release is None or last_gpu is None or wheels_from is None:
        return Answer("TensorFlow lists no GPU: a CPU-only TensorFlow (2.11 and newer on native Windows, or one "
                      "installed without its CUDA libraries), or CUDA and cuDNN libraries it cannot load; its log "
                      "lines before this ('Could not load dynamic library ...') name them", tools.tf_gpu_fix())
    row = next((r for r in compat.framework_rows("tensorflow_windows") if ver(r["tensorflow"]) == last_gpu), None)
    windows = tensorflow_native_windows_fix(str(last_gpu), row)
    linux = tools.tf_linux_gpu_fix(str(release), release >= wheels_from, compat.tensorflow_row(str(release)))
    native = "TensorFlow %s has no GPU support on native Windows (%s was the last release with it)" % (release,
                                                                                                      last_gpu)
    on_linux = ("on Linux and WSL2, TensorFlow %s brings its CUDA and cuDNN only with its [and-cuda] extra" % release
                if release >= wheels_from else "on Linux, TensorFlow %s needs the CUDA and cuDNN it was built with "
                "installed where it loads them" % release)
    if ev.platform == "windows" and release > last_gpu:
        return Answer(native, windows)
    if ev.facts.os or release <= last_gpu:  # a platform the text states (Windows is above), or a release with a GPU
        return Answer("TensorFlow %s lists no GPU: %s" % (release, on_linux), linux)
    return Answer("TensorFlow %s lists no GPU: %s; %s" % (release, native, on_linux),
                  tools.either_platform_fix(windows, linux))


def _tf_cannot_dlopen(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """TensorFlow's 'Cannot dlopen some GPU libraries' where the text names the release: the CUDA and cuDNN that
    release is built for (compat's tested build configurations), then what TensorFlow lists no GPU for; installed
    with its [and-cuda] extra, the nvidia-* wheels' folders put where it looks (tensorflow#117538: TensorFlow 2.21
    under WSL with a 13.2 toolkit installed, fixed by CUDA 12's folders on the path)."""
    tf = ev.facts.program("TensorFlow")
    release = ver(tf.release) if tf and tf.release else None
    row = compat.tensorflow_row(str(release), "windows" if ev.platform == "windows" else "linux") if release else None
    if release is None or row is None or not {"cuda", "cudnn"} <= set(row):
        return None
    built = "TensorFlow %s is built for CUDA %s and cuDNN %s (its tested build configuration)" % (
        release, row["cuda"], row["cudnn"])
    wheels_from = compat.tensorflow_pip_wheels_from()
    if "[and-cuda]" in ev.text and wheels_from is not None and release >= wheels_from:
        return Answer("TensorFlow could not load one of its CUDA/cuDNN libraries and skipped the GPU: %s, which its "
                      "[and-cuda] extra installs as nvidia-* wheels; installed that way, it did not find them" % built,
                      tools.tf_wheels_on_path_fix())
    answer = _tf_no_gpu(ev, compat)
    return Answer("TensorFlow could not load one of its CUDA/cuDNN libraries and skipped the GPU: %s; %s" % (
        built, answer.cause), answer.fix)


# JAX's words: "JAX plugin jax_cuda12_plugin version 0.9.2 is installed, but it is not compatible with the installed
# jaxlib version 0.9.0.1"
_JAX_PLUGIN = re.compile(r"JAX plugin jax_cuda(\d+)_plugin version (\S+) is installed,\s+but it is not compatible with "
                         r"the installed jaxlib version (\d[\w.]*\d)")


def _jax_plugin(ev: Evidence) -> Answer:
    """The CUDA plugin's two wheels at jaxlib's release where PyPI has them for it; else JAX's CUDA extra, which
    installs jax, jaxlib and the plugin at one release."""
    m = _JAX_PLUGIN.search(ev.text)
    if m is None:
        return Answer("JAX's CUDA plugin is another release than jaxlib, so JAX does not load it",
                      tools.jax_cuda_extra_fix(12))
    cuda, plugin, jaxlib = m.groups()
    from ..knowledge.wheel_index import load_wheel_index  # why: the wheel index loads in 0.9 s; only this needs it

    index = load_wheel_index()
    wheels = ["jax-cuda%s-plugin" % cuda, "jax-cuda%s-pjrt" % cuda]
    pinned = all(jaxlib in index.versions(w) for w in wheels)
    return Answer("jax-cuda%s-plugin %s (with jax-cuda%s-pjrt) is installed beside jaxlib %s, and JAX loads its CUDA "
                  "plugin only at jaxlib's own release: the GPU backend is missing (a loosely pinned jax[cuda%s] "
                  "brought a newer plugin)" % (cuda, plugin, cuda, jaxlib, cuda),
                  tools.jax_plugin_at_fix(wheels, jaxlib) if pinned else tools.jax_cuda_extra_fix(int(cuda)))


def _none_admitted(ev: Evidence, req: Requirement, listed: List[str]) -> Optional[Answer]:
    """pip lists releases, none in the range asked for, of a project the wheel index does not hold: pip lists only
    releases with a file it can install on this Python and platform, so those in the range have none here (or do not
    exist). Which Python they need is not in the text: said so, not guessed (cumm-28: spconv's cumm<0.5.0,>=0.4.5)."""
    if not listed or not req.specifier or any(v in req.specifier for v in listed):
        return None
    asker = re.search(r"requirement %s \(from ([\w.\[\]-]+)" % re.escape(str(req)), ev.text)
    python = " %s" % ev.python if ev.python else ""
    return Answer("no release of %s in %s%s has a file pip can install on this Python%s and platform: pip lists only "
                  "the releases that do (%s), so those in the range have wheels for other Pythons or platforms only, "
                  "or do not exist" % (req.name, req.specifier, (" (which %s asks for)" % asker.group(1)) if asker
                                       else "", python, ", ".join(listed[-6:])),
                  tools.range_wheels_fix(req.name, str(req.specifier), asker.group(1) if asker else None))


def _no_release(ev: Evidence) -> Optional[Answer]:
    """pip found no release of the requirement for this Python and platform: the wheel index says why, for the
    projects it holds (others are left to the other families)."""
    m = _PIP_NO_RELEASE.search(ev.text)
    if m is None:
        return None
    try:
        req = Requirement(m.group(1).strip("'\""))
    except InvalidRequirement:
        return None
    from ..knowledge.resolve import newest  # why: the wheel index loads in 0.9 s; only this answer needs it
    from ..knowledge.wheel_index import Node, load_wheel_index

    index, project = load_wheel_index(), req.name.lower()
    python = ev.python or ""
    if not index.versions(project):
        # an index this one does not hold (Paddle's own): pip saw no file for the Python the paste states
        if python and not _listed(m.group(2)):
            return Answer("pip found no release of %s for Python %s at the index it read (from versions: none): that "
                          "index has no wheel of it for this Python (a release made before Python %s came out has "
                          "none)" % (project, python, python), tools.older_python_fix(project, python))
        return _none_admitted(ev, req, _listed(m.group(2)))
    platform, machine = _PLATFORM_NODE.get(ev.platform, ("linux", ""))
    node = Node(python=python, machine=machine, platform=platform)
    listed = _listed(m.group(2))
    pinned = next((s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version), None)
    where = "Python %s%s" % (python or "in use", " on Windows" if platform == "win32" else "")
    if not listed:
        release = _release_held(index, project, pinned)
        miss = index.installable(project, release, node) if python and release else None
        if miss is not None and release is not None:  # the pinned release has no wheel for the paste's Python
            use = _python_for(index, project, release, node)
            return Answer("%s: pip saw no file of %s for Python %s (from versions: none)" % (miss.text, project, python),
                          tools.release_python_fix(project, pinned or release, use, ev.platform, _pip_source(ev.text))
                          if use else
                          tools.bitness_or_pip_fix(ev.platform))
        found = newest(index, project, "", node)
        if python and found.version is None:
            latest = newest(index, project, "", Node(machine=machine, platform=platform)).version
            use = _python_for(index, project, latest, node) if latest else None
            return Answer("no release of %s has a wheel for %s (%s)" % (project, where, "; ".join(found.why_none())),
                          tools.other_python_fix(project, use, ev.platform) if use else
                          tools.bitness_or_pip_fix(ev.platform))
        return Answer("pip found no release of %s at all, though %s has wheels for %s: the Python is 32-bit, or pip "
                      "is too old to read the wheels' tags" % (project, project, where),
                      tools.bitness_or_pip_fix(ev.platform))
    if pinned is None or pinned in listed:
        return None
    miss = index.installable(project, pinned, node)
    why = miss.text if miss is not None else "%s %s has no wheel for %s" % (project, pinned, where)
    admitted = [v for v in listed if v in req.specifier] or listed
    cause = "%s; pip lists the releases that install here (%s to %s)" % (why, listed[0], listed[-1])
    use = _python_for(index, project, pinned, node) if python else None
    fix = tools.listed_or_other_python_fix(project, admitted[-1], use, pinned, ev.platform) if use else \
        tools.listed_release_fix(project, admitted[-1])
    return Answer(cause, fix)


# uv's words: "`torch==2.5.1 @ registry+https://pypi.org/simple` can't be installed because it doesn't have a source
# distribution or wheel for the current platform" (the name may be cut off in a paste); the command names it too
_UV_NO_WHEEL = re.compile(r"`([A-Za-z][\w.-]{0,80})?(?:==([\w.+!-]{1,40}))?\s{0,3}@ registry\+\S{1,200}` can't be installed")
_UV_COMMAND = re.compile(r"\buv (?:add|pip install)\s{1,3}([A-Za-z][\w.-]{0,80})")


def _uv_no_wheel(ev: Evidence) -> Optional[Answer]:
    """uv found no wheel of a release for this Python and platform: the wheel index names the first release that
    has one (an older pin or lock has none), else the Python nearest that one does."""
    m = _UV_NO_WHEEL.search(ev.text)
    named = (m.group(1) if m else None) or next((c.group(1) for c in _UV_COMMAND.finditer(ev.text)), None)
    python = ev.python or ""
    if not named or not python:
        return None
    from ..knowledge.wheel_index import Node, load_wheel_index  # why: loads in 0.9 s; only these answers need it

    index, project = load_wheel_index(), named.lower()
    platform, machine = _PLATFORM_NODE.get(ev.platform, ("linux", ""))
    node = Node(python=python, machine=machine, platform=platform)
    releases = index.versions(project)
    fits = [v for v in releases if index.installable(project, v, node) is None]
    where = "Python %s%s" % (python, " on Windows" if platform == "win32" else "")
    if not fits:
        use = _python_for(index, project, releases[0], node) if releases else None
        return Answer("no release of %s has a wheel for %s" % (project, where),
                      tools.other_python_fix(project, use, ev.platform) if use else tools.bitness_or_pip_fix(ev.platform))
    first = fits[-1]  # releases are newest first
    version = m.group(2) if m else None
    return Answer("%s has no wheel for %s: its first release with one is %s (the wheel index), so a pin or lock "
                  "older than that cannot install there" % (
                      ("%s %s" % (project, version)) if version else "the release of %s uv picked" % project, where,
                      first), tools.uv_floor_fix(project, first))


def _paddle_arch(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """Paddle's own check: the GPU's architecture by name and the architectures the installed build has."""
    m = _PADDLE_ARCH.search(ev.text)
    arch = next((a for a in compat.architectures() if m and a.name.lower() == m.group(1).lower()), None)
    if m is None or arch is None:
        return None
    first = arch.first_cuda
    built = ", ".join("sm_%s" % a for a in m.group(2).split())
    return Answer("the installed paddlepaddle-gpu has kernels for %s only; this GPU is %s (compute capability %s), "
                  "whose kernels come with CUDA %s or newer" % (built, arch.name, ", ".join(arch.ccs), first),
                  framework_build_for_cuda_fix("PaddlePaddle", first))


def _listed(text: str) -> List[str]:
    return [] if text.strip() == "none" else [v.strip() for v in text.split(",") if v.strip()]


# the index or links a pasted pip command read: "-f https://www.paddlepaddle.org.cn/whl/windows/mkl/avx/stable.html"
_PIP_SOURCE = re.compile(r"\bpip3?(?:\.exe)? install\b[^\n]{0,400}?\s(-f|--find-links|-i|--index-url|--extra-index-url)"
                         r"[ =](https?://[^\s'\"]{1,300})")


def _pip_source(text: str) -> Optional[Tuple[str, str]]:
    m = _PIP_SOURCE.search(text)
    return (m.group(1), m.group(2)) if m else None


def _release_held(index, project: str, pinned: Optional[str]) -> Optional[str]:
    """The pinned release as the wheel index holds it: itself, or its public release without a local or post tag
    (paddlepaddle-gpu==2.5.1.post120 from Paddle's own index is PyPI's 2.5.1 built for CUDA 12.0)."""
    if not pinned:
        return None
    held = index.versions(project)
    base = re.sub(r"(?:\.post\d+)?(?:\+[\w.]+)?$", "", pinned)
    return pinned if pinned in held else base if base in held else None


def _python_for(index, project: str, version: str, node) -> Optional[str]:
    """The Python 3 minor nearest the node's that the release has a wheel for (the newer of two as near)."""
    from dataclasses import replace

    have = int(node.python.split(".")[1]) if node.python.count(".") == 1 else None
    if have is None:
        return None
    for d in range(1, 12):
        for n in (have - d, have + d):
            if n > 5 and index.installable(project, version, replace(node, python="3.%d" % n)) is None:
                return "3.%d" % n
    return None
