"""CD5xx: cuDNN at run time: the CUDA and driver it was built for, what each consumer loads, known-bad releases."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from packaging.specifiers import SpecifierSet

from ..versions import canonical_name, major_of, mm_before, release3, soname_version, ver
from ..model import PRELOADED, CudnnCopy, Facts, Finding, FrameworkFacts, Resolution, Severity
from . import LINUX, RuleContext, rule
from ..queries import (compiled_cudnn, consumers, copy_for_path, cudnn_older, describe_copy, driver_cuda,
                       driver_version, framework_kind, framework_label, gpus_with_cc, has_driver, is_used, ld_entry_for,
                       machine_cuda, platform_of, primary_toolkit, toolkit_owning, working_copy)
from ..remedies.frameworks import ld_library_path_cudnn_fix
from ..remedies.runtime import (cudnn_for_cuda_fix, cudnn_for_newer_gpu_fix, cudnn_not_older_than_build_fix,
                                driver_or_cudnn_for_driver_fix, keep_own_copies_fix, known_bad_upgrade_fix)
from ..remedies.environments import whole_environment_fix
from ..remedies.preloads import drop_preload_fix
from .common import ERROR, INFO, WARNING, compat_of, finding


@rule("CD501", "cudnn-cuda-mismatch", "cuDNN built for another CUDA than the one it is used with", section="cudnn")
def cuda_mismatch(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    primary = primary_toolkit(facts)
    for copy in facts.cudnn:
        if not copy.version:
            continue
        partners: List[Tuple[str, str, Severity, str, Optional[FrameworkFacts]]] = []
        if copy.origin == "toolkit":
            tk = toolkit_owning(facts, copy.directory)
            if tk and tk.version:
                partners.append(("the CUDA %s toolkit it is installed into (%s)" % (tk.version, tk.path),
                                 tk.version, ERROR, tk.version, None))
        elif copy.origin in ("system", "other", "ld_library_path") and primary and primary.version and not any(
                working_copy(facts, fw) is copy for fw in facts.python.frameworks):
            # A copy the frameworks load is judged against them below; the toolkit is its partner only where none
            # does (a new user's trial: the cuDNN 8 fix put beside CuPy 13 got "cannot be used with the CUDA 13.0
            # toolkit", whose fix, `apt install libcudnn9-cuda-13`, would have done nothing for CuPy)
            partners.append(("the CUDA %s toolkit at %s" % (primary.version, primary.path), primary.version,
                             WARNING, primary.version, None))
        for fw in facts.python.frameworks:
            fw_copy = working_copy(facts, fw)
            if fw_copy is copy and fw.cuda_build and fw.cuda_version:
                partners.append(("%s %s (built for CUDA %s), which loads it" % (fw.name, fw.version, fw.cuda_version),
                                 fw.cuda_version, ERROR, fw.cuda_version, fw))
        for label, cuda, severity, target, user in partners:
            ok, why = compat.cudnn_cuda_verdict(copy.version, copy.cuda_version, cuda)
            if ok is False:
                remedy = (whole_environment_fix(facts, compat, user, cudnn_for_cuda_fix(facts, compat, copy, target,
                                                                                         user))
                          if user is not None else cudnn_for_cuda_fix(facts, compat, copy, target))
                res = user.resolved_cudnn if user is not None else None
                if res is not None and res.via in PRELOADED:  # forced on it: no install changes what it loads first
                    remedy = drop_preload_fix(facts, res, remedy)
                out.append(finding(
                    severity, "%s cannot be used with %s" % (describe_copy(copy), label),
                    detail=why,
                    remedy=remedy,
                    evidence={"cudnn": copy.version, "built_for": copy.cuda_version, "path": copy.path,
                              "used_with": cuda, **({"framework": user.name} if user is not None else {})},
                    catalogue=["C5"]))
            elif ok is None and is_used(facts, copy):
                out.append(finding(
                    INFO, "Cannot tell whether %s works with %s" % (describe_copy(copy), label),
                    detail=why, evidence={"cudnn": copy.version, "built_for": copy.cuda_version, "used_with": cuda},
                    catalogue=["C5"]))
    return out


@rule("CD502", "cudnn-needs-newer-driver", "Driver too old for the CUDA a cuDNN build needs", section="cudnn")
def cudnn_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not has_driver(facts) or not driver_version(facts):
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    for copy in facts.cudnn:
        if not copy.cuda_version:
            continue
        ok, how, floor = compat.driver_runs_cuda(driver_version(facts) or "", copy.cuda_version, platform_of(facts),
                                                 facts.driver.cuda_version)
        if ok is not False:
            continue
        out.append(finding(
            ERROR if is_used(facts, copy) else WARNING,
            "%s needs a driver for CUDA %s; driver %s supports CUDA %s" % (
                describe_copy(copy), copy.cuda_version, driver_version(facts), driver_cuda(facts, compat) or "?"),
            detail="cuDNN then fails with CUDNN_STATUS_NOT_INITIALIZED / 'CUDA driver version is insufficient' "
                   "[%s]." % (floor.source if floor else ""),
            remedy=driver_or_cudnn_for_driver_fix(facts, compat, copy, floor, driver_cuda(facts, compat)),
            evidence={"cudnn": copy.version, "built_for": copy.cuda_version, "driver": driver_version(facts)},
            catalogue=["C1"]))
    return out


@rule("CD503", "cudnn-older-than-framework-build", "Loaded cuDNN older than the framework was built with",
      section="cudnn")
def runtime_older(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        compiled = compiled_cudnn(fw)
        copy, res = working_copy(facts, fw), fw.resolved_cudnn
        if not compiled or copy is None or not copy.version or res is None or res.via in PRELOADED:
            continue  # a preloaded copy: CD711 (rules/framework_loads.py), whose fix takes the preload away
        bad, why = cudnn_older(copy.version, compiled)
        # what the framework itself accepts (compat [cudnn_acceptance]): ONNX Runtime and CuPy check no minor
        if not bad or (why != "another major version" and compat.acceptance.accepts(
                framework_kind(fw), compiled, copy.version).accepts):
            continue
        fix = whole_environment_fix(facts, compat, fw, cudnn_not_older_than_build_fix(
            facts, compat, fw, copy, compiled, ld_entry_for(facts, res.path) or _parts_entry(facts, fw, copy)))
        out.append(finding(
            ERROR, "%s was built with cuDNN %s but loads cuDNN %s (%s)" % (
                framework_label(facts, fw), compiled, copy.version, why),
            detail="cuDNN needs the same major version and an equal or newer minor version than the build: TF/XLA "
                   "print 'Loaded runtime CuDNN library: %s but source was compiled with: %s', PyTorch 'cuDNN "
                   "version incompatibility', JAX 'Outdated cuDNN installation found' [%s]." % (
                       copy.version, compiled, compat.api_compat_source()),
            remedy=fix, evidence={"framework": fw.name, "compiled_with": compiled, "loads": copy.path,
                               "loads_version": copy.version, "via": res.via},
            catalogue=["E1", "E2"]))
    return out


def _parts_entry(facts: Facts, fw: FrameworkFacts, copy: CudnnCopy) -> Optional[str]:
    """The LD_LIBRARY_PATH entry that hands the framework's own shim the sub-libraries of an older copy (the copy
    that does its work, not the shim's): the H200's torch 2.11 got its wheel's 9.19 shim through its RPATH and the
    system 9.14's parts through LD_LIBRARY_PATH, and CD503 said to upgrade the system copy instead."""
    for part in fw.resolved_cudnn_parts.values():
        entry = ld_entry_for(facts, part.path)
        if entry and copy_for_path(facts, part.path, part.realpath) is copy:
            return entry
    return None


