"""CD8xx: containers and WSL2: GPU access inside a container, the WSL driver share (its /dev/shm: compat/checks.toml)."""
from __future__ import annotations

from typing import List, Optional

from ..model import Facts, Finding
from . import LINUX, RuleContext, rule
from ..queries import driver_cuda, driver_place, primary_toolkit
from ..remedies.driver import missing_driver_fix
from ..remedies.containers import (purge_unused_wsl_linux_driver_fix, replace_wsl_linux_driver_fix,
                                   wsl_driver_fix)
from .common import ERROR, INFO, WARNING, compat_of, finding

_WSL_LIB = "/usr/lib/wsl/"


def _nvidia_nodes(facts: Facts) -> List[str]:
    return [n for n in facts.host.dev_nodes if n.startswith("/dev/nvidia")]


def _wsl_toolkit(facts: Facts, ctx: RuleContext) -> Optional[str]:
    """The toolkit package to keep or install in WSL: the installed toolkit's release, else the Windows driver's
    CUDA (what nvidia-smi prints in WSL)."""
    compat = compat_of(ctx)
    tk = primary_toolkit(facts)
    for cuda in ((tk.version if tk else None), driver_cuda(facts, compat)):
        package = compat.toolkit_package(cuda) if cuda else None
        if package:
            return package
    return None


def _libcuda(facts: Facts) -> Optional[str]:
    res = facts.loader.resolved.get("libcuda.so.1")
    return (res.path if res else None) or facts.driver.libcuda_path


@rule("CD801", "container-without-gpu", "Container started without GPU access", platforms=LINUX, section="driver")
def container(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.host.in_container or facts.host.wsl:
        return []
    nodes = _nvidia_nodes(facts)
    lib = _libcuda(facts)
    nvd = facts.visibility.nvidia_visible_devices
    if nodes and lib:
        return []
    if not nodes:
        title = ("No NVIDIA GPU or driver is visible: this container has no /dev/nvidia* devices" if not lib else
                 "This container has no NVIDIA devices (/dev/nvidia*)")
        why = ("It was started without GPU access (or the host has no NVIDIA GPU, in which case CUDA and cuDNN "
               "cannot run here at all)")
    else:
        title = "This container has NVIDIA devices but no driver library (libcuda.so.1)"
        why = "The NVIDIA Container Toolkit did not inject the driver's compute libraries"
    if nvd in ("void", "none", ""):
        why += " (NVIDIA_VISIBLE_DEVICES=%r asks for no GPU)" % nvd
    return [finding(
        ERROR, title,
        detail="%s, so CUDA reports no device or 'CUDA driver version is insufficient' and nvidia-smi is missing." %
               why,
        remedy=missing_driver_fix(driver_place(facts)),
        evidence={"dev_nodes": facts.host.dev_nodes, "libcuda": lib, "NVIDIA_VISIBLE_DEVICES": nvd},
        catalogue=["H1", "H3"])]


@rule("CD802", "wsl-linux-driver-installed", "A Linux NVIDIA driver is installed inside WSL", platforms=LINUX,
      section="driver")
def wsl_linux_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.host.wsl:
        return []
    lib = _libcuda(facts)
    if lib and lib.startswith(_WSL_LIB):
        res = facts.loader.resolved.get("libcuda.so.1")
        native = [s["path"] for s in (res.shadowed if res else []) if not s["path"].startswith(_WSL_LIB)]
        if not native:
            return []
        return [finding(
            WARNING, "A Linux NVIDIA driver library is installed inside WSL: %s" % native[0],
            detail="WSL2 must use the Windows driver in /usr/lib/wsl/lib. The Linux copy loses today only because of "
                   "search order; an LD_LIBRARY_PATH entry or an ldconfig change makes CUDA load it and find no "
                   "device.",
            remedy=purge_unused_wsl_linux_driver_fix(_wsl_toolkit(facts, ctx)),
            evidence={"libcuda": lib, "native_copies": native}, catalogue=["H4"])]
    if not lib:
        return []
    return [finding(
        ERROR, "libcuda.so.1 resolves to %s, not the WSL driver in /usr/lib/wsl/lib" % lib,
        detail="WSL2 uses the Windows driver through /dev/dxg and /usr/lib/wsl/lib; a Linux driver installed in the "
               "distro (often by the `cuda` meta-package or the runfile) shadows it and CUDA finds no device.",
        remedy=replace_wsl_linux_driver_fix(_wsl_toolkit(facts, ctx)),
        evidence={"libcuda": lib}, catalogue=["H4"])]


@rule("CD803", "wsl-driver-share-not-symlinks", "WSL ships the driver as copies (benign ldconfig warning)",
      platforms=LINUX, section="driver")
def wsl_share(facts: Facts, ctx: RuleContext) -> List[Finding]:
    lib = _libcuda(facts)
    if not facts.host.wsl or not lib or not lib.startswith(_WSL_LIB):
        return []
    return [finding(
        INFO, "WSL2 driver libraries in /usr/lib/wsl/lib are copies, not links",
        detail="ldconfig prints '/usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link' on every apt run; that is "
               "how WSL shares the Windows driver and it is harmless. The GPU is paravirtualised, so lspci shows "
               "no NVIDIA device either.", evidence={"libcuda": lib}, catalogue=["H5"])]


@rule("CD804", "wsl-driver-missing", "WSL2 without the Windows NVIDIA driver", platforms=LINUX, section="driver")
def wsl_missing(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if not facts.host.wsl:
        return []
    has_dxg = "/dev/dxg" in facts.host.dev_nodes
    lib = _libcuda(facts)
    if has_dxg and lib:
        return []
    return [finding(
        ERROR, "WSL2 has no GPU: %s" % ("/dev/dxg is missing" if not has_dxg else
                                                 "no libcuda.so.1 in /usr/lib/wsl/lib"),
        detail="Under WSL2 the GPU comes from the Windows NVIDIA driver; without it CUDA finds no device.",
        remedy=wsl_driver_fix(),
        evidence={"dev_nodes": facts.host.dev_nodes, "libcuda": lib}, catalogue=["H4"])]
