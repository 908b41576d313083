"""Fixes for Python frameworks and their cuDNN: the CUDA build of a CPU-only install, a wheel a framework pins, the
cuDNN it cannot find, and LD_LIBRARY_PATH entries that hand it another copy."""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Container, Dict, Iterable, List, Optional, Tuple


from ..knowledge import Compat
from ..model import CudnnCopy, Facts, Fix, FrameworkFacts
from ..queries import (best_torch_variant, cudnn_pin_floor, driver_cuda, driver_version, framework_kind,
                       missing_sublibraries, own_cudnn_wheel_dir, platform_of, site_wheels)
from ..versions import canonical_name, mm_text, requirements, ver
from .cudnn import machine_cudnn_fix, reinstall_fix
from .environment_layout import other_cudnn_wheels
from .environments import applying_requirements
from .onnxruntime import onnxruntime_cuda_fix
from .acting import pip
from .shell import advice, ld_library_path_without, or_else, prepend_ld_path, run, said, say, then
from .software import driver_upgrade_fix, jax_install, torch_install


def onnxruntime_gpu_fix() -> Fix:
    """Keep onnxruntime-gpu alone: both packages share one folder and overwrite each other."""
    return run(pip("uninstall -y onnxruntime onnxruntime-gpu"), pip("install onnxruntime-gpu"))


def framework_gpu_build_fix(facts: Facts, compat: Compat, fw: FrameworkFacts) -> Fix:
    """Replace a CPU-only framework build with its CUDA build (for PyTorch, the variant this driver and GPU run)."""
    kind = framework_kind(fw)
    if kind == "torch":
        best = best_torch_variant(facts, compat, fw.version, site=fw.location)
        if best:
            # Keep the installed release (2.5.1, not the table's minor 2.5, which pip reads as 2.5.0).
            installed = fw.version.split("+")[0]
            pin = installed if mm_text(installed) == best["torch"] else best["torch"]
            return then(run(pip("uninstall -y torch")), torch_install(compat, pin, best["cuda"]), joint=" && ")
        # No CUDA build in compat runs on this driver and GPU: the driver has to move first.
        rows = compat.framework_rows("pytorch")
        newest = max(rows, key=lambda r: (ver(r["torch"]), ver(r["cuda"]))) if rows else None
        return say("%s; then %s && %s",
                   driver_upgrade_fix("one that runs a PyTorch CUDA build (driver %s is too old for all of them)" %
                                      (driver_version(facts) or "?"), platform_of(facts)),
                   run(pip("uninstall -y torch")),
                   torch_install(compat, newest["torch"], newest["cuda"]) if newest else "install PyTorch's CUDA build")
    if kind == "tensorflow":
        return run(pip("uninstall -y %s" % fw.name), pip('install "tensorflow[and-cuda]"'))
    if kind == "jax":
        return jax_install(facts, compat)
    if kind == "paddle":
        return run(pip("uninstall -y paddlepaddle"), pip("install paddlepaddle-gpu"))
    if kind == "onnxruntime":
        return onnxruntime_gpu_fix()
    return advice("install the CUDA build of %s" % fw.name)


def framework_pin_fix(name: str, specifier: object) -> Fix:
    """Install the release of a wheel a framework pins, in the framework's environment."""
    return or_else(run(pip('install "%s%s"' % (name, specifier))),
                   "in that environment; better: one virtual environment per framework", "%s   (%s)")


def leave_pin_conflict_fix(name: str, installed: str, others: List[Tuple[str, str]]) -> Fix:
    """No release of `name` meets every framework's pin: installing one's would break another's ((framework,
    specifier) of each other pin)."""
    return advice("leave %s %s as it is: no release also meets %s, so installing this framework's pin would break "
                  "that; each loads the installed one (same soname). For the exact releases each was tested with: one "
                  "virtual environment per framework" % (name, installed, " and ".join(
                      "%s's %s" % pair for pair in others)))


def tensorflow_wheels_fix(version: str) -> Fix:
    """TensorFlow with the CUDA and cuDNN wheels it was tested with (its [and-cuda] extra)."""
    return run(pip('install "tensorflow[and-cuda]==%s"' % version))


