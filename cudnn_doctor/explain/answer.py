"""The answer a paste alone gives: its cause, one fix, and whether it is a problem at all, from the decoded
evidence in a fixed order of how decisive each kind is. Pure: evidence and knowledge in, sentences and a Fix out."""
from __future__ import annotations

import re
from typing import Any, Callable, Dict, List, Optional

from ..knowledge import Compat
from ..knowledge.sonames import split_library
from ..model import Fix
from ..remedies import paste, paste_builds as builds, paste_runtime as rt
from ..remedies.onnxruntime import onnxruntime_windows_dlls_fix
from ..remedies.paste_answers import cupy_wheel_of_cuda_fix, library_or_framework_build_fix, torch7_loaded_branch_fix
from ..versions import major_of, soname_major, split_soname, ver
from .answer_facts import from_releases, torch_dll
from .answer_symbols import from_loader
from .answer_wheels import from_wheels
from .answer_builds import from_extension_abi
from .answer_dlopen import cudnn_needs_cublas, sublibrary_on_path, torch7_bindings
from .answer_install import from_pip
from .answer_pairs import onnxruntime_beside_torch, onnxruntime_for_cuda, onnxruntime_own_cuda, onnxruntime_release_cudnn
from .answer_signals import from_signals, from_statuses
from .answer_states import started_without_gpus
from .answered import Answer
from .evidence import Evidence
from .paste_facts import FRAME_PACKAGE

_RULE_WORDS = {"same-minor": "the same major and minor", "same-major-newer-minor": "the same major and an equal or "
               "newer minor", "not-older": "the same or a newer release", "same-major": "the same major",
               "exact": "the very same release"}


def _checks(ev: Evidence, compat: Compat) -> Optional[Answer]:
    bad = next((c for c in ev.checks if not c.fits), None)
    if bad is None:
        return None
    said = ("loaded %s %s" % (bad.library, bad.runtime)) if bad.runtime else "found none it accepts"
    cause = "%s was built with %s %s and %s; its check needs %s" % (
        bad.framework, bad.library, bad.compiled, said, _RULE_WORDS.get(bad.rule, bad.rule))
    major = major_of(bad.compiled)
    if bad.library == "TensorRT":
        return Answer(cause, rt.trt_rebuild_fix())
    loaded = major_of(bad.runtime)
    branches = (compat.version_check_rule(bad.framework, bad.library) or {}).get("branches", [])
    if loaded is not None and "R%d" % loaded in branches:  # Torch7's cudnn.torch: a branch of the bindings per cuDNN major
        return Answer(cause + "; the cudnn.torch bindings bind one cuDNN major per branch (R%s for cuDNN %s)" % (
            major, major), torch7_loaded_branch_fix(loaded))
    if bad.library != "cuDNN" or major is None:
        toolkit = paste.toolkit_release_fix(compat, bad.compiled, ev.platform)
        return onnxruntime_for_cuda(bad, ev, compat, toolkit) or Answer(cause, toolkit)
    paired = onnxruntime_beside_torch(bad, ev, compat) or onnxruntime_own_cuda(ev, compat)
    if paired is not None:
        return paired
    # The CUDA the program itself says it needs (ONNX Runtime's "CUDA 12.*"), else its build's, else one stated.
    cuda = next((c.compiled for c in ev.checks if c.framework == bad.framework and c.library == "CUDA"), None) or \
        ev.facts.build_cuda() or next(iter(ev.cuda), None)
    wheel = compat.cudnn_wheel(major_of(cuda)) if cuda else None
    if wheel and bad.framework == "ONNX Runtime" and any(p.name == wheel for p in ev.facts.packages):
        return Answer(cause + "; %s is installed, but ONNX Runtime searches only the loader's path" % wheel,
                      rt.wheel_lib_path_fix("nvidia.cudnn", wheel))
    at_least = None if bad.rule == "same-major" else bad.compiled
    install = paste.cudnn_release_fix(compat, major, at_least, bad.rule in ("same-minor", "exact"), cuda)
    shadow = paste.shadowed_library_fix("libcudnn.so.%d" % major if ev.platform != "windows" else
                                        "cudnn64_%d.dll" % major, bad.compiled, ev.platform)
    if bad.framework == "PyTorch" and bad.runtime:  # it bundles its cuDNN: an older one found first shadows it
        return Answer(cause + "; PyTorch bundles cuDNN %s, so another copy (%s) found first shadows it" % (
            bad.compiled, bad.runtime), paste.shadow_or_install(shadow, install))
    if bad.runtime and _older(bad.runtime, bad.compiled):  # an older cuDNN loaded: the newer may be there, behind it
        return Answer(cause + "; where cuDNN %s is installed too, another copy (the older %s) is found first" % (
            bad.compiled, bad.runtime), paste.shadow_or_install(shadow, install))
    return Answer(cause, install)


