"""CD7xx: framework packaging: CPU-only builds, conflicting nvidia-* pins, unresolvable cuDNN, Windows TF."""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, List, Optional, Tuple

from packaging.version import InvalidVersion, Version

from ..knowledge import Compat
from ..readers.package_meta import dist_info_name
from ..versions import canonical_name, major_of, requirements, ver
from ..model import Facts, Finding, Fix, FrameworkFacts, Severity
from . import LINUX, RuleContext, rule
from ..queries import (copy_for_path, framework_kind, framework_label, has_driver, own_cudnn_wheel_dir, platform_of,
                       same_file, working_copy)
from ..remedies.frameworks import (framework_gpu_build_fix, framework_pin_fix, leave_pin_conflict_fix,
                                   onnxruntime_gpu_fix, tensorflow_native_windows_fix)
from ..remedies.environments import whole_environment_fix
from ..remedies.runtime import unresolved_cudnn_fix
from .common import ERROR, INFO, WARNING, compat_of, finding

if TYPE_CHECKING:
    from packaging.requirements import Requirement


@rule("CD701", "cpu-only-framework", "A CPU-only framework build is installed", section="python")
def cpu_only(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not has_driver(facts):
        return []
    out: List[Finding] = []
    names = {fw.name for fw in facts.python.frameworks}
    for fw in facts.python.frameworks:
        kind = framework_kind(fw)
        if kind in ("torch", "tensorflow", "paddle", "onnxruntime") and fw.cuda_build is False:
            if kind == "onnxruntime" and "onnxruntime-gpu" in names:
                continue
            # `onnxruntime` is the CPU package by name (the GPU one is `onnxruntime-gpu`): often a deliberate choice.
            out.append(finding(
                INFO if kind == "onnxruntime" else WARNING,
                "%s %s in %s is a CPU-only build" % (fw.name, fw.version, fw.location),
                detail="It never uses the GPU ('Torch not compiled with CUDA enabled', "
                       "tf.test.is_built_with_cuda() False), although this machine has an NVIDIA driver.",
                remedy=framework_gpu_build_fix(facts, compat_of(ctx), fw), evidence={"framework": fw.name, "version": fw.version,
                                                             "source": fw.source}, catalogue=["G1"]))
    if "onnxruntime" in names and "onnxruntime-gpu" in names:
        out.append(finding(
            WARNING, "Both onnxruntime and onnxruntime-gpu are installed",
            detail="They share the onnxruntime/ package folder and overwrite each other; often the CPU files win and "
                   "the CUDA provider disappears.",
            remedy=onnxruntime_gpu_fix(),
            evidence={"frameworks": sorted(names)}, catalogue=["G1"]))
    return out


def _applies(req: Requirement, platform: str) -> Optional[bool]:
    """Whether a requirement's marker holds here; None when it depends on an extra we cannot see."""
    if req.marker is None:
        return True
    text = str(req.marker)
    if "extra" in text:
        return None
    try:
        return req.marker.evaluate({"platform_system": "Windows" if platform == "windows" else "Linux",
                                    "sys_platform": "win32" if platform == "windows" else "linux",
                                    "platform_machine": "x86_64"})
    except Exception:  # an exotic marker: judge the requirement anyway
        return True


@rule("CD702", "framework-nvidia-pins-conflict", "Installed nvidia-* wheels do not satisfy a framework's pins",
      section="python")
def pins(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    platform = platform_of(facts)
    judged = set()  # JAX's PJRT wheel carries its plugin wheel's pins: one finding per pin and folder
    for fw in facts.python.frameworks:
        wheels = {canonical_name(w["name"]): w for w in facts.python.nvidia_wheels
                  if w.get("location") == fw.location}
        for text, req in requirements(fw.requires):
            wheel = wheels.get(canonical_name(req.name))
            applies = _applies(req, platform)
            if wheel is None or applies is False or not req.specifier:
                continue
            try:
                installed = Version(wheel["version"])
            except InvalidVersion:
                continue
            if req.specifier.contains(installed, prereleases=True) or (fw.location, text) in judged:
                continue
            judged.add((fw.location, text))
            is_cudnn = canonical_name(req.name).startswith("nvidia-cudnn-")
            # pip check reads no extra's requirements (TensorFlow's pins sit under its [and-cuda])
            pip_says = ("`pip check` reports the conflict" if applies else
                        "`pip check`, which reads no extra's requirements, does not report it")
            severity, detail = (_cudnn_pin_verdict(facts, compat_of(ctx), fw, req, installed, pip_says) if is_cudnn
                                else (WARNING, (
                "Only one copy of %s fits in that site-packages/nvidia folder, so %s runs with the release another "
                "package asked for instead of the one it was built and tested with; it usually loads (same soname) "
                "%s %s." % (req.name, fw.name, "but" if applies else "and", pip_says))))
            extra = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", str(req.marker)) if applies is None else None
            out.append(finding(
                severity,
                "%s%s requires %s%s but %s %s is installed in %s" % (
                    _declared_by(fw), (" (its [%s] extra)" % extra.group(1)) if extra else "", req.name, req.specifier,
                    wheel["name"], wheel["version"], fw.location),
                detail=detail,
                remedy=None if severity == INFO else
                whole_environment_fix(facts, compat_of(ctx), fw, framework_pin_fix(req.name, req.specifier))
                if is_cudnn else _shared_release_fix(req, _others_pins(facts, fw, req, platform), wheel["version"]),
                evidence={"framework": fw.name, "requirement": text, "installed": wheel["version"]},
                catalogue=["G4", "E1"]))
    return out


def _declared_by(fw: FrameworkFacts) -> str:
    """The distribution whose METADATA holds the framework's pins: a JAX PJRT wheel's come from its plugin wheel
    (a new user's trial: "jax-cuda12-pjrt requires ..." named a wheel that declares nothing)."""
    named = dist_info_name(os.path.basename(os.path.dirname(fw.requires_source))) if fw.requires_source else None
    return "%s %s" % (canonical_name(named[0]), named[1]) if named else "%s %s" % (fw.name, fw.version)


def _others_pins(facts: Facts, fw: FrameworkFacts, req: Requirement, platform: str) -> List[Tuple[str, Requirement]]:
    """(framework, requirement) of every other framework of the site that asks for the same project."""
    return [(other.name, r) for other in facts.python.frameworks
            if other is not fw and other.location == fw.location
            for _, r in requirements(other.requires)
            if canonical_name(r.name) == canonical_name(req.name) and r.specifier and _applies(r, platform) is not False]


def _shared_release_fix(req: Requirement, others: List[Tuple[str, Requirement]], installed: str) -> Fix:
    """The release every framework of the site accepts (from the releases they pin and the one installed); where none
    does, installing one framework's pin would break another's (a helper's trial: TensorFlow's nvcc ==12.5.82 against
    JAX's >=12.6.85), so the words say to leave it."""
    if not others:
        return framework_pin_fix(req.name, req.specifier)
    asked = [req] + [r for _, r in others]
    exact = {s.version for r in asked for s in r.specifier if s.operator in ("==", "===") and "*" not in s.version}
    candidates = sorted(exact | {installed}, key=lambda v: ver(v) or Version("0"), reverse=True)
    fits = [v for v in candidates if ver(v) is not None and all(r.specifier.contains(v, prereleases=True) for r in asked)]
    if fits and fits[0] != installed:
        return framework_pin_fix(req.name, "==" + fits[0])
    if not exact:  # ranges only: every one of them, for pip to resolve (its dry run says so where none meets them)
        return framework_pin_fix(req.name, ",".join(str(r.specifier) for r in asked))
    # an exact pin that another framework's range refuses: no release serves both
    return leave_pin_conflict_fix(req.name, installed, [(name, str(r.specifier)) for name, r in others])


def _cudnn_pin_verdict(facts: Facts, compat: Compat, fw: FrameworkFacts, req: Requirement,
                       installed: Version, pip_says: str) -> Tuple[Severity, str]:
    """How a cuDNN wheel outside a framework's pin really fails: not at all (a newer minor of the same major, or an
    older shim whose sub-libraries all come from a release it accepts), with the framework's version check (an older
    minor it loads), or as a missing soname (another major). `pip_says` is whether `pip check` reports the pin."""
    res = fw.resolved_cudnn
    # the release an exact pin holds it to; a wildcard (==9.20.*) by its prefix, which compat's rows match
    bad = next((compat.bad_wheel(req.name, s.version.replace(".*", "")) for s in req.specifier
                if s.operator in ("==", "===")), None)
    if bad is not None and installed.release[:3] >= Version(bad["fixed_in"]).release[:3]:
        built = fw.cudnn_version if fw.cudnn_version and "." in fw.cudnn_version else bad["version"].lstrip("=")
        verdict = compat.acceptance.accepts(framework_kind(fw), built, ".".join(map(str, installed.release[:3])))
        if verdict.accepts:  # the pin names a wheel broken as built, and this release is the way out (pip warns)
            return INFO, ("The release it pins is the %s wheel that lacks %s; %s from %s on has it, and %s accepts "
                          "cuDNN %s at run time, so this is the known way out; %s [%s]." % (
                              req.name, bad.get("lacks", "a file"), req.name, bad["fixed_in"], fw.name, installed,
                              pip_says, bad["source"].split(" ")[0]))
    pinned = [Version(s.version.replace(".*", "")) for s in req.specifier if s.operator in ("==", ">=", "~=")
              and ver(s.version.replace(".*", "")) is not None]
    want = pinned[0] if pinned else None
    built = ver(fw.cudnn_version) if fw.cudnn_version and "." in fw.cudnn_version else None
    if want is not None and built is not None and built.release[0] == want.release[0]:
        want = built  # the build's own cuDNN decides what loads, not the pin (torch 2.9.1: built 9.8, pins 9.10)
    own_folder = fw.location.rstrip("/") + "/"
    loads_it = bool(res is not None and res.path and (res.realpath or res.path).startswith(own_folder))
    if want is None:
        return WARNING, "The framework was not built for this cuDNN; %s." % pip_says
    if want.release[0] != installed.release[0]:
        if res is not None and not res.path:
            return ERROR, ("It asks the loader for %s, which this wheel does not provide: '%s: cannot open shared "
                           "object file: No such file or directory'." % (res.name, res.name))
        return WARNING, ("This wheel is another major than the framework's; it loads %s from %s instead." % (
            res.name, res.path) if res is not None and res.path else "This wheel is another major than the "
            "framework's, which cannot use it.")
    # The shim only forwards: when every sub-library it finds comes from one other copy, cudnnGetVersion() reports that
    # copy, and that is what the framework's own check compares (jax 0.7.2 with the 9.5.1 wheel before 9.8 on
    # LD_LIBRARY_PATH: JAX's check reads 9.8.0 and it loads; CD709 says the mix).
    runs = working_copy(facts, fw) if loads_it and res is not None else None
    if runs is not None and res is not None and runs is copy_for_path(facts, res.path, res.realpath):
        runs = None  # the wheel's own copy does the work: its installed version decides
    got = ver(runs.version) if runs is not None and runs.version else None
    if runs is not None and got is not None and got != installed and got.release[0] == want.release[0] and \
            got.release[:2] >= want.release[:2] and installed.release[:2] < want.release[:2]:
        return WARNING, ("Every sub-library of this wheel's shim comes from cuDNN %s at %s, so cudnnGetVersion() "
                         "reports %s, which %s accepts; %s." % (
                             runs.version, runs.directory, runs.version, fw.name, pip_says))
    if installed.release[:2] < want.release[:2]:
        # What the framework itself does with an older minor at run time (compat's [cudnn_acceptance]): torch,
        # TensorFlow and JAX refuse it; ONNX Runtime and CuPy ask only for the soname; Paddle warns and runs.
        # cudnnGetVersion() has three parts: the wheel's fourth (9.1.0.70) is never what a framework prints
        runtime = ".".join(str(part) for part in installed.release[:3])
        verdict = compat.acceptance.accepts(framework_kind(fw), str(want), runtime)
        if verdict.accepts:
            return WARNING, ("%s checks no more than the major at run time, so cuDNN %s runs it though it was built "
                             "with %s%s; %s [%s]." % (
                                 fw.name, installed, want, " (%s)" % verdict.why if verdict.why else "",
                                 pip_says, verdict.source))
        return (ERROR if loads_it else WARNING), (
            "It loads this older minor and stops: %s (cuDNN runs only programs built with an older or equal "
            "minor)." % (verdict.why if verdict.why.startswith("'") else "'%s'" % verdict.why))
    return WARNING, ("cuDNN %s still runs a program built with %s (same major, newer or equal minor), so it loads; "
                     "%s." % (installed, want, pip_says))


@rule("CD703", "tensorflow-windows-no-gpu", "TensorFlow 2.11+ has no GPU support on native Windows", section="python")
def tf_windows(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if platform_of(facts) != "windows":
        return []
    compat = compat_of(ctx)
    last_gpu = compat.tensorflow_last_windows_gpu()
    if last_gpu is None:
        return []  # compat does not say which release was the last: cannot tell
    # The last native-Windows GPU release's tested build: the CUDA and cuDNN to pair it with.
    row = next((r for r in compat.framework_rows("tensorflow_windows") if ver(r["tensorflow"]) == last_gpu), None)
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        v = ver(fw.version.split("+")[0])
        if framework_kind(fw) == "tensorflow" and v is not None and v > last_gpu:
            out.append(finding(
                WARNING, "TensorFlow %s has no GPU support on native Windows" % fw.version,
                detail="TensorFlow %s was the last release with native-Windows GPU support [%s]." % (
                    last_gpu, compat.framework_source("tensorflow_windows")),
                remedy=tensorflow_native_windows_fix(str(last_gpu), row),
                evidence={"framework": fw.name, "version": fw.version}, catalogue=["G2"]))
    return out


@rule("CD704", "framework-cudnn-unresolved", "A framework cannot find the cuDNN it links", platforms=LINUX,
      section="python")
def unresolved(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for fw in facts.python.frameworks:
        res = fw.resolved_cudnn
        if res is None or res.path or fw.name.startswith("paddlepaddle"):
            continue  # Paddle's own dlopen by name: CD707
        # The soname's major; an unversioned name: the build's cuDNN, else the newest with a build for its CUDA.
        major = int(res.name.rsplit(".", 1)[1]) if re.search(r"\.\d+$", res.name) else major_of(fw.cudnn_version)
        others = [c for c in facts.cudnn if c.major != major]
        # The wheel is there beside it, but its library does not search that folder (ONNX Runtime has no RPATH to
        # it: its preload_dlls() loads it, which the program must call). Said in the detail: the title stays the
        # same while the problem does (fix's before/after matches findings by their words).
        beside = next((c for c in facts.cudnn if c.major == major and same_file(c.directory, own_cudnn_wheel_dir(fw))),
                      None)
        built, theirs = major_of(fw.cuda_version), major_of(beside.cuda_version) if beside is not None else None
        if beside is not None and built is not None and theirs is not None and built != theirs:
            why = " The copy installed beside it (%s) is built for CUDA %s, %s for CUDA %s." % (
                beside.package or beside.directory, beside.cuda_version, fw.name, fw.cuda_version)
        elif beside is not None:
            why = " The copy installed beside it (%s) is not on that path%s." % (
                own_cudnn_wheel_dir(fw), ": onnxruntime.preload_dlls(), if the program calls it, loads that copy"
                if framework_kind(fw) == "onnxruntime" else "")
        else:
            why = ""
        out.append(finding(
            ERROR, "%s needs %s and none is on its search path" % (framework_label(facts, fw), res.name),
            detail="It fails to import or falls back to CPU with '%s: cannot open shared object file'.%s%s" % (
                res.name, why, (" Found other majors: %s." % ", ".join(
                    "libcudnn.so.%s at %s" % (c.major, c.directory) for c in others)) if others else ""),
            remedy=whole_environment_fix(facts, compat, fw, unresolved_cudnn_fix(facts, compat, fw, major)),
            evidence={"framework": fw.name, "needs": res.name, "consumer": fw.consumer_library,
                      "other_copies": [c.path for c in others]}, catalogue=["D1", "G6"]))
    return out