def tensorflow_native_windows_fix(last_native_gpu: str, tested: Optional[Dict[str, Any]]) -> Fix:
    """TensorFlow past its last native-Windows GPU release: WSL2, or that release (with its tested CUDA and cuDNN)."""
    pair = (" with CUDA %s and cuDNN %s (its tested build)" % (tested["cuda"], tested["cudnn"])) if tested else ""
    if tested and tested.get("python"):  # its wheels stop at that Python (a newer one finds no release)
        pair += " on Python %s" % tested["python"]
    native = 'pip install "tensorflow==%s.*"' % mm_text(last_native_gpu)
    return or_else(said("Run TensorFlow in WSL2 with `%s`", 'pip install "tensorflow[and-cuda]"'),
                   said("`%s`" + pair.replace("%", "%%") + ".", native), "%s, or %s")


def _pinned_cudnn_wheel_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, major: Optional[int]) -> Fix:
    for _, req in requirements(fw.requires):
        floor = cudnn_pin_floor(fw, major)
        own_wheel = compat.cudnn_wheel(fw.cuda_version) if fw.cuda_version else None
        if own_wheel and canonical_name(req.name) != canonical_name(own_wheel):
            continue  # a pin for another CUDA than the framework's build: not what its installer would put there
        if canonical_name(req.name).startswith("nvidia-cudnn-") and floor is not None and req.specifier.contains(
                floor, prereleases=True):
            return run(pip('install "%s%s"' % (req.name, req.specifier)))
    return machine_cudnn_fix(facts, compat, fw.cuda_version or driver_cuda(facts, compat), major, None, "pip")


def framework_cudnn_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, major: Optional[int]) -> Fix:
    """The cuDNN a framework links but cannot find: its own pin of that major where it has one (what its installer
    would have put there); ONNX Runtime's release-aware way; else the cuDNN build for its CUDA."""
    wheel_dir = own_cudnn_wheel_dir(fw)
    # The wheel is there but lacks sub-libraries: pip counts it installed and changes nothing, so reinstall it.
    damaged = any(os.path.normpath(c.directory) == wheel_dir and c.major == major and missing_sublibraries(compat, c)
                  for c in facts.cudnn)
    ort = framework_kind(fw) == "onnxruntime"
    install = pip("install ")
    if ort:  # its fix puts the folders on the path itself
        fix = onnxruntime_cuda_fix(compat, fw.version, fw.location, reinstall=damaged,
                                   site_releases=site_wheels(facts, fw.location))
    else:
        fix = _pinned_cudnn_wheel_fix(facts, compat, fw, major)
        if damaged and fix.commands and fix.commands[0].startswith(install):
            fix = run(install + "--force-reinstall --no-deps " + fix.commands[0][len(install):], *fix.commands[1:])
    wheel = _cudnn_wheel_installed(fix.commands[0]) if fix.commands else None
    for stale in other_cudnn_wheels(facts, fw.location, wheel.group(1), {major}) if wheel else ():
        # another CUDA's wheel of this major writes the same files (a new user's trial: nvidia-cudnn-cu11 8.9.6 stayed
        # on top of the cu12 8.9.7 installed for CuPy, and uninstalling it later deleted CuPy's cuDNN; another: cu13's
        # beside ONNX Runtime's CUDA 12 build)
        fix = other_cuda_wheel_first(stale, fix, site_wheels(facts, fw.location))
    if not ort and fix.commands and fix.commands[0].startswith(pip("")) and fw.library_search_path is not None and \
            wheel_dir not in fw.library_search_path:
        # Its library searches no site-packages/nvidia folder (CuPy 13's has no RPATH at all): the wheel's folder
        # has to be on the plain search path.
        fix = then(fix, run(prepend_ld_path(wheel_dir)), joint=" && ")
    return fix


def foreign_sublibraries_fix(facts: Facts, entries: Iterable[str]) -> Fix:
    """Drop the LD_LIBRARY_PATH entries that hand a cuDNN shim another copy's sub-libraries."""
    return ld_library_path_without(facts, entries)


