"""CD760-CD762: Theano (and Keras on Theano) against the cuDNN its dnn.* paths hold, judged by the checks each Theano
release runs (compat/theano.toml, read from the releases' own source)."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..knowledge.theano import cudnn_code
from ..model import CudnnCopy, Facts, Finding, Fix
from ..model_theano import TheanoInstall
from ..queries import copy_for_path, cudnn_build_exists, machine_cuda, visible_gpus
from ..remedies import machine_cudnn_fix, theano_dev_link_fix, theano_device_fix
from ..remedies.theano import (theano_accepted_copy_fix, theano_dnn_path_fix, theano_header_fix,
                               theano_header_library_fix, theano_install_cudnn_fix, theano_loaded_header_fix,
                               theano_no_cudnn_build_fix, theano_one_release_fix, theano_quiet_cudnn_advice)
from ..versions import decode_cudnn, major_of, mm, mm_of, reaches, release3, release3_of, soname_version
from . import RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding

CATALOGUE = ["G9"]  # Theano / old Keras: cuDNN headers needed at run time, version window


def setting_value(facts: Facts, key: str, default: str = "") -> str:
    """A Theano setting as Theano looks it up (THEANO_FLAGS, then the rc files), else `default`."""
    return facts.theano.settings.get(key, {}).get("value", default)


def setting_source(facts: Facts, key: str) -> Optional[str]:
    """Where a setting came from ("THEANO_FLAGS" or an rc file); None when Theano's default applies."""
    return facts.theano.settings.get(key, {}).get("from")


def backend_of(facts: Facts) -> Tuple[Optional[str], str]:
    """(back-end, device): "cuda" for device=gpu*, "gpuarray" for cuda*; None when the GPU is not used."""
    for key in ("device", "init_gpu_device"):
        device = setting_value(facts, key).strip()
        if device.startswith("gpu"):
            return "cuda", device
        if device.startswith("cuda"):
            return "gpuarray", device
    if setting_value(facts, "contexts"):
        return "gpuarray", setting_value(facts, "contexts")
    return None, setting_value(facts, "device") or "cpu"


def theano_cudnn(facts: Facts, inst: TheanoInstall) -> Tuple[Optional[CudnnCopy], Optional[str]]:
    """The cuDNN copy the compiled module loads (else the one it links) and its version."""
    copy = copy_for_path(facts, inst.load_path, inst.load_realpath) or copy_for_path(
        facts, inst.link_path, inst.link_realpath)
    version = copy.version if copy and copy.version else None
    if version is None and inst.link_realpath:
        file_version = soname_version(os.path.basename(inst.link_realpath))
        version = file_version if file_version and file_version.count(".") >= 2 else None
    return copy, version


def _accepted(check: Dict[str, Any], first_break: Optional[str], version: str, warn_ok: bool) -> bool:
    code = cudnn_code(version)
    if code is None or code < check["refuse_below"]:
        return False
    if first_break and reaches(version, first_break):
        return False
    return warn_ok or "warn_from" not in check or code < check["warn_from"]


def _fits_cuda(compat: Compat, copy: CudnnCopy, cuda: Optional[str]) -> bool:
    """A copy built for the CUDA this machine runs (per minor before CUDA 11's minor-version compatibility)."""
    a, b = mm(copy.cuda_version), mm(cuda)
    if a is None or b is None:
        return True
    return a[0] == b[0] and (compat.has_minor_compat(a[0]) or a[1] == b[1])


def _loader_misses(facts: Facts, copy: CudnnCopy, release: Dict[str, Any]) -> bool:
    """Theano 0.x adds no run path for dnn.library_path: the loader must find the copy by itself."""
    if release.get("dnn_paths") != "cuda.root":
        return False
    res = facts.loader.resolved.get("libcudnn.so.%s" % copy.major)
    return not (res and res.path and copy_for_path(facts, res.path, res.realpath) is copy)


