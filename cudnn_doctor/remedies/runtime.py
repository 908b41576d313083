"""Fixes for the cuDNN programs load at run time: a build for the right CUDA, driver or GPU, a release not older than
a framework's build or known to break, and which of two copies a program gets."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence

from ..knowledge import Compat
from ..model import CudnnCopy, Facts, Fix, FrameworkFacts
from ..queries import (compiled_cudnn, cudnn_older, distro_lib_dir, framework_kind, ld_entry_for, machine_cuda,
                       own_cudnn_wheel_dir, platform_of, site_wheels)
from ..versions import major_of, mm_text
from .cudnn import copy_wheel, cudnn_wheel_for, machine_cudnn_fix
from .environments import pythonpath_cudnn, pythonpath_cudnn_removal
from .frameworks import framework_cudnn_fix, other_cuda_wheel_first, own_cudnn_again_fix, tensorflow_wheels_fix
from .acting import conda, pip
from .shell import (advice, capitalized, ld_library_path_without, or_else, prepend_ld_path, prepends_ld_path, q,
                    run, say, then)
from .software import driver_upgrade_fix, jax_install


def _channel(copy: CudnnCopy) -> str:
    """The channel a replacement comes through: the copy's own package manager, else the system's."""
    return copy.origin if copy.origin in ("pip", "conda") else "system"


def cudnn_for_cuda_fix(facts: Facts, compat: Compat, copy: CudnnCopy, cuda: Any,
                       fw: Optional[FrameworkFacts] = None) -> Fix:
    """The build of the same cuDNN release for the CUDA it is used with, from the channel the copy came from; for a
    framework that gets the copy through LD_LIBRARY_PATH, that entry dropped (a copy installed elsewhere would
    still lose to it: draws 880088/3, /18)."""
    entry = ld_entry_for(facts, copy.path) if fw is not None else None
    if fw is not None and entry:
        # Its own copy serves only if it fits that CUDA and is not older than its build (draw 31337/222: TF 2.19 over
        # a 9.1 wheel, its pin forced off, got CD503 once the CUDA 13 folder went).
        compiled = compiled_cudnn(fw)
        return without_entry_fix(facts, compat, fw, entry, copy.major,
                                 lambda own: compat.cudnn_cuda_verdict(str(own.version), own.cuda_version, cuda)[0]
                                 is not False and not (compiled and cudnn_older(str(own.version), compiled)[0]))
    if fw is not None and os.path.normpath(copy.directory) != own_cudnn_wheel_dir(fw) and (
            framework_kind(fw) == "onnxruntime" or copy.origin not in ("pip", "conda") and
            not (copy.package or "").startswith(("deb ", "rpm ")) and not distro_lib_dir(copy.directory)):
        # A framework handed a tarball folder's copy: a system package for its CUDA needs root and may not beat that
        # folder in ld.so.cache (draws 880088/247, 31337/145, /262); its own CUDA's wheel in its site does (its
        # RPATH, or, for ONNX Runtime and CuPy 13 which search only the plain path, that folder first on
        # LD_LIBRARY_PATH), and changes nothing for the machine's other programs. A distribution package's copy is
        # replaced in place by the right build's package.
        return framework_cudnn_fix(facts, compat, fw, copy.major)
    if fw is not None and copy.origin == "pip" and os.path.normpath(copy.directory) == own_cudnn_wheel_dir(fw):
        # The framework's own site: what it pins for that CUDA, the release every other finding about it installs
        # (draw 291129-43: CD501's same-release build beside CD709's pin made one pip install that cannot resolve).
        install = framework_cudnn_fix(facts, compat, fw, copy.major)
    else:
        install = machine_cudnn_fix(facts, compat, cuda, copy.major, copy.version, _channel(copy))
    wheel = copy.pip_wheel()
    if wheel and wheel[0].startswith("nvidia-cudnn-") and install.commands and \
            install.commands[0].startswith(pip("install")) and wheel[0] not in install.commands[0]:
        install = other_cuda_wheel_first(wheel[0], install, site_wheels(facts, os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.normpath(copy.directory))))))
    return say("Install the cuDNN build for CUDA %s: %s", mm_text(cuda) or cuda, install)


def without_entry_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, entry: str, major: Optional[int],
                      fits: Callable[[CudnnCopy], bool]) -> Fix:
    """Drop the LD_LIBRARY_PATH entry that hands a framework a cuDNN it cannot use; where its own site holds no copy
    that ``fits``, its pinned wheel is installed too, and every other entry holding that major goes as well, or the
    new release's libcudnn_graph (RUNPATH $ORIGIN, after LD_LIBRARY_PATH) takes its engines from there (draw
    61127/66)."""
    if _own_copy_fits(facts, fw, major, fits):
        return own_cudnn_again_fix(facts, entry, fw.name)
    return _without_same_major(facts, fw, major, framework_cudnn_fix(facts, compat, fw, major), [entry])


def _own_copy_fits(facts: Facts, fw: FrameworkFacts, major: Optional[int], fits: Callable[[CudnnCopy], bool]) -> bool:
    """Whether the framework's own site holds a cuDNN that ``fits``, at the major it needs (a cu12 8.9 wheel fits
    CUDA 12, yet libcudnn.so.9 is not there)."""
    own = own_cudnn_wheel_dir(fw)
    return any(os.path.normpath(c.directory) == own and c.version and (major is None or c.major == major) and fits(c)
               for c in facts.cudnn)


def _without_same_major(facts: Facts, fw: FrameworkFacts, major: Optional[int], install: Fix,
                        entries: Sequence[str] = ()) -> Fix:
    """``install`` after dropping ``entries`` and every LD_LIBRARY_PATH entry holding a cuDNN of ``major``: the new
    release's libcudnn_graph (RUNPATH $ORIGIN, after LD_LIBRARY_PATH) would take its engines from there (draws
    61127/66, 31337/1)."""
    own = own_cudnn_wheel_dir(fw)
    others = [e for e in (ld_entry_for(facts, c.path) for c in facts.cudnn if c.major == major) if e]
    # Its own wheel folder stays where the pin replaces that wheel in place (the same CUDA's wheel): a framework beside
    # it that finds the wheels only through LD_LIBRARY_PATH (ONNX Runtime, CuPy 13) would lose its cuDNN (draw
    # 31337/26: JAX's CD503 dropped it). Another CUDA's wheel there stays behind and goes (draw 61127/66).
    in_place = any(os.path.normpath(c.directory) == own and major_of(c.cuda_version) == major_of(fw.cuda_version)
                   for c in facts.cudnn if c.cuda_version and fw.cuda_version)
    drop = [e for e in dict.fromkeys([*entries, *others]) if not (in_place and os.path.normpath(e) == own)]
    return then(ld_library_path_without(facts, drop), install, joint=" && ") if drop else install


def unresolved_cudnn_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, major: Optional[int]) -> Fix:
    """The cuDNN a framework cannot find, installed where it looks; a copy of that major left on LD_LIBRARY_PATH
    goes first, unless the fix puts the new copy's folder first there itself (ONNX Runtime, CuPy 13)."""
    install = framework_cudnn_fix(facts, compat, fw, major)
    if prepends_ld_path(install):
        return install
    return _without_same_major(facts, fw, major, install)