def _older(runtime: str, compiled: str) -> bool:
    r, c = ver(runtime), ver(compiled)
    return r is not None and c is not None and r.release[:2] < c.release[:2]


def _symbol_floor(symbol: str) -> Optional[str]:
    m = re.search(r"_(\d+)_(\d+)$", symbol)
    return "%s.%s" % m.groups() if m else None


# PyTorch's RPATH $ORIGIN/../../../.. from site-packages/torch/lib is the environment's own lib folder: where a conda
# cudatoolkit package puts its CUDA libraries (SentAlign#3: its libcublas.so.11 mixed with another libcublasLt)
_ENV_LIB = re.compile(r"torch/lib/(?:\.\./){4}(lib\w+\.so[.\d]*)")


def _older_copy_fix(f: Any, compat: Compat, ev: Evidence) -> Fix:
    """The older copy taken off the path; for cuDNN, where it is the only one (jax-2494: cuDNN 7.4.2 lacked a symbol
    jaxlib needs; 7.6.5 had it), its major's last release too (compat's release list)."""
    shadowed = paste.shadowed_library_fix(f.node, None, ev.platform)
    major = soname_major(f.library) if f.library.startswith("libcudnn") else None
    newest = compat.cudnn_releases(major)[-1:] if major else []
    return paste.or_newest_release_fix(shadowed, major, newest[0]) if major and newest else shadowed


def _loader(ev: Evidence, compat: Compat) -> Optional[Answer]:
    env_lib = _ENV_LIB.search(ev.text)
    if env_lib and any(f.kind in ("undefined-symbol", "node-not-defined") for f in ev.loader):
        f = next(f for f in ev.loader if f.kind in ("undefined-symbol", "node-not-defined"))
        sibling = f.node or f.library
        return Answer("%s needs %s from %s, which the copy loaded lacks: two builds are mixed. The %s PyTorch "
                      "loaded is the one in the environment's own lib folder (its RPATH $ORIGIN/../../../.. reaches "
                      "it), a conda cudatoolkit package's; the %s beside it is another build, or another copy found "
                      "first" % (env_lib.group(1), f.symbol, sibling, env_lib.group(1), sibling),
                      paste.conda_or_shadow_fix(env_lib.group(1), sibling))
    for f in ev.loader:
        if f.kind == "undefined-symbol" and f.node:
            floor = _symbol_floor(f.symbol)
            return Answer("%s needs %s from %s%s, but another copy of %s (an older one) was loaded first" % (
                f.caller or "a library", f.symbol, f.node, (" (CUDA %s or newer)" % floor) if floor else "",
                f.node), paste.shadowed_library_fix(f.node, floor, ev.platform))
        if f.kind == "node-not-defined" and any(g.kind == "no-version-info" and g.library == f.library
                                                for g in ev.loader):
            return Answer("the %s that loads has no symbol version information (another build of it) while the "
                          "program was linked against NVIDIA's versioned %s" % (f.library, f.node),
                          paste.shadowed_library_fix(f.node, None, ev.platform))
        if f.kind == "node-not-defined":
            return Answer("two copies of %s are mixed: the one loaded lacks %s, which its sibling library was "
                          "linked against" % (f.library, f.symbol or "the version node " + f.node),
                          _older_copy_fix(f, compat, ev))
        if f.kind == "version-not-found" and f.library.startswith("libstdc++"):
            return Answer("the libstdc++.so.6 that loads is older than %s needs (%s)" % (
                f.caller or "a library", f.node), paste.libstdcxx_fix(f.node, ev.platform))
        if f.kind == "version-not-found":
            return Answer("the %s that loads is older than %s needs (version node %s)" % (
                f.library, f.caller or "the program", f.node), paste.shadowed_library_fix(f.library, None,
                                                                                          ev.platform))
        if f.kind == "wrong-elf-class":
            return Answer("a %s of the wrong architecture (32-bit) is found first" % f.library,
                          paste.wrong_class_fix(f.library))
    return None