def cudnn_package_reinstall_fix(facts: Facts, compat: Compat, copy: Optional[CudnnCopy], folder: str,
                                fw: Optional[FrameworkFacts] = None) -> Fix:
    """Reinstall the cuDNN whose shim lacks sub-libraries (named by its folder where no copy is known); a wheel the
    framework `fw` pins, at a release its pin admits (reinstalled at its own release it would undo the pin's fix); a
    wheel of another CUDA than the framework's is replaced by its own CUDA's (whole, it would still be the wrong
    build: CD501)."""
    wheel = copy.pip_wheel() if copy is not None else None
    own = compat.cudnn_wheel(fw.cuda_version) if fw is not None and fw.cuda_version else None
    if fw is not None and copy is not None and wheel and own and \
            canonical_name(wheel[0]).startswith("nvidia-cudnn-") and canonical_name(wheel[0]) != canonical_name(own):
        return other_cuda_wheel_first(wheel[0], _pinned_cudnn_wheel_fix(facts, compat, fw, copy.major),
                                      site_wheels(facts, fw.location))
    if fw is not None and wheel:
        for req in applying_requirements(fw):
            if canonical_name(req.name) == canonical_name(wheel[0]) and \
                    not req.specifier.contains(wheel[1], prereleases=True):
                return run(pip('install --force-reinstall --no-deps "%s%s"' % (req.name, req.specifier)))
    bad = compat.bad_wheel(*wheel) if wheel else None
    if wheel and bad is not None:  # reinstalled, the wheel would lack the same file again
        return say("%s %s lacks %s; a release from %s on has it: %s", wheel[0], wheel[1], bad.get("lacks", "a file"),
                   bad["fixed_in"], run(pip('install -U "%s>=%s"' % (wheel[0], bad["fixed_in"]))))
    if copy:
        return reinstall_fix(compat, copy, facts)
    return advice("reinstall the cuDNN package that put libcudnn.so.N into %s, so all its sub-libraries are there"
                  % folder)


def _cudnn_wheel_installed(command: str) -> Optional["re.Match[str]"]:
    """The cuDNN wheel a `pip install` line installs first (group 1: nvidia-cudnn-cuNN), options before it skipped."""
    return re.match(re.escape(pip("install ")) + r'(?:--\S+ )*"?(nvidia-cudnn-cu\d+)\b', command)


def other_cuda_wheel_first(wheel: str, install: Fix, site_releases: Container[str] = ()) -> Fix:
    """``install`` after the other CUDA's cuDNN wheel ``wheel`` is uninstalled: both wheels write nvidia/cudnn/lib,
    so the old one uninstalled later (another finding's fix, or the user tidying up) would delete the new one's
    files (draw 31337/268). A wheel it installs that the site already lists (``site_releases``) has had its files
    overwritten by the other and loses them with its uninstall, while pip still counts it installed: it is
    reinstalled whole (round 17's trial, E2: the printed fix left torch's cu12 wheel without a file)."""
    first = install.commands[0] if install.commands else ""
    own = _cudnn_wheel_installed(first)
    if own and canonical_name(own.group(1)) in site_releases and "--force-reinstall" not in first:
        again = pip("install --force-reinstall --no-deps ") + first[len(pip("install ")):]
        install = dataclasses.replace(install, text=install.text.replace(first, again),
                                      commands=[again] + list(install.commands[1:]))
    return then(run(pip("uninstall -y %s" % wheel)), install, joint=" && ")


def own_cudnn_again_fix(facts: Facts, entry: str, framework: str) -> Fix:
    """Drop the LD_LIBRARY_PATH entry that hands a framework an older cuDNN than its own."""
    return say("%s   (so %s finds its own cuDNN again)", ld_library_path_without(facts, [entry]), framework)


def ld_library_path_cudnn_fix(facts: Facts, entry: str) -> Fix:
    """Drop the LD_LIBRARY_PATH entry that beats a framework's own cuDNN (or unload the module that adds it)."""
    return or_else(ld_library_path_without(facts, [entry]), said("`%s`, or edit ~/.bashrc", "module unload cudnn"))
