"""Fixes for a --require policy the machine does not meet: the driver, CUDA toolkit, cuDNN or GPU it asks for."""
from __future__ import annotations

from typing import Any, Optional

from ..knowledge import Compat
from ..model import Facts, Fix
from ..versions import major_of, mm_text
from .cudnn import cudnn_wheel_for
from .acting import doctor, pip, system
from .shell import advice, capitalized, run, said, say
from .software import driver_upgrade_fix, toolkit_install_fix
from .targets import driver_first_fix


def requirement_driver_fix(requirement: str, platform: str) -> Fix:
    """A driver (and so a driver CUDA version) that satisfies the requirement."""
    return driver_upgrade_fix("a release that satisfies %s" % requirement, platform)


def requirement_toolkit_fix(facts: Facts, compat: Compat, requirement: str, cuda: Optional[str],
                            driver_first: bool) -> Fix:
    """The CUDA toolkit `cuda` that satisfies the requirement (after the driver it needs, where this one cannot run
    it); without one, a word that no release in compat does."""
    if cuda is None:
        return advice("No CUDA release in compat satisfies %s; check the expression" % requirement)
    fix = say("install CUDA %s, which satisfies %s: %s", cuda, requirement, toolkit_install_fix(facts, compat, cuda))
    if driver_first:
        return driver_first_fix(facts, compat, cuda, fix)
    return capitalized(fix)


def requirement_cudnn_fix(compat: Compat, requirement: str, spec: Any, cuda: Optional[str],
                          cudnn9_satisfies: bool) -> Fix:
    """A cuDNN that satisfies the requirement for the machine's CUDA: its wheel, or NVIDIA's apt channel for cuDNN 9
    (where a cuDNN 9 release satisfies it); else how to find the build by hand."""
    wheel = cudnn_wheel_for(compat, cuda)
    cm = major_of(cuda) if cuda else None
    apt = next((r for r in compat.cudnn_channels() if r.get("channel") == "apt-v9"), None)
    ways = []
    if wheel:
        ways.append(pip('install "%s%s"' % (wheel, spec)))
    if apt and cm is not None and compat.has_minor_compat(cm) and cudnn9_satisfies:
        ways.append(system(str(apt["install"]).replace("<cuda_major>", str(cm))))
    if not ways:
        return said("Install a cuDNN that satisfies %s built for this machine's CUDA %s (`%%s` lists the builds) "
                    "and make it the one programs load" % (requirement, cuda or "?"),
                    doctor("matrix --cuda %s" % (mm_text(cuda) or "?")))
    return run(ways[0], text="Install a cuDNN that satisfies %s (%s) and make it the one programs load" % (
        requirement, " or ".join("`%s`" % way for way in ways)), manual=" or ".join(ways[1:]), alternatives=ways[1:])


def requirement_gpu_fix(requirement: str) -> Fix:
    return advice("Run on a GPU whose compute capability satisfies %s" % requirement)