def _loader_missing(ev: Evidence, compat: Compat) -> Optional[Answer]:
    missing = [f.library for f in ev.loader if f.kind in ("missing", "permission")]
    needed = _needed(ev, compat, missing)
    return _missing(ev, compat, needed) if needed else _optional_only(ev, compat, missing)


def _needed(ev: Evidence, compat: Compat, names: List[str]) -> List[str]:
    """The missing libraries the program needs: not those it opens only for an optional feature it then runs
    without (TensorFlow's TensorRT libraries, for TF-TRT)."""
    return [n for n in names if _optional(ev, compat, n) is None]


def _optional(ev: Evidence, compat: Compat, name: str) -> Optional[Dict[str, Any]]:
    row = compat.optional_library(split_soname(name)[0])
    return row if row is not None and (ev.facts.runs(row["program"]) or row["said"] in ev.text) else None


def _optional_only(ev: Evidence, compat: Compat, names: List[str]) -> Optional[Answer]:
    """Every missing library is one the program opens only for an optional feature: a warning, harmless unless
    that feature is wanted."""
    rows = [r for r in (_optional(ev, compat, n) for n in names) if r is not None]
    if not rows:
        return None
    row = rows[0]
    return Answer("harmless: %s could not open %s's %s, which it opens only for %s; it runs without them (%s)" % (
        row["program"], row["product"], ", ".join(dict.fromkeys(names)), row["feature"], row["source"].split(" ")[0]),
        rt.harmless_warning("install %s only if you use %s" % (row["product"], row["feature"])), False)


# Libraries only PyTorch's own wheel ships (torch/lib): libcaffe2_nvrtc.so, libtorch_cuda.so, libc10_cuda.so, libshm.so
_FRAMEWORK_OWN = re.compile(r"lib(?:caffe2_\w+|torch(?:_\w+)?|c10(?:_\w+)?|shm)\.so$")


def _missing(ev: Evidence, compat: Compat, names: List[str]) -> Optional[Answer]:
    shipped = [s for s in ev.libraries if s.name in names] or [s for s in ev.libraries if s.name.endswith(".dll")]
    own = next((n for n in names if _FRAMEWORK_OWN.match(n)), None)
    if not shipped and own:  # a library the framework's own wheel ships beside it: its install is incomplete
        return Answer("PyTorch's own library %s is missing: the PyTorch install is incomplete or broken (the wheel "
                      "ships it in torch/lib)" % own, rt.reinstall_package_fix("torch", windows=False))
    if not shipped and names and ev.platform != "windows":  # a name no table dates: where it is, on the path
        return Answer("the loader does not find %s" % names[0], paste.find_library_fix(names[0]))
    if not shipped:
        return None
    first = shipped[0]
    stem = re.split(r"\.so|64_", first.name)[0]
    stem = stem if stem.startswith("lib") else "lib" + stem
    needer = next((f.caller for f in ev.loader if f.library == first.name and f.kind == "missing" and f.caller), "")
    cause = "%s is not found; it is %s's%s%s%s" % (
        first.name, first.label, "; %s itself was found, and it needs %s" % (needer, first.name) if needer else "",
        _asked_by(ev, first.label), _searched_older(ev, compat))
    # A CUDA library's fix already offers the program's build for the CUDA installed; cuDNN's names only cuDNN.
    offers_build = first.product != "cuDNN"
    if first.product == "cuDNN":
        cuda = ev.facts.build_cuda() or next((s.high for s in ev.libraries if s.product == "CUDA"), None) or \
            next(iter(ev.cuda), None)
        fix = paste.cudnn_release_fix(compat, int(first.low), cuda=cuda) if cuda else \
            _cudnn_for_either_build(ev, compat, int(first.low))
        found = onnxruntime_release_cudnn(ev, compat, first.name, int(first.low), cause) or \
            sublibrary_on_path(ev, compat, cause, fix) or torch7_bindings(ev, cause, fix)
        if found is not None and not first.name.lower().endswith(".dll"):
            return found
    else:
        fix = paste.toolkit_library_fix(compat, first, stem)
        found = _cupy_wheel(ev, compat, first.name, major_of(first.low), cause, fix) or \
            _cudnn_asks_cublas(ev, compat, first.name, cause) or \
            cudnn_needs_cublas(ev, compat, first.name, needer, cause, fix)
        if found is not None:
            return found
    fix = paste.on_windows_path(fix, first.name, compat.cudnn_installer_folder()) \
        if first.name.lower().endswith(".dll") else fix
    if _PADDLE_DEPENDS.search(ev.text):  # Paddle names the library of the CUDA its own build was made for
        cause += "; Paddle asks for the name its build was made with, so this paddlepaddle-gpu is a build for %s" % (
            first.label)
        if not offers_build:
            fix = library_or_framework_build_fix(fix, "PaddlePaddle", first.name)
    return Answer(cause, fix)