@rule("CD504", "cudnn-shadowed-by-ld-library-path", "LD_LIBRARY_PATH hands a framework a foreign cuDNN",
      platforms=LINUX, section="cudnn")
def shadowed(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        res = fw.resolved_cudnn
        if res is None or not res.path or res.via != "LD_LIBRARY_PATH":
            continue
        # Its own copies of the major it asks for: CuPy 13 asks for libcudnn.so.8, which its site's cuDNN 9 wheel
        # (another framework's) does not hold, so the cuDNN 8 folder on LD_LIBRARY_PATH is its only one (a new
        # user's trial: the fix's own folder was called a foreign copy, and its fix dropped it)
        major = major_of(soname_version(res.name) or "")
        # ... and built for the framework's CUDA major: ONNX Runtime 1.18's CUDA 11 build in a site whose cuDNN 8
        # wheel is TensorFlow's for CUDA 12 has no copy of its own there (draw 301301-51: CD710's case)
        cuda = major_of(fw.cuda_version or "")
        own = [c for c in facts.cudnn if c.origin == "pip" and c.directory.startswith(fw.location.rstrip("/") + "/")
               and (major is None or c.major == major)
               and (cuda is None or major_of(c.cuda_version or "") in (None, cuda))]
        copy = copy_for_path(facts, res.path, res.realpath)
        if not own or copy in own:
            continue
        compiled = compiled_cudnn(fw)
        if compiled and copy and copy.version and cudnn_older(copy.version, compiled)[0]:
            continue  # CD503 reports the incompatible case as an error
        entry = ld_entry_for(facts, res.path) or os.path.dirname(res.path)
        out.append(finding(
            WARNING, "%s loads %s through LD_LIBRARY_PATH instead of its own %s" % (
                fw.name, describe_copy(copy), describe_copy(own[0])),
            detail="LD_LIBRARY_PATH is searched before a library's RUNPATH, so an HPC module, a conda lib folder or "
                   "/usr/local/cuda/lib64 beats the wheel the framework was tested with; a later upgrade of either "
                   "turns this into 'cuDNN version incompatibility'.",
            remedy=ld_library_path_cudnn_fix(facts, entry),
            evidence={"framework": fw.name, "loads": res.path, "own_copy": own[0].path,
                      "LD_LIBRARY_PATH": facts.loader.ld_library_path}, catalogue=["E2"]))
    return out


@rule("CD505", "two-cudnn-copies", "Different programs load different cuDNN copies", platforms=LINUX, section="cudnn")
def two_copies(facts: Facts, ctx: RuleContext) -> List[Finding]:
    who = consumers(facts)
    by_major: Dict[Optional[int], List[Tuple[str, CudnnCopy, Resolution]]] = {}
    for label, copy, res in who:
        if copy is None:
            continue
        by_major.setdefault(copy.major, []).append((label, copy, res))
    out: List[Finding] = []
    for major, rows in sorted(by_major.items(), key=lambda kv: -(kv[0] or 0)):
        distinct: List[CudnnCopy] = []
        for _, copy, _ in rows:
            if all(copy is not d for d in distinct):
                distinct.append(copy)
        if len(distinct) < 2:
            continue
        versions = {str(release3(c.version)) if c.version else "?" for c in distinct}
        # One clause per copy, naming every consumer that gets it: readable with many frameworks installed.
        lines = []
        for copy in distinct:
            users = [(label, res) for label, c, res in rows if c is copy]
            vias = sorted({res.via or "?" for _, res in users})
            lines.append("%s load%s %s (via %s)" % (", ".join(label for label, _ in users),
                                                   "s" if len(users) == 1 else "", describe_copy(copy),
                                                   ", ".join(vias)))
        plain = next((c for label, c, _ in rows if label.startswith("a plain process")), None)
        # The copy to recommend is one a framework uses that a plain process does not already get.
        frameworks = [(label, c) for label, c, _ in rows if not label.startswith("a plain process") and c is not plain]
        fix = keep_own_copies_fix()
        if plain is not None and frameworks:
            # Name the framework people know best when several share that copy (the list is alphabetical).
            fw_label, fw_copy = next((f for f in frameworks if f[0].split()[0] == "torch"), frameworks[0])
            fix = keep_own_copies_fix(fw_label.split()[0], fw_copy, plain)
        out.append(finding(
            WARNING if len(versions) > 1 else INFO,
            "Two cuDNN %s copies are in use: %s" % (major, "; ".join(lines)),
            detail="Which copy a process gets depends on who asks first: once one libcudnn.so.%s is loaded, every "
                   "later request in that process gets the same one, so mixing consumers in one process can pair a "
                   "framework with the other copy (or mix sub-libraries: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)."
                   % major,
            remedy=fix, evidence={"consumers": [{"consumer": label, "path": res.path, "via": res.via,
                                              "version": c.version if c else None} for label, c, res in rows]},
            catalogue=["E2", "D3"]))
    return out


@rule("CD506", "cudnn-known-bad", "cuDNN release known to break", section="cudnn")
def known_bad(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    jax = [fw for fw in facts.python.frameworks if framework_kind(fw) == "jax"]
    cublas = [w for w in facts.python.nvidia_wheels if w["name"].startswith("nvidia-cublas")]
    for copy in facts.cudnn:
        for bad in compat.known_bad("cudnn", copy.version):
            wheel = copy.pip_wheel()
            if bad.get("wheels") and not (wheel and canonical_name(wheel[0]) in bad["wheels"]):
                continue  # the wheels' build of the release (nvidia-cudnn-cu13 9.20.0.48), not its packages
            if bad.get("with", "").startswith("cublas"):
                need = bad["with"].split("cublas", 1)[1]
                if not jax or not any(_matches(w["version"], need) for w in cublas):
                    continue
            hits_jax = any(working_copy(facts, fw) is copy for fw in jax) or (jax and copy.origin == "pip")
            severity = ERROR if bad.get("severity") == "error_if_jax" and hits_jax else (
                INFO if bad.get("severity") == "info" else WARNING)
            out.append(finding(
                severity, "cuDNN %s at %s is a known-bad release: %s" % (
                    copy.version, copy.directory, bad["problem"]),
                detail="Source: %s [%s]." % (bad["source"], bad["status"]),
                remedy=known_bad_upgrade_fix(facts, compat, copy, bad.get("fixed_in")),
                evidence={"cudnn": copy.version, "path": copy.path, "range": bad["version"]}, catalogue=["E1"]))
    return out


def _matches(version: str, spec: str) -> bool:
    """Whether a version text is one a specifier (">=12.4,<12.5") admits; False when it does not parse."""
    v = ver(version)
    return v is not None and v in SpecifierSet(spec)


@rule("CD507", "cudnn-version-unknown", "cuDNN version could not be read", section="cudnn")
def version_unknown(facts: Facts, ctx: RuleContext) -> List[Finding]:
    return [finding(
        INFO, "Cannot tell the version of the cuDNN copy at %s" % copy.directory,
        detail="Neither cudnnGetVersion, the file names, the header nor a package said it; version checks skip "
               "this copy.", evidence={"path": copy.path, "load_error": copy.load_error})
        for copy in facts.cudnn if not copy.version]


@rule("CD508", "cudnn-predates-gpu", "cuDNN build predates the GPU's architecture", section="cudnn")
def predates_gpu(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    bw = compat.blackwell_cuda12()
    bw_major = major_of(bw.get("min_cuda"))
    dcuda = driver_cuda(facts, compat)
    for copy in facts.cudnn:
        for gpu in gpus_with_cc(facts):
            reason = None
            blackwell = False
            if mm_before(copy.header_max_sm, gpu.compute_capability):
                reason = "its header says it knows GPUs up to compute capability %s" % copy.header_max_sm
            elif (bw_major is not None and gpu.compute_capability in bw.get("ccs", []) and copy.cuda_version and
                  major_of(copy.cuda_version) == bw_major and mm_before(copy.cuda_version, bw.get("min_cuda"))):
                blackwell = True
                reason = ("compute capability %s needs cuDNN's CUDA %s+ build (or a build for a newer CUDA major) "
                          "[%s]" % (gpu.compute_capability, bw.get("min_cuda"), bw.get("source")))
            if not reason:
                continue
            # Build for the newest CUDA this driver runs; for the Blackwell case at least the table's CUDA.
            target = dcuda or machine_cuda(facts, compat)
            floor = None
            if blackwell and (target is None or mm_before(target, bw.get("min_cuda"))):
                floor = bw.get("driver_windows" if platform_of(facts) == "windows" else "driver_linux")
                target = bw.get("min_cuda")
            out.append(finding(
                WARNING, "%s may have no kernels for GPU %d (compute capability %s): %s" % (
                    describe_copy(copy), gpu.index, gpu.compute_capability, reason),
                detail="Convolutions then fail with 'no kernel image is available' or CUDNN_STATUS_ARCH_MISMATCH.",
                remedy=cudnn_for_newer_gpu_fix(facts, compat, copy, target, floor),
                evidence={"cudnn": copy.version, "header_max_sm": copy.header_max_sm, "cc": gpu.compute_capability,
                          "driver_cuda": dcuda},
                catalogue=["B1"]))
    return out
