"""CD709: what a framework really loads: a cuDNN whose shim takes its sub-libraries from another copy (its own
dlopen searches LD_LIBRARY_PATH before its RUNPATH), or finds none of them. CD711: a cuDNN forced on it by LD_PRELOAD
or /etc/ld.so.preload, judged by the framework's own run-time rule (compat [cudnn_acceptance]). CD712: a cuDNN wheel
one of whose libraries another release's file replaced (its RECORD says otherwise), which pip counts as installed."""
from __future__ import annotations

import os
from typing import List, Optional, Set, Tuple

from ..knowledge import Compat
from ..model import PRELOADED, CudnnCopy, Facts, Finding, Fix, FrameworkFacts, Resolution
from ..versions import major_of, soname_major, ver
from ..queries import (compiled_cudnn, copy_for_path, cudnn_pin_floor, framework_kind, framework_label, ld_entry_for,
                       missing_sublibraries, own_cudnn_wheel_dir, working_copy)
from ..remedies.environments import force_reinstall_fix, whole_environment_fix
from ..remedies.frameworks import cudnn_package_reinstall_fix, foreign_sublibraries_fix
from ..remedies.preloads import drop_preload_fix
from ..remedies.shell import dropped_ld_entries
from ..remedies.runtime import cudnn_not_older_than_build_fix, unresolved_cudnn_fix, without_entry_fix
from . import LINUX, RuleContext, rule
from .common import ERROR, WARNING, compat_of, finding


def _folder(path: Optional[str]) -> str:
    return os.path.normpath(os.path.dirname(path or ""))


def _foreign_parts(facts: Facts, fw: FrameworkFacts, main: Optional[CudnnCopy],
                   home: str) -> List[Tuple[str, Resolution, Optional[CudnnCopy]]]:
    """(soname, resolution, copy) of each sub-library found outside the shim's folder in another release."""
    out = []
    for name, part in sorted(fw.resolved_cudnn_parts.items()):
        if not part.path or _folder(part.realpath or part.path) == home:
            continue
        other = copy_for_path(facts, part.path, part.realpath)
        if other is None or main is None or other.version != main.version:
            out.append((name, part, other))
    return out


@rule("CD709", "framework-cudnn-mixed-copy", "A framework's cuDNN takes sub-libraries from another copy, or lacks them",
      section="python")