# cuDNN's own words for a library it opens itself ("Could not load library libcublasLt.so.12. Error: ..."): the cuBLAS
# it asks for is its own build's CUDA (jax-14931: the CUDA 12 build of cuDNN 8.8 on a CUDA 11.8 machine)
_CUDNN_ASKS = re.compile(r"Could not load library (libcublas(?:Lt)?\.so\.(\d+))\. Error")
_CUDNN_SAID = re.compile(r"cudnn[ =v]{0,2}([5-9])(?:\.\d|\d\b)", re.I)


def _cudnn_asks_cublas(ev: Evidence, compat: Compat, name: str, cause: str) -> Optional[Answer]:
    asked = _CUDNN_ASKS.search(ev.text)
    if asked is None or asked.group(1) != name:
        return None
    build = int(asked.group(2))
    cause += ("; cuDNN prints 'Could not load library' for what it opens itself, so the cuDNN loaded is a build for "
              "CUDA %d" % build)
    have = next((c for c in ev.cuda if major_of(c) != build), None)
    said = _CUDNN_SAID.search(ev.text)
    if have is None or said is None:
        return None
    return Answer(cause + ", and the CUDA the text has is %s: install cuDNN's build for it" % have,
                  paste.cudnn_release_fix(compat, int(said.group(1)), cuda=have))


# Paddle's dynload words: "The third-party dynamic library (cudnn64_7.dll) that Paddle depends on is not configured"
_PADDLE_DEPENDS = re.compile(r"dynamic library \([^)]{1,200}\) that Paddle depends on")


# A loader's own list of the names it tried (cudarc: 'searched for library names: ["cudart.dll", "cudart64_12.dll"]')
_SEARCHED = re.compile(r"searched for library names:\s*\[([^\]]{1,2000})\]")


def _searched_older(ev: Evidence, compat: Compat) -> str:
    """Where a loader lists the Windows runtime names it tried and none is of the newest CUDA major: that major's
    name and folder, which the program does not know (cudarc#451: CUDA 13 installed, cudart64_13.dll in bin\\x64)."""
    said = _SEARCHED.search(ev.text)
    if said is None:
        return ""
    newest = major_of(compat.newest_cuda_release())
    if newest is None:
        return ""
    read = [major_of(split[1]) for split in (split_library(m.group(0)) for m in
                                              re.finditer(r"cudart64_\d+\.dll", said.group(1))) if split]
    # cudart64_110.dll: 11; cudart64_90.dll: 9; cudart64_12.dll: 12 (CUDA 6.5's cudart64_65.dll reads 65: left out)
    majors = [m for m in read if m is not None and m < 50]
    if not majors or max(majors) >= newest:
        return ""
    return ("; the names it searched stop at CUDA %d: CUDA %d names its runtime cudart64_%d.dll and keeps it in "
            "bin\\x64, so with CUDA %d installed the program needs a release that knows it" % (
                max(majors), newest, newest, newest))


# A compiled module's import failing on the library it links (kaito-2086: nixl_ep's "from . import nixl_ep_cpp",
# then "ImportError: libcudart.so.13: ..."): the last frame's package is the one whose build asks for it.
_EXTENSION_IMPORT = re.compile(r"\bimport [\w., ]{1,200}[ \t]*\r?\n[^\n]*ImportError: [^\n:]*\.so\S*: cannot open")


