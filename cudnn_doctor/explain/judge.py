"""What a pasted text's libraries and versions need (from the knowledge base), what this machine has (from its
diagnosis), and the one fix that closes the gap. Pure: facts and knowledge in, sentences and a Fix out."""
from __future__ import annotations

import re
from typing import List, Optional, Sequence

from ..knowledge import Compat
from ..model import Facts, Finding, Fix, Severity
from ..queries import (compiled_cudnn, copy_for_path, cudnn_older, framework_kind, plain_resolutions,
                       working_copy)
from ..remedies.explain import cuda_for_soname, cudnn_version_fix, in_program_environment, is_toolkit_library
from ..versions import major_of, mm_text, reaches, release3, soname_major, split_soname, ver
from .evidence import VersionCheck
from .libraries import LibraryCheck
from .parse import PastedVersions


def _families_with(compat: Compat, major: int, at_least: Optional[str]) -> List[str]:
    """CUDA majors (or pre-11 minors) NVIDIA built cuDNN `major` for, not older than `at_least`."""
    out: List[str] = []
    for cuda in compat.cuda_releases():
        cm = major_of(cuda)
        key = str(cm) if compat.has_minor_compat(cm) else cuda
        newest = compat.newest_cudnn_build(key, major)
        if newest and (at_least is None or reaches(newest, at_least)) and key not in out:
            out.append(key)
    return out


def _cudnn_need(compat: Compat, major: int, at_least: Optional[str] = None) -> str:
    cudas = _families_with(compat, major, at_least)
    built = (" (NVIDIA builds it for CUDA %s)" % ", ".join(cudas)) if cudas else ""
    if at_least:
        return "cuDNN %s or a newer cuDNN %d.x: a program built with cuDNN %s runs on the same major with the same " \
               "or a newer minor%s" % (at_least, major, at_least, built)
    return "cuDNN %d, every sub-library of one release%s" % (major, built)


def _strict_need(check: VersionCheck) -> str:
    """A check that wants the very minor (TensorFlow 1.x) or release (Theano), said as that check says it."""
    want = mm_text(check.compiled) if check.rule == "same-minor" else check.compiled
    return "%s built with cuDNN %s needs cuDNN %s%s (its check compares %s); the cuDNN %s that loaded %s" % (
        check.framework, check.compiled, want, ".x" if check.rule == "same-minor" else "",
        "major and minor" if check.rule == "same-minor" else "the whole release", check.runtime or "?",
        "fits" if check.fits else "does not fit")


def needs(compat: Compat, names: List[str], versions: PastedVersions,
          checks: Sequence[VersionCheck] = ()) -> List[str]:
    """What the pasted libraries and versions require, one sentence each (a strict framework check by its rule)."""
    out: List[str] = []
    strict = next((c for c in checks if c.library == "cuDNN" and c.rule in ("same-minor", "exact")), None)
    if strict is not None:
        out.append(_strict_need(strict))
    elif versions.compiled and major_of(versions.compiled) is not None:
        compiled_major = major_of(versions.compiled)
        assert compiled_major is not None  # checked just above; says so to the type checker
        line = _cudnn_need(compat, compiled_major, versions.compiled)
        if versions.runtime:
            bad, why = cudnn_older(versions.runtime, versions.compiled)
            line += "; the cuDNN %s that loaded %s" % (versions.runtime, ("is " + why) if bad and why else
                                                      ("fits" if not bad else "does not fit"))
        out.append("%s built with cuDNN %s needs %s" % (versions.framework or "The program", versions.compiled,
                                                        line))
    majors_said = set()
    for name in names:
        stem, version = split_soname(name)
        major = soname_major(name)
        if name.lower().endswith(".dll"):
            out.append("%s is a Windows library: Windows finds it next to the program or on PATH, not through a "
                       "Linux loader" % name)
            continue
        if stem.startswith("libcudnn") and major is not None and major not in majors_said:
            majors_said.add(major)
            if not versions.compiled:
                out.append("%s is part of %s" % (name, _cudnn_need(compat, major)))
        elif is_toolkit_library(stem) and major is not None:
            cuda = cuda_for_soname(compat, Facts(), stem, version)
            if cuda:
                out.append("%s is the CUDA %s runtime's (CUDA %s.x ships it)" % (name, cuda.split(".")[0],
                                                                                  cuda.split(".")[0]))
        elif stem == "libcuda":
            out.append("%s is the NVIDIA driver's library%s" % (name, " (cuDNN opens the unversioned name, a link "
                                                                "to libcuda.so.1)" if not version else ""))
        elif stem == "libnvrtc" and not version:
            out.append("libnvrtc.so is NVRTC's unversioned link, which cuDNN 8's runtime-compiled kernels open")
    if versions.cuda_required:
        out.append("the container demands CUDA %s or newer from the driver" % versions.cuda_required)
    return out