def mixed_copy(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        res = fw.resolved_cudnn
        if res is None or not res.path or res.error or not fw.resolved_cudnn_parts:
            continue
        main = copy_for_path(facts, res.path, res.realpath)
        home = _folder(res.realpath or res.path)
        absent = [name for name, part in fw.resolved_cudnn_parts.items() if not part.path]
        # A later engine (9.20's tensor_ir) may be absent: cuDNN runs without it; found in another copy, it mixes.
        tolerated = compat_of(ctx).cudnn_layout(soname_major(res.name) or 9).get("linux_engines_since", {})
        missing = sorted(name for name in absent if name not in tolerated)
        foreign = _foreign_parts(facts, fw, main, home)
        if not missing and not foreign:
            continue
        # Sub-libraries of one release behind another release's shim pass cuDNN's own version checks (the shim only
        # forwards); sub-libraries of two releases, or a missing one, fail at the first call that needs them.
        releases = {(other.version if other else _folder(p.path)) for _, p, other in foreign}
        if len(foreign) < len(fw.resolved_cudnn_parts) - len(absent):
            releases.add(main.version if main else home)
        severity = ERROR if missing or len(releases) > 1 else WARNING
        # One other release behind the shim loads, but cudnnGetVersion() then reports that release: a framework
        # built with a newer minor refuses it at its own version check (seen on an H100: torch 2.11 built with 9.19
        # stopped at "PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0)").
        built = fw.cudnn_version and ver(fw.cudnn_version) or cudnn_pin_floor(fw, major=soname_major(res.name))
        reported = ver(foreign[0][2].version) if foreign and foreign[0][2] and foreign[0][2].version else None
        refused = severity == WARNING and built is not None and reported is not None and \
            built.release[:2] > reported.release[:2]
        # ... and a release built for another CUDA major than the framework's is the wrong build whatever its version.
        other_cuda = foreign[0][2].cuda_version if foreign and foreign[0][2] else None
        wrong_cuda = severity == WARNING and bool(fw.cuda_version and other_cuda) and \
            major_of(other_cuda) != major_of(fw.cuda_version)
        if refused or wrong_cuda:
            severity = ERROR
        label = framework_label(facts, fw)
        what = "cuDNN %s at %s" % ((main.version if main else None) or res.name, home)
        if foreign:
            name, part, other = foreign[0]
            entries = [e for e in (ld_entry_for(facts, p.path) for _, p, _ in foreign) if e]
            # A preload's shim: without the preload the framework's own copy loads, with its own sub-libraries.
            # Taking their folder off LD_LIBRARY_PATH instead let a third copy's parts in (draw 20261203-15).
            if res.via in PRELOADED:  # ... and a folder of another copy's parts besides its own goes too
                others = [e for e in entries if os.path.normpath(e) != own_cudnn_wheel_dir(fw)]
                fix = drop_preload_fix(facts, res, foreign_sublibraries_fix(facts, others) if others else None)
            elif entries and len(entries) == len(foreign):
                fix = foreign_sublibraries_fix(facts, entries)
            else:
                fix = cudnn_package_reinstall_fix(facts, compat_of(ctx), main, home, fw)
            release = "cuDNN %s" % other.version if other and other.version else "another copy"
            title = "%s loads %s but its %s from %s (%s)" % (label, what, name, _folder(part.path), release)
            detail = ("libcudnn.so.N is a shim that dlopens its sub-libraries at first use; glibc searches for them "
                      "from the shim, with its RPATH before LD_LIBRARY_PATH or its RUNPATH ($ORIGIN) after it, so %s "
                      "came through %s. Two releases in one process fail with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH "
                      "or abort inside cuDNN; cudnnGetVersion() may even report the other release." % (
                          ", ".join(n for n, _, _ in foreign), part.via))
            if refused:
                detail += (" Here every sub-library comes from that one copy, so cuDNN loads, but cudnnGetVersion() "
                           "reports %s and %s, built with cuDNN %s, stops at its own version check (torch: 'cuDNN "
                           "version incompatibility: PyTorch was compiled against ... but found runtime version ...')."
                           % (release, label, built))
            elif wrong_cuda:
                detail += (" Here every sub-library comes from that one copy, built for CUDA %s, while %s was built "
                           "for CUDA %s: cuDNN's own CUDA runtime check fails." % (other_cuda, label, fw.cuda_version))
            elif severity == WARNING:
                detail += (" Here every sub-library comes from that one copy, so it loads, but cudnnGetVersion() "
                           "reports %s and an upgrade of either copy breaks it." % release)
        else:
            fix = cudnn_package_reinstall_fix(facts, compat_of(ctx), main, home, fw)
            title = "%s loads %s, which lacks %s" % (label, what, ", ".join(missing))
            detail = ("No search path of the shim (%s) holds them: the first call that needs one fails with "
                      "'Could not load library %s' and CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED." % (
                          res.name, missing[0]))
        lost = [n for n in missing + [n for n, _, _ in foreign] if n.startswith("libcudnn_engines_precompiled")]
        if lost:
            detail += (" Without %s cuDNN runs on runtime-compiled engines: convolutions and attention still run, "
                       "but after the first convolution backward pass (training) batch normalization and RNNs stop at "
                       "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (measured on an H200 with torch 2.11: "
                       "docs/real-stacks.md)." % lost[0])
        out.append(finding(severity, title, detail=detail, remedy=whole_environment_fix(facts, compat_of(ctx), fw, fix),
                           evidence={
            "framework": fw.name, "version": fw.version, "cudnn": res.path,
            "foreign": {n: p.path for n, p, _ in foreign}, "missing": missing}, catalogue=["D2", "E2"]))
    return out



@rule("CD711", "framework-cudnn-preloaded", "A preloaded cuDNN answers a framework's request, and it refuses it",
      platforms=LINUX, section="python")
def preloaded(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        res = fw.resolved_cudnn
        if res is None or res.via not in PRELOADED or not res.path:
            continue
        copy = copy_for_path(facts, res.path, res.realpath)
        built = compiled_cudnn(fw)
        if copy is None or not copy.version or not built:
            continue
        # The framework's check reads cudnnGetVersion(), which the shim forwards: with every sub-library from one
        # other copy it reports that copy's release (draw 399261-39: a preloaded 9.10.2 shim over 9.24's parts).
        runs = working_copy(facts, fw)
        behind = runs.version if runs is not None and runs is not copy else None
        verdict = compat.acceptance.accepts(framework_kind(fw), built, behind or copy.version)
        if verdict.accepts:
            continue
        then_fix = _behind_the_preload_fix(facts, compat, fw, res, built)
        out.append(finding(
            ERROR, "%s loads the cuDNN %s that %s forces (%s)%s and refuses it" % (
                framework_label(facts, fw), copy.version, res.via, res.path,
                ", which reports the %s of its sub-libraries," % behind if behind else ""),
            detail="ld.so loads %s before the program and matches the framework's own request for %s against it, "
                   "whatever its RPATH or its own preload say; the framework was built with cuDNN %s and stops: "
                   "'%s' [%s]." % (res.via, res.name, built, verdict.why, verdict.source.split(" ")[0]),
            remedy=drop_preload_fix(facts, res, then_fix, _left_without_fixes(facts, compat, fw, res, then_fix)),
            evidence={"framework": fw.name, "preloaded": res.path, "via": res.via, "loads_version": copy.version,
                      "reports_version": behind or copy.version, "built_with": built}, catalogue=["E1", "E2"]))
    return out


def _left_without_fixes(facts: Facts, compat: Compat, fw: FrameworkFacts, res: Resolution,
                        behind: Optional[Fix]) -> List[Fix]:
    """For every other framework the same preload answered that finds no cuDNN of that major on its own path once it
    is gone (and once ``behind``, the fix for what ``fw`` meets next, took its LD_LIBRARY_PATH folders away), where
    to find one (draw 301130-11: with LD_PRELOAD gone for torch, ONNX Runtime 1.22, whose library searches only its
    own folder, found no libcudnn.so.9)."""
    major = soname_major(res.name)
    gone = dropped_ld_entries(behind) if behind is not None else set()
    return [whole_environment_fix(facts, compat, other, unresolved_cudnn_fix(facts, compat, other, major))
            for other in facts.python.frameworks if other is not fw and _left_without(facts, other, res, major, gone)]


def _left_without(facts: Facts, fw: FrameworkFacts, res: Resolution, major: Optional[int], gone: Set[str]) -> bool:
    """Whether ``fw``'s request was answered by the same preload and, that gone, nothing of the major is on its own
    search path (RPATH/RUNPATH), LD_LIBRARY_PATH less the folders ``gone``, or the loader's cache."""
    own = fw.resolved_cudnn
    if own is None or own.via not in PRELOADED or own.path != res.path or fw.library_search_path is None:
        return False
    dirs = {os.path.normpath(d) for d in list(fw.library_search_path) + list(facts.loader.ld_library_path)} - gone
    return not any(c.major == major and (os.path.normpath(c.directory) in dirs or c.origin in ("system", "toolkit"))
                   for c in facts.cudnn)


def _behind_the_preload_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, res: Resolution,
                            built: str) -> Optional[Fix]:
    """What the framework's own site then hands it, where that is no better: the preload hid a wheel the framework
    refuses or that lacks sub-libraries (draw 20261202-1: with LD_PRELOAD gone, TensorFlow and JAX met the site's
    9.3 without libcudnn_ops, older than JAX's 9.8), so the fix goes on to the site's cuDNN, for every framework
    there; None where the site's copy serves it."""
    lib = own_cudnn_wheel_dir(fw)
    major = soname_major(res.name)
    kind = framework_kind(fw)

    def fits(copy: CudnnCopy) -> bool:
        return bool(copy.version and not missing_sublibraries(compat, copy) and compat.acceptance.accepts(
            kind, built, copy.version).accepts)

    # LD_LIBRARY_PATH comes before its RUNPATH: a copy there the framework refuses is what it meets next (draw
    # 486637-22: with the preload gone TensorFlow 2.19 loaded a conda prefix's 9.1, older than its 9.3 build).
    after = fw.cudnn_without_preload
    nxt = copy_for_path(facts, after.path, after.realpath) if after is not None and after.via == "LD_LIBRARY_PATH" \
        else None
    entry = ld_entry_for(facts, after.path) if nxt is not None and after is not None else None
    if nxt is not None and entry and not fits(nxt):
        return whole_environment_fix(facts, compat, fw, without_entry_fix(facts, compat, fw, entry, major, fits))
    site = next((c for c in facts.cudnn if os.path.normpath(c.directory) == lib and c.major == major), None)
    if site is None or not site.version:
        return None
    if not compat.acceptance.accepts(kind, built, site.version).accepts:
        own = cudnn_not_older_than_build_fix(facts, compat, fw, site, built, None)
    elif missing_sublibraries(compat, site):
        own = cudnn_package_reinstall_fix(facts, compat, site, lib, fw)
    else:
        return None
    return whole_environment_fix(facts, compat, fw, own)


@rule("CD712", "cudnn-wheel-altered", "A cuDNN wheel's library is not the one the wheel installed", platforms=LINUX,
      section="python")
def altered_wheel(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for wheel in facts.python.nvidia_wheels:
        if not wheel.get("altered"):
            continue
        folder = os.path.normpath(wheel["location"].rstrip("/") + "/nvidia/cudnn/lib")
        users = [fw for fw in facts.python.frameworks if fw.resolved_cudnn is not None and fw.resolved_cudnn.path
                 and _folder(fw.resolved_cudnn.realpath or fw.resolved_cudnn.path) == folder]
        names = wheel["altered"].split(",")
        out.append(finding(
            ERROR if users else WARNING,
            "%s %s in %s: %s %s not the wheel's own (%s)" % (
                wheel["name"], wheel["version"], wheel["location"], ", ".join(names), "is" if len(names) == 1 else
                "are", "loaded by %s" % ", ".join("%s %s" % (fw.name, fw.version) for fw in users) if users
                else "no framework found loads it"),
            detail="Each file's size differs from the one the wheel's RECORD lists: it was cut short (an "
                   "interrupted download or copy, a full disk) or another release's library was copied over it, so the "
                   "load fails or one process runs two cuDNN releases (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, or an "
                   "abort inside cuDNN). pip still counts %s %s as installed and a plain `pip install` says "
                   "'Requirement already satisfied', so it is reinstalled with --force-reinstall." % (
                       wheel["name"], wheel["version"]),
            remedy=force_reinstall_fix(facts, users[0] if users else None, wheel["name"], wheel["version"]),
            evidence={"wheel": wheel["name"], "version": wheel["version"], "location": wheel["location"],
                      "altered": names}, catalogue=["D3"]))
    return out