def _asked_by(ev: Evidence, label: str) -> str:
    """'; the mxnet package loads it: its build is for CUDA 9.0' where a traceback shows the package whose library
    asked (sockeye-787: MXNet's cu90 wheel on a CUDA 9.1 machine), so the build to change is named."""
    if not re.search(r"\bCDLL\b|\bdlopen\b|_load_lib\b|LoadLibrary", ev.text) and not _EXTENSION_IMPORT.search(ev.text):
        return ""  # no frame of the load itself: the last package named may be a wrapper's
    frames = [m.group(1) for m in FRAME_PACKAGE.finditer(ev.text) if m.group(1) not in ("nvidia", "ctypes")]
    return "; the %s package loads it: its build is for %s" % (frames[-1], label) if frames else ""


# The programs whose PyPI builds come for more than one CUDA major, by the key their builds are known under.
_BUILT_PER_CUDA = {"ONNX Runtime": "onnxruntime", "CuPy": "cupy"}


def _cudnn_for_either_build(ev: Evidence, compat: Compat, major: int) -> Fix:
    """A cuDNN that is missing, where the paste says neither the CUDA nor the release of a program whose builds
    come for several CUDA majors (onnxruntime-gpu 1.26 for CUDA 12, 1.31 for 13), or names no such program at all:
    the wheel for each, the build deciding; never a guess (fresh paste rembg-798 was told CUDA 13's for what was
    most likely a CUDA 12 build)."""
    program = next((p for p in ev.facts.programs if p.name in _BUILT_PER_CUDA and not p.release), None)
    builds = compat.framework_builds(_BUILT_PER_CUDA[program.name]) if program is not None else []
    newest: Dict[str, str] = {}
    for build in builds:  # newest release first
        newest.setdefault(str(major_of(build.cuda)), build.release)
    if program is None:  # nothing says the program's CUDA: the wheel of each CUDA major this cuDNN is built for
        return paste.cudnn_for_either_cuda_fix(compat, major)
    if len(newest) < 2:
        return paste.cudnn_release_fix(compat, major)
    return paste.cudnn_for_builds_fix(compat, major, program.name, newest)


def _cupy_wheel(ev: Evidence, compat: Compat, name: str, major: Optional[int], cause: str,
                fix: Fix) -> Optional[Answer]:
    """CuPy's wheels are one per CUDA major (compat install recipe 'cupy-cuda<M>x') and load that CUDA's libraries
    at run time: the runtime of the wheel's major, or the wheel of the CUDA the machine has."""
    pip = str(compat.install_recipe("cupy").get("pip", ""))
    if not ev.facts.runs("CuPy") or major is None or "<M>" not in pip or name.endswith(".dll"):
        return None
    have, other = pip.replace("<M>", str(major)), pip.replace("<M>", str(major + 1))
    return Answer(cause + "; CuPy's %s wheel loads CUDA %d's libraries at run time, so CUDA %d is not installed "
                  "where the loader looks" % (have, major, major),
                  cupy_wheel_of_cuda_fix(fix, have, other, major + 1))