def _repair(facts: Facts, compat: Compat, inst: TheanoInstall, backend: str, check: Dict[str, Any],
            current: Optional[str] = None,
            quiet_only: bool = False) -> Fix:
    """A cuDNN this Theano accepts: a copy already here, else one compat knows a build of, else none at all.
    `quiet_only`: only releases Theano does not even warn about (the fix for its warning), never `current`."""
    first_break = compat.theano_first_break(inst.version, backend)
    cuda = machine_cuda(facts, compat)
    release = compat.theano_release(inst.version) or {}
    passes = (False,) if quiet_only else (False, True)
    for warn_ok in passes:
        for copy in facts.cudnn:
            if copy.version and _accepted(check, first_break, copy.version, warn_ok) and not copy.load_error \
                    and _fits_cuda(compat, copy, cuda) and copy.version != current:
                include = (os.path.dirname(copy.header_path)
                           if copy.header_path and copy.header_version == copy.version else None)
                return theano_accepted_copy_fix(facts.theano, include, copy.directory, copy.version, inst.version,
                                                _loader_misses(facts, copy, release))
    for warn_ok in passes:
        releases = [r for r in compat.cudnn_releases() if _accepted(check, first_break, r, warn_ok)
                    and cuda and cudnn_build_exists(compat, r, cuda) and r != current]
        if releases:
            best = str(max(releases, key=release3_of))
            install = machine_cudnn_fix(facts, compat, cuda, mm_of(best)[0], best)
            return theano_install_cudnn_fix(facts.theano, install)
    if quiet_only:
        return theano_quiet_cudnn_advice(inst.version, current, decode_cudnn(check["refuse_below"]) or "?",
                                         decode_cudnn(check["warn_from"]) or "?", cuda)
    return theano_no_cudnn_build_fix(facts.theano, inst.version, backend, check["supports"], cuda)


def _header_fix(facts: Facts, compat: Compat, copy: Optional[CudnnCopy], version: str) -> Fix:
    """The header of the cuDNN Theano links, where the machine has it; else that release's development files."""
    for c in ([copy] if copy else []) + list(facts.cudnn):
        if c.header_path and c.header_version and release3(c.header_version) == release3(version):
            return theano_header_fix(facts.theano, os.path.dirname(c.header_path), version)
    cuda = (copy.cuda_version if copy else None) or machine_cuda(facts, compat)
    return machine_cudnn_fix(facts, compat, cuda, major_of(version), ".".join(version.split(".")[:3]))


def _gpuarray_instead(facts: Facts, compat: Compat, inst: TheanoInstall, version: str) -> Optional[Fix]:
    """On the old back-end, device=cuda* where this release's gpuarray back-end builds with the cuDNN found."""
    check = compat.theano_cudnn_check(inst.version, "gpuarray")
    first_break = compat.theano_first_break(inst.version, "gpuarray")
    if check is None or not _accepted(check, first_break, version, True):
        return None
    device = setting_value(facts, "device") if setting_value(facts, "device").startswith("gpu") else "gpu"
    return theano_device_fix(facts.theano, "device", device)


@rule("CD760", "theano-cudnn-version", "The cuDNN Theano finds is one its release refuses, warns about or cannot build",
      section="python")
