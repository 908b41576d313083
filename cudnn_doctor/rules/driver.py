"""CD1xx: the NVIDIA driver and its kernel module."""
from __future__ import annotations

import os
from typing import List

from ..model import Facts, Finding
from . import LINUX, RuleContext, rule
from ..queries import driver_place, has_driver
from ..remedies.driver import (blacklist_nouveau_fix, compute_libraries_fix, driver_reload_fix, gpu_unseen_fix,
                              known_bad_driver_fix, missing_driver_fix, rebuild_kernel_module_fix, secure_boot_fix)
from .common import ERROR, INFO, compat_of, finding

_NOUVEAU = ("nouveau", "nova_core", "nova_drm", "nova-core")


def _uses_compat_libcuda(facts: Facts) -> bool:
    path = facts.driver.libcuda_path or ""
    res = facts.loader.resolved.get("libcuda.so.1")
    real = (res.realpath if res else None) or ""
    return "/compat/" in path or "/compat/" in real


@rule("CD101", "no-nvidia-driver", "No NVIDIA driver or GPU found", platforms=LINUX, section="driver")
def no_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if has_driver(facts) or facts.driver.nvidia_pci_devices:
        return []
    if facts.host.in_container or facts.host.wsl:
        return []  # CD801 / CD804 say it for containers and WSL, with the right fix
    return [finding(
        ERROR, "No NVIDIA driver or GPU was found on this machine",
        detail="There is no NVIDIA kernel module, no driver library (libcuda.so.1, libnvidia-ml.so.1) and no NVIDIA "
               "GPU on the PCI bus, so nothing can use CUDA or cuDNN here.",
        remedy=missing_driver_fix(driver_place(facts)),
        evidence={"kernel_module": None, "libcuda": None, "libnvidia-ml": None, "gpus": 0,
                  "kernel": facts.host.kernel_release},
    )]


@rule("CD102", "kernel-module-not-loaded", "NVIDIA kernel module not loaded", platforms=LINUX, section="driver")
def module_not_loaded(facts: Facts, ctx: RuleContext) -> List[Finding]:
    d = facts.driver
    if facts.host.in_container or facts.host.wsl or d.kernel_module_loaded is not False:
        return []
    if any(m in d.loaded_modules for m in _NOUVEAU) or any(
            (p.get("driver") or "") in _NOUVEAU for p in d.nvidia_pci_devices):
        return []  # nouveau owns the GPU: CD103
    if not (d.nvidia_pci_devices or d.libnvml_path or d.libcuda_path):
        return []
    kernel = facts.host.kernel_release or "$(uname -r)"
    evidence = {"pci_devices": d.nvidia_pci_devices, "kernel": facts.host.kernel_release,
                "loaded_modules": d.loaded_modules, "libnvidia-ml": d.libnvml_path, "libcuda": d.libcuda_path,
                "module_files": d.module_files, "secure_boot": d.secure_boot}
    subject = ("An NVIDIA GPU is present but the nvidia kernel module is not loaded" if d.nvidia_pci_devices
               else "NVIDIA driver libraries are installed but the nvidia kernel module is not loaded")
    if d.module_files and d.secure_boot:
        # The module exists for this kernel yet is not loaded, and Secure Boot is on: it was refused (A2).
        return [finding(
            ERROR, subject + ": Secure Boot is on and refused the module built for %s" % kernel,
            detail="The kernel only loads signed out-of-tree modules while UEFI Secure Boot is on ('Key was "
                   "rejected by service' in dmesg), so nvidia-smi 'couldn't communicate with the NVIDIA driver'.",
            remedy=secure_boot_fix(),
            evidence=evidence, catalogue=["A2"])]
    reason = ("no nvidia module was built for the running kernel %s (none under /lib/modules/%s)" % (kernel, kernel)
              if not d.module_files and facts.host.kernel_release else
              "the module exists but is not loaded")
    return [finding(
        ERROR, "%s: %s" % (subject, reason),
        detail="Without the kernel module nvidia-smi 'couldn't communicate with the NVIDIA driver' and CUDA finds no "
               "device. The usual cause is a kernel update for which the module was never built (DKMS missing, "
               "kernel headers missing, or the build failed); Secure Boot refusing an unsigned module is the other.",
        remedy=rebuild_kernel_module_fix(kernel),
        evidence=evidence, catalogue=["A1", "A2"],
    )]


@rule("CD103", "nouveau-owns-gpu", "nouveau (or nova_core) drives the GPU", platforms=LINUX, section="driver")
def nouveau(facts: Facts, ctx: RuleContext) -> List[Finding]:
    d = facts.driver
    loaded = [m for m in d.loaded_modules if m in _NOUVEAU]
    bound = [p for p in d.nvidia_pci_devices if (p.get("driver") or "") in _NOUVEAU]
    if not loaded and not bound:
        return []
    nova = any("nova" in m for m in loaded) or any("nova" in (p.get("driver") or "") for p in bound)
    return [finding(
        ERROR, "The open-source %s driver owns the NVIDIA GPU, so the NVIDIA driver cannot" % (
            "nova_core" if nova else "nouveau"),
        detail="The in-kernel driver bound the GPU first; the nvidia module then fails to load ('No NVIDIA devices "
               "probed') and CUDA sees nothing.",
        remedy=blacklist_nouveau_fix(nova),
        evidence={"loaded_modules": loaded, "pci_devices": bound or d.nvidia_pci_devices},
        catalogue=["A3"],
    )]


@rule("CD104", "driver-library-mismatch", "Driver libraries and kernel module differ", platforms=LINUX,
      section="driver")