def driver_or_cudnn_for_driver_fix(facts: Facts, compat: Compat, copy: CudnnCopy, floor: Any,
                                   driver_cuda: Optional[str]) -> Fix:
    """A driver new enough for the CUDA a cuDNN build needs, or the cuDNN build for the CUDA the driver runs."""
    return or_else(driver_upgrade_fix(floor.text() if floor else "a newer release", platform_of(facts)),
                   say("install the cuDNN build for CUDA %s: %s", driver_cuda or "?",
                       machine_cudnn_fix(facts, compat, driver_cuda, copy.major)), "%s; or %s")


def cudnn_not_older_than_build_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, copy: CudnnCopy,
                                   compiled: str, entry: Optional[str]) -> Fix:
    """Let a framework load a cuDNN at least the one it was built with: drop the LD_LIBRARY_PATH entry that hands it
    the older one (and, where its own site holds no cuDNN that new, install the one it pins), else reinstall the
    framework's own CUDA wheels, else upgrade the cuDNN it loads."""
    fits: Callable[[CudnnCopy], bool] = lambda own: not cudnn_older(str(own.version), compiled)[0]
    if entry:  # nothing of its own that new behind it (a conda prefix's copy was its only one): its pin too
        return without_entry_fix(facts, compat, fw, entry, major_of(compiled), fits)
    shadow = pythonpath_cudnn(facts, copy.path)
    if shadow is not None and _own_copy_fits(facts, fw, major_of(compiled), fits):
        # The framework's Python side imports nvidia.cudnn from a `pip install --target` folder on PYTHONPATH ahead
        # of its site's newer wheel: that copy goes, and nothing is installed (a new-user trial: `pip install -U
        # "jax[cuda12]"` fetched 2 GB and healed nothing)
        return pythonpath_cudnn_removal(shadow)
    kind = framework_kind(fw)
    if kind == "tensorflow":
        return tensorflow_wheels_fix(fw.version.split("+")[0])
    if kind == "jax":
        if shadow is not None:
            # A `pip install --target` or .pth folder's copy: it goes (its nvidia/__init__.py makes that folder's
            # `nvidia` the one JAX imports, whatever the site holds), then the cuDNN the installed release pins; a JAX
            # reinstall healed nothing and moved JAX 0.7.2 to 0.10.2 (draw 505425-124)
            return pythonpath_cudnn_removal(shadow, framework_cudnn_fix(facts, compat, fw, major_of(compiled)))
        if copy.origin == "pip":
            return jax_install(facts, compat, fw.cuda_version)
        # a system or tarball copy: its own wheel, found through its RPATH first (draw 271127/273)
        return framework_cudnn_fix(facts, compat, fw, major_of(compiled))
    # The wheel of the framework's own CUDA (the copy's may be another's: a cu11 8.9 under a torch built for 12 or
    # 13), and only where NVIDIA built the release it was compiled with for that CUDA.
    cuda = fw.cuda_version or copy.cuda_version or machine_cuda(facts, compat)
    wheel = cudnn_wheel_for(compat, cuda) if copy.origin == "pip" and cuda else None
    if wheel and compat.cudnn_build_exists_on(compiled, cuda).exists is not False:
        return run(pip('install "%s>=%s"' % (wheel, compiled)))
    return advice("Upgrade the cuDNN at %s to %s or newer (same major)" % (copy.directory, compiled))