def machine_has(facts: Facts) -> List[str]:
    """What this machine has of the layers an error text is about, one sentence each (none left out as empty)."""
    d = facts.driver
    driver = ("NVIDIA driver %s (runs CUDA %s)" % (d.version, d.cuda_version or "?")) if d.version else \
        "no NVIDIA driver"
    tks = [t for t in facts.toolkits if t.version and not t.dangling]
    toolkits = ", ".join("CUDA %s at %s" % (t.version, t.path) for t in tks) or "no CUDA toolkit"
    copies = "; ".join("cuDNN %s at %s" % (c.version or "?", c.directory) for c in facts.cudnn) or "no cuDNN"
    out = [driver, toolkits, copies]
    loaded = [(n, r) for n, r in plain_resolutions(facts) if r.path]
    for name, res in loaded[:1]:
        copy = copy_for_path(facts, res.path, res.realpath)
        out.append("a plain process loads %s from %s%s" % (name, res.path, (" (cuDNN %s)" % copy.version)
                                                             if copy is not None and copy.version else ""))
    for fw in facts.python.frameworks:
        if fw.cudnn_version:
            out.append("%s %s was built with cuDNN %s" % (fw.name, fw.version, fw.cudnn_version))
    return out


def gaps(facts: Facts, versions: PastedVersions) -> List[str]:
    """What the pasted versions need that this machine lacks: no cuDNN copy the program (built with `compiled`)
    can load."""
    if not versions.compiled or any(c.version and not cudnn_older(c.version, versions.compiled)[0]
                                    for c in facts.cudnn):
        return []
    why = "; ".join("%s is %s" % (c.version, cudnn_older(c.version, versions.compiled)[1]) for c in facts.cudnn
                    if c.version)
    return ["no cuDNN %s or newer cuDNN %s.x is installed%s" % (versions.compiled, major_of(versions.compiled),
                                                               (" (%s)" % why) if why else "")]


def _failing_first(text: str, libraries: List[LibraryCheck]) -> List[LibraryCheck]:
    """Missing libraries, the one the loader itself failed on ("Error: X: cannot open") first, versioned next."""
    failed = set(re.findall(r"(?:Error|dlerror):\s*(?:\S*/)?(lib[\w.+-]+\.so[\d.]*?)(?=:)", text or ""))
    bad = [lib for lib in libraries if lib.problem]
    return sorted(bad, key=lambda lib: (lib.name not in failed, soname_major(lib.name) is None))


# The framework whose own version check the pasted versions came from (explain.parse), by the kind framework_kind
# gives an installed framework.
_KINDS = {"PyTorch": "torch", "TensorFlow/XLA": "tensorflow", "JAX": "jax"}


def _loads_what_it_was_built_with(compat: Compat, facts: Facts, versions: PastedVersions) -> bool:
    """Every framework here of the kind whose check the paste quotes, built with the pasted cuDNN release (major and
    minor), loads a copy its own run-time rule accepts (the H200: torch 2.11 in its venv loads its wheel's 9.19):
    the machine's other copies are not this error's, so explain offers no machine-wide cuDNN for it. Another
    framework's paste, or one of these that refuses its copy, keeps the fix."""
    kind = _KINDS.get(versions.framework)
    compiled = versions.compiled
    same = [fw for fw in facts.python.frameworks if framework_kind(fw) == kind and compiled_cudnn(fw)
            and mm_text(compiled_cudnn(fw)) == mm_text(compiled)]
    for fw in same:
        copy, built = working_copy(facts, fw), compiled_cudnn(fw)
        if copy is None or not copy.version or not compat.acceptance.accepts(kind, built, copy.version).accepts:
            return False
    return bool(same)


def one_fix(compat: Compat, facts: Facts, text: str, versions: PastedVersions, findings: List[Finding],
            libraries: List[LibraryCheck]) -> Fix:
    """The one fix explain leads with: a routed check's error, else the pasted versions' gap (unless the framework
    that printed them here already loads a cuDNN it accepts), else the library the loader failed on, else a routed
    warning or information; else where to look next."""
    for severity in (Severity.ERROR,):
        remedy = next((f.remedy for f in findings if f.severity == severity and f.remedy), None)
        if remedy is not None:
            return remedy
    if versions.compiled and not _loads_what_it_was_built_with(compat, facts, versions):
        return cudnn_version_fix(compat, facts, versions.runtime, versions.compiled)
    failing = _failing_first(text, libraries)
    first_fix = failing[0].fix if failing else None
    if first_fix is not None:
        return first_fix
    # A warning, else information with a fix (no cuDNN at all behind CUDNN_STATUS_NOT_INITIALIZED, say): what
    # `check` alone would not call a problem can still be the cause of this error.
    for severity in (Severity.WARNING, Severity.INFO):
        remedy = next((f.remedy for f in findings if f.severity == severity and f.remedy), None)
        if remedy is not None:
            return remedy
    dll_fix = next((lib.fix for lib in libraries if lib.name.lower().endswith(".dll") and lib.fix is not None), None)
    if dll_fix is not None:
        return dll_fix
    return in_program_environment(nothing_found=True)