def mismatch(facts: Facts, ctx: RuleContext) -> List[Finding]:
    d = facts.driver
    kernel = d.kernel_module_version
    pairs = []
    if kernel and d.libnvml_file_version and d.libnvml_file_version != kernel:
        pairs.append(("libnvidia-ml", d.libnvml_path, d.libnvml_file_version))
    if kernel and d.libcuda_file_version and d.libcuda_file_version != kernel and not _uses_compat_libcuda(facts):
        pairs.append(("libcuda", d.libcuda_path, d.libcuda_file_version))
    nvml_says = bool(d.nvml_error and "mismatch" in d.nvml_error.lower())
    if not pairs and not nvml_says:
        return []
    user = pairs[0][2] if pairs else "?"
    return [finding(
        ERROR, "Driver/library version mismatch: kernel module %s, user-space libraries %s" % (
            kernel or "?", user),
        detail="The driver's libraries were upgraded (often by unattended-upgrades) while the old kernel module is "
               "still loaded; NVML fails with 'Driver/library version mismatch' and CUDA cannot initialise.",
        remedy=driver_reload_fix(),
        evidence={"kernel_module": kernel, "nvml_error": d.nvml_error,
                  "libraries": {name: {"path": path, "version": v} for name, path, v in pairs}},
        catalogue=["A4", "I3"],
    )]


@rule("CD105", "driver-version-unknown", "Driver version could not be read", section="driver")
def version_unknown(facts: Facts, ctx: RuleContext) -> List[Finding]:
    d = facts.driver
    out: List[Finding] = []
    if has_driver(facts) and not d.version:
        out.append(finding(
            INFO, "Cannot tell the NVIDIA driver version",
            detail="Parts of a driver are present but neither NVML, libcuda's file name nor the kernel module said "
                   "its version; checks that depend on it are skipped.",
            evidence={"nvml_error": d.nvml_error, "libcuda_error": d.libcuda_error, "libcuda": d.libcuda_path}))
    elif d.nvml_error and "mismatch" not in d.nvml_error.lower():
        out.append(finding(
            INFO, "NVML could not be used: %s" % d.nvml_error,
            detail="GPU details (compute capability, memory, MIG, compute mode) come from NVML; without it those "
                   "checks are skipped.", evidence={"nvml_error": d.nvml_error, "libnvidia-ml": d.libnvml_path}))
    compat = compat_of(ctx)
    for bad in compat.known_bad("driver", d.version):
        out.append(finding(
            INFO, "Driver %s is in a known-bad range: %s" % (d.version, bad["problem"]),
            detail="Source: %s [%s]." % (bad["source"], bad["status"]),
            remedy=known_bad_driver_fix(bad.get("fixed_in")),
            evidence={"driver": d.version, "range": bad["version"]}))
    if d.libcuda_path and os.path.basename(d.libcuda_path) and d.libcuda_error and not out:
        out.append(finding(INFO, "libcuda could not be queried: %s" % d.libcuda_error,
                           evidence={"libcuda": d.libcuda_path}))
    return out


def _module_present(facts: Facts) -> bool:
    d = facts.driver
    return d.kernel_module_loaded is not False and bool(d.kernel_module_version or d.kernel_module_loaded)


@rule("CD106", "libcuda-missing", "The NVIDIA kernel module is loaded but libcuda.so.1 is not installed",
      platforms=LINUX, section="driver")
def libcuda_missing(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if facts.host.in_container or facts.host.wsl or not _module_present(facts):
        return []  # CD801 / CD804 speak for containers and WSL; CD102 for a module that is not loaded
    d = facts.driver
    res = facts.loader.resolved.get("libcuda.so.1")
    if d.libcuda_path or (res is not None and res.path):
        return []
    module = d.kernel_module_version or d.version
    return [finding(
        ERROR, "The NVIDIA kernel module %s is loaded but libcuda.so.1 is not installed" % (module or ""),
        detail="libcuda.so.1 is the driver's user-space half that every CUDA program (and cuDNN) loads; without it "
               "they fail with 'libcuda.so.1: cannot open shared object file' or 'CUDA driver version is "
               "insufficient' / 'no CUDA-capable device is detected'. A partial driver install or an autoremoved "
               "libnvidia-compute package leaves this state.",
        remedy=compute_libraries_fix(module), evidence={"kernel_module": d.kernel_module_version,
                                                         "libcuda.so.1": None, "libnvidia-ml": d.libnvml_path},
        catalogue=["A1"])]


@rule("CD107", "driver-sees-no-gpu", "The driver is installed but NVML reports no usable GPU", section="driver")
def no_gpu_seen(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if facts.host.in_container or facts.host.wsl or not _module_present(facts):
        return []
    d = facts.driver
    if facts.gpus or not d.libnvml_path or (d.nvml_error and "mismatch" in d.nvml_error.lower()):
        return []  # GPUs answered, NVML is not installed (nothing asked), or CD104 explains the failure
    why = ("NVML could not answer (%s)" % d.nvml_error) if d.nvml_error else "NVML reports 0 usable GPUs"
    return [finding(
        ERROR, "The NVIDIA driver %s is installed but %s" % (d.version or d.kernel_module_version or "",
                                                                      why),
        detail="CUDA will report 'no CUDA-capable device is detected' (CUDA_ERROR_NO_DEVICE). Usual causes: the GPU "
               "fell off the bus ('GPU has fallen off the bus' / Xid 79 in dmesg), is disabled in the firmware or "
               "by a power/thermal fault, is bound to vfio-pci for a VM, or needs a reboot after a driver install.",
        remedy=gpu_unseen_fix(),
        evidence={"driver": d.version, "kernel_module": d.kernel_module_version, "gpus": 0,
                  "nvml_error": d.nvml_error, "pci_devices": d.nvidia_pci_devices}, catalogue=["A1"])]