def keep_own_copies_fix(framework: Optional[str] = None, shared: Optional[CudnnCopy] = None,
                        system: Optional[CudnnCopy] = None) -> Fix:
    """Two cuDNN copies in use: nothing to change, or, to give every program the copy `framework` uses, put its
    folder first or bring the system copy to its release."""
    if framework is None or shared is None or system is None:
        return advice("Nothing to change if each program keeps to its own copy.")
    return say("Nothing to change if each program keeps to its own copy. To give programs that link cuDNN "
               "themselves (C/C++ builds, ctranslate2, cudnn-frontend) the same cuDNN as %s, put its folder "
               "first: %s, or upgrade the system copy at %s to %s.", framework,
               run(prepend_ld_path(shared.directory)), system.directory, shared.version or "the same release")


def known_bad_upgrade_fix(facts: Facts, compat: Compat, copy: CudnnCopy, fixed_in: Any) -> Fix:
    """Move past a known-bad cuDNN release: its wheel at the fixed release, else the build for the copy's CUDA."""
    wheel = copy_wheel(compat, copy, machine_cuda(facts, compat))
    if copy.origin == "pip" and wheel:
        how = run(pip('install -U "%s>=%s"' % (wheel, fixed_in)))
    else:
        how = machine_cudnn_fix(facts, compat, copy.cuda_version or machine_cuda(facts, compat), copy.major, None,
                                copy.origin)
    return say("Upgrade to cuDNN %s or newer: %s", fixed_in, how)


def cudnn_for_newer_gpu_fix(facts: Facts, compat: Compat, copy: CudnnCopy, cuda: Any,
                            driver_floor: Optional[str] = None) -> Fix:
    """A newer cuDNN built for CUDA `cuda`, which has kernels for the GPU; first the driver `driver_floor` where
    that CUDA needs one."""
    steps = []
    if driver_floor is not None:
        steps.append(driver_upgrade_fix(">= %s" % driver_floor, platform_of(facts)))
    steps.append(say("install a newer cuDNN built for CUDA %s: %s", mm_text(cuda) or cuda,
                     machine_cudnn_fix(facts, compat, cuda, copy.major, None, _channel(copy))))
    return capitalized(then(*steps))


def conda_cudnn_upgrade_fix(prefix: str, minimum: str, major: int) -> Fix:
    """A conda environment's cuDNN raised to `minimum` within its major, from conda-forge."""
    return or_else(run(conda('install -p %s -c conda-forge "cudnn>=%s,<%d"' % (q(prefix), minimum, major + 1))),
                   "and avoid mixing pip nvidia-* wheels into conda environments", "%s   (%s)")