def theano_cudnn_version(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    backend, device = backend_of(facts)
    enabled = setting_value(facts, "dnn.enabled", "auto")
    for inst in facts.theano.installs:
        keras = [k for k in facts.theano.keras if k.get("backend") == "theano" and k["location"] == inst.location]
        label = "Theano %s (device=%s%s)" % (inst.version, device,
                                            "; Keras %s runs on it" % keras[0]["version"] if keras else "")
        if backend is None or enabled == "False":
            out.append(finding(INFO, "%s: cuDNN is not used (%s)" % (
                label, "dnn.enabled=False" if backend else "no CUDA device configured"), catalogue=CATALOGUE))
            continue
        release = compat.theano_release(inst.version) or {}
        if backend == "cuda" and "cuda" not in release.get("backends", ["cuda"]):
            backend_judged = "gpuarray"  # device=gpu fails on its own (CD763); judge the back-end it must move to
        else:
            backend_judged = backend
        check = compat.theano_cudnn_check(inst.version, backend_judged)
        if check is None:
            continue  # a release compat has not read: say nothing rather than guess
        copy, version = theano_cudnn(facts, inst)
        evidence = {"theano": inst.version, "backend": backend_judged, "header": inst.header_path,
                    "library": (copy.path if copy else inst.load_path or inst.link_path), "cudnn": version,
                    "source": check["source"]}
        strict = ERROR if enabled == "True" else WARNING
        if version is None:
            out.append(finding(
                strict, "%s finds no cuDNN library to link (`-lcudnn`)%s" % (
                    label, ", so it runs without cuDNN" if strict is WARNING else ""),
                detail="Theano compiles its cuDNN ops against dnn.include_path/cudnn.h and links them with -lcudnn "
                       "from dnn.library_path; with dnn.enabled=auto it silently falls back to slower code.",
                remedy=_repair(facts, compat, inst, backend_judged, check), evidence=evidence, catalogue=CATALOGUE))
            continue
        if inst.header_path is None:
            out.append(finding(
                strict, "%s finds no cudnn.h: 'cannot compile with cuDNN' (%s)" % (
                    label, "dnn.include_path=%s" % inst.include_path if inst.include_path
                    else "dnn.include_path is unset"),
                detail="Theano compiles its cuDNN ops when it first uses them, so it needs cuDNN's header as well "
                       "as its library (the -dev package, or the include folder of NVIDIA's archive).",
                remedy=_header_fix(facts, compat, copy, version), evidence=evidence, catalogue=CATALOGUE))
            continue
        code = cudnn_code(version)
        if code is None:
            continue  # a version Theano could not compare either: say nothing rather than guess
        removed = compat.theano_api_removed(inst.version, backend_judged, version)
        volta = [g for g in visible_gpus(facts) if (mm(g.compute_capability) or (0, 0)) >= (7, 0)]
        if code < check["refuse_below"]:
            problem, severity = ("%s refuses cuDNN %s as too old: '%s'" % (
                label, version, check["refuse_text"] % code)), strict
        elif removed:
            row = removed[0]
            problem, severity = ("%s cannot build its cuDNN ops with cuDNN %s: its %s calls %s, which cuDNN %s "
                                 "removed" % (label, version, row["file"], row["function"], row["cudnn_from"])), ERROR
            evidence["removed_source"] = row["source"]
        elif check.get("volta_min") and code < check["volta_min"] and volta:
            problem, severity = ("%s refuses cuDNN %s on %s: '%s'" % (
                label, version, volta[0].name or "a Volta or newer GPU", check["volta_text"])), strict
        elif check.get("warn_from") and code >= check["warn_from"]:
            out.append(finding(
                WARNING, "%s warns about cuDNN %s (it warns from %s on): '%s'" % (
                    label, version, decode_cudnn(check["warn_from"]), check["warn_text"]),
                detail="Theano %s's %s back-end uses this cuDNN; it was tested with cuDNN %s. Source: %s" % (
                    inst.version, backend_judged, check["supports"], check["source"]),
                remedy=_repair(facts, compat, inst, backend_judged, check, version, quiet_only=True),
                evidence=evidence, catalogue=CATALOGUE))
            continue
        else:
            out.append(finding(INFO, "%s uses cuDNN %s at %s: a release it accepts" % (
                label, version, evidence["library"]), evidence=evidence, catalogue=CATALOGUE))
            continue
        out.append(finding(
            severity, problem,
            detail="Theano %s's %s back-end accepts cuDNN %s: it checks cudnnGetVersion() when it first looks "
                   "for cuDNN, and its C code, written for those releases, stops compiling once cuDNN removes a "
                   "function it calls. Source: %s" % (inst.version, backend_judged, check["supports"],
                                                      check["source"]),
            remedy=(backend_judged == "cuda" and _gpuarray_instead(facts, compat, inst, version))
            or _repair(facts, compat, inst, backend_judged, check), evidence=evidence, catalogue=CATALOGUE))
    return out


@rule("CD761", "theano-cudnn-mixed", "Theano compiles against one cuDNN header and loads another cuDNN library",
      section="python")
def theano_cudnn_mixed(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    backend, _ = backend_of(facts)
    if backend is None or setting_value(facts, "dnn.enabled", "auto") == "False":
        return out
    for inst in facts.theano.installs:
        copy, version = theano_cudnn(facts, inst)
        if not (version and inst.header_version) or release3(version) == release3(inst.header_version):
            continue
        # Which side to move: a copy whose header and library agree, matching what Theano already uses.
        fix: Optional[Fix] = None
        if copy and copy.header_path and copy.header_version == copy.version:
            fix = theano_loaded_header_fix(facts.theano, os.path.dirname(copy.header_path), version)
        else:
            same = next((c for c in facts.cudnn if c.version and release3(c.version) == release3(
                inst.header_version)), None)
            if same:
                fix = theano_header_library_fix(facts.theano, same.directory, inst.header_version)
        text = compat.theano_config().get("mixed_text", "%s %s")
        out.append(finding(
            ERROR, "Theano %s compiles against cuDNN %s (%s) but loads cuDNN %s (%s): '%s'" % (
                inst.version, inst.header_version, inst.header_path, version, inst.load_path or inst.link_path,
                text % (cudnn_code(inst.header_version), cudnn_code(version))),
            detail="Theano compares CUDNN_VERSION from the cudnn.h it compiles with against cudnnGetVersion() of "
                   "the library its module loads and raises RuntimeError when they differ, even with "
                   "dnn.enabled=auto. dnn.include_path and dnn.library_path must name one cuDNN release.",
            remedy=fix or theano_one_release_fix(),
            evidence={"header": inst.header_path, "library": inst.load_path or inst.link_path,
                      "source": compat.theano_source("config")}, catalogue=CATALOGUE + ["D7"]))
    return out


@rule("CD762", "theano-dnn-path-empty", "A dnn.include_path or dnn.library_path Theano is given holds no cuDNN",
      section="python")
def theano_dnn_paths(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for inst in facts.theano.installs:
        for key, value, origin in (("dnn.include_path", inst.include_path, setting_source(facts, "dnn.include_path")),
                                   ("dnn.library_path", inst.library_path, setting_source(facts, "dnn.library_path"))):
            if not value or not origin:
                continue  # Theano's own default: a cuDNN elsewhere on the system is normal
            if key == "dnn.include_path":
                holds = inst.header_path == value.rstrip("/") + "/cudnn.h"
            else:
                holds = any(n.startswith("libcudnn.so") for n in inst.library_files)
            if not holds:
                fix = theano_dnn_path_fix(facts.theano, key, _other_copy(facts, key))
                out.append(finding(
                    ERROR if setting_value(facts, "dnn.enabled", "auto") == "True" else WARNING,
                    "Theano %s: %s=%s (from %s) holds no cuDNN %s" % (
                        inst.version, key, value, origin, "header (cudnn.h)" if key.endswith("include_path")
                        else "library (libcudnn.so*)"),
                    detail="Theano passes this folder to the compiler (-I or -L); without cuDNN in it the compile "
                           "check fails and Theano runs without cuDNN (dnn.enabled=auto) or stops (True).",
                    remedy=fix, evidence={"setting": key, "value": value, "from": origin}, catalogue=CATALOGUE))
            elif key == "dnn.library_path" and "libcudnn.so" not in inst.library_files:
                versioned = sorted(n for n in inst.library_files if n.startswith("libcudnn.so."))
                out.append(finding(
                    ERROR, "Theano %s: %s=%s has %s but no libcudnn.so, the name `-lcudnn` links" % (
                        inst.version, key, value, ", ".join(versioned)),
                    detail="The compiler links Theano's cuDNN ops with -lcudnn, which only matches the unversioned "
                           "libcudnn.so (the development link cuDNN's archives and -dev packages ship).",
                    remedy=theano_dev_link_fix(value, min(versioned, key=len)),
                    evidence={"setting": key, "value": value, "files": inst.library_files}, catalogue=CATALOGUE))
    return out


def _other_copy(facts: Facts, key: str) -> Optional[str]:
    """A folder on this machine that does hold what the setting should point at."""
    for copy in facts.cudnn:
        if key == "dnn.library_path" and copy.version:
            return copy.directory
        if key == "dnn.include_path" and copy.header_path and os.path.basename(copy.header_path) == "cudnn.h":
            return os.path.dirname(copy.header_path)
    return None