def _windows(ev: Evidence, compat: Compat) -> Optional[Answer]:
    for w in ev.windows:
        what = w.dll or "a DLL"
        if w.code == 1455:
            return Answer("Windows' paging file is too small to map %s (error 1455)" % what, rt.paging_file_fix())
        if w.code == 127:
            return Answer("Windows loaded %s of another version, without a function its caller imports (error 127)"
                          % (("a " + w.dll) if w.dll else "a DLL"),
                          paste.shadowed_library_fix(w.dll or "*.dll", None, "windows"))
        package = _site_package(w.dll, ev) or (compat.package_of_dll(w.dll) if w.dll else None)
        if w.code == 193:
            return Answer("%s (or one of its dependencies) is not a loadable 64-bit image: 32-bit, or a damaged "
                          "download (error 193)" % what,
                          rt.reinstall_package_fix(package) if package else rt.windows_32bit_fix(w.dll))
        if w.code == 126:
            cause = "%s or one of its dependencies (a DLL it imports) is not found (error 126)" % what
            if _consumer_of(compat, w.dll) == "onnxruntime-gpu":
                ort = ev.facts.program("ONNX Runtime")
                return Answer("%s is there, but a DLL it imports is not found (error 126): the CUDA runtime, cuBLAS "
                              "or cuDNN DLLs of its build" % what,
                              onnxruntime_windows_dlls_fix(compat, ort.release if ort is not None else None))
            known = torch_dll(ev, compat, w.dll) if package == "torch" and w.dll else None
            if known is not None:
                return known
            if package:
                return Answer(cause + "; it ships in the %s wheel beside the DLLs it imports%s: a partial install, "
                              "or a wheel built without one of them" % (
                                  package, " (for torch: its CUDA, cuDNN and OpenMP DLLs)" if package == "torch" else ""),
                              rt.reinstall_package_fix(package))
            shipped = compat.shipped_by(w.dll) if w.dll else None
            zlib = compat.zlibwapi()
            if shipped is not None and shipped.product == "cuDNN" and shipped.low == "8" and zlib:
                return Answer(cause + "; cuDNN 8.3 to 8.9 on Windows also need zlibwapi.dll",
                              paste.on_windows_path(rt.zlib_fix(zlib["download"]), w.dll))
            found = _missing(ev, compat, [w.dll]) if w.dll else None
            return Answer(cause, found.fix if found else paste.windows_missing_dll_fix(w.dll))
    return None


def _consumer_of(compat: Compat, dll: str) -> Optional[str]:
    """The pip project whose library linking CUDA and cuDNN on Windows is this DLL (compat [consumers])."""
    name = (dll or "").lower()
    return next((str(r["dist"]) for r in compat.windows_consumers()
                 if name and str(r["file"]).lower().rsplit("\\", 1)[-1] == name), None)


def _site_package(dll: str, ev: Evidence) -> Optional[str]:
    """The Python package whose own folder holds a failing DLL (site-packages\\torch\\lib\\x.dll -> torch; a path
    from the package's own folder on, torch\\lib\\x.dll, names it too)."""
    m = re.search(r"site-packages[\\/]+(\w+)[\\/][^\"'\n]*?%s" % re.escape(dll), ev.text, re.I) if dll else None
    if m is None and dll:
        m = re.search(r"(?<![\w.-])(torch|onnxruntime|tensorflow|paddle|ctranslate2)[\\/]+(?:lib|capi|python)[\\/]+%s"
                      % re.escape(dll), ev.text, re.I)
    return m.group(1) if m and m.group(1) != "nvidia" else None


Step = Callable[[Evidence, Compat], Optional[Answer]]


def answer(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The first answer the evidence gives, most decisive kind first; None when it gives none."""
    steps: List[Step] = [from_pip, from_loader, from_extension_abi, _loader, from_releases, from_wheels, _checks, _windows,
                         started_without_gpus, from_signals, _loader_missing, from_statuses]
    for step in steps:
        found = step(ev, compat)
        if found is not None:
            return found
    return _missing(ev, compat, _needed(ev, compat, [s.name for s in ev.libraries])) or _any_undefined(ev, compat)


def _any_undefined(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """An undefined symbol no family knows: still the loader's own finding, said as such (a paste with nothing but
    one had been answered with an empty cause and exit 0)."""
    f = next((f for f in ev.loader if f.kind == "undefined-symbol"), None)
    if f is None:
        return None
    at = ev.text.find(f.caller) if f.caller else -1
    package = re.search(r"-packages/(\w+)/(?:[\w.-]+/){0,4}$", ev.text[max(0, at - 300):at]) if at > 0 else None
    cause = ("%s needs %s, which no library loaded before it defines: it was built against another release of the "
             "library that should define it than the one found first (a stale copy left by an earlier build or "
             "install, found ahead of the one built with it)" % (f.caller or "a library", f.symbol))
    if package:  # a Python extension: its build for what is installed here
        return Answer(cause, builds.extension_rebuild_fix(package.group(1), compat.extension_source(package.group(1))))
    return Answer(cause, paste.shadowed_library_fix(f.library, None, ev.platform) if f.library else
                  paste.unknown_symbol_fix(f.symbol))
