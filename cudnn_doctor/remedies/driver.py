"""Fixes for the NVIDIA driver itself: none installed, its kernel module unbuilt, refused or outrun by its libraries,
nouveau in its place, a known-bad release, missing libcuda, a GPU it cannot see."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .containers import container_gpu_fix, wsl_driver_fix
from .shell import or_else, run, say, stated


def secure_boot_fix() -> Fix:
    return stated("Sign the module and enroll the key: `sudo mokutil --import /var/lib/dkms/mok.pub` (or the key "
                  "your distribution's signed driver package uses), reboot and complete the MOK enrollment screen; "
                  "or disable Secure Boot in the firmware settings.")


def known_bad_driver_fix(fixed_in: Optional[str] = None) -> Fix:
    """Leave a known-bad driver release for the one that fixed it (when the table names none, a newer one)."""
    return stated("Upgrade the driver to %s or newer if you rely on it." % (
        "a newer release" if fixed_in is None else fixed_in))


def reinstall_driver_fix() -> Fix:
    """The driver's user-space libraries are gone while its kernel module runs, and its branch is not known."""
    return stated("Reinstall the NVIDIA driver (Ubuntu: `sudo ubuntu-drivers install`, or NVIDIA's installer), "
                  "then `sudo ldconfig` and check with `nvidia-smi`")


def install_driver_fix() -> Fix:
    """No driver and no GPU seen: install a driver if the machine has an NVIDIA GPU, else use a machine that has."""
    installer = "https://www.nvidia.com/Download/index.aspx"
    return run("sudo ubuntu-drivers install", "sudo reboot", text="If the machine has an NVIDIA GPU, install the "
               "driver (Ubuntu: `sudo ubuntu-drivers install`; others: the installer from %s), reboot (`sudo reboot`) "
               "and check with `nvidia-smi`. If it has no NVIDIA GPU, CUDA and cuDNN cannot run here: use a GPU "
               "machine." % installer,
               manual="others than Ubuntu: the installer from %s, then reboot; no NVIDIA GPU: use a GPU machine"
                      % installer)


def missing_driver_fix(place: str) -> Fix:
    """No usable driver, decided once for check, smoke and install alike by where the driver has to come from
    (``place``, queries.driver_place): a container gets the host's GPU through its runtime, WSL the Windows driver,
    a machine of its own a driver installed on it."""
    if place == "container":
        return container_gpu_fix()
    if place == "wsl":
        return wsl_driver_fix()
    return install_driver_fix()


def rebuild_kernel_module_fix(kernel: str) -> Fix:
    """Build the nvidia module for ``kernel`` with DKMS (headers first), then reboot into it."""
    return or_else(run("sudo apt install linux-headers-%s dkms" % kernel, "sudo dkms autoinstall", "sudo reboot"),
                   "reinstall the driver package for this kernel; keep `dkms` installed so future kernels rebuild "
                   "the module; with Secure Boot on, enroll DKMS's module key with `sudo mokutil --import "
                   "/var/lib/dkms/mok.pub`")


NOUVEAU_BLACKLIST = "/etc/modprobe.d/blacklist-nouveau.conf"


def blacklist_nouveau_fix(nova: bool) -> Fix:
    """Keep nouveau (and nova_core, where it drove the GPU) off the GPU from the next boot on."""
    lines = "blacklist nouveau\\noptions nouveau modeset=0\\n" + (
        "blacklist nova_core\\nblacklist nova_drm\\n" if nova else "")
    return run("printf '%s' | sudo tee %s" % (lines, NOUVEAU_BLACKLIST), "sudo update-initramfs -u", "sudo reboot",
               text="printf '%s' | sudo tee %s && sudo update-initramfs -u (Fedora/RHEL: sudo dracut -f) && sudo "
                    "reboot" % (lines, NOUVEAU_BLACKLIST),
               manual="Fedora/RHEL: sudo dracut -f instead of update-initramfs", writes=[NOUVEAU_BLACKLIST])


def driver_reload_fix() -> Fix:
    """Libraries newer than the loaded module: load the new module (reboot or unload/reload), then hold the packages."""
    return say("%s; to stop it recurring: sudo apt-mark hold 'nvidia-*' 'libnvidia-*'", or_else(
        run("sudo reboot"), "with no GPU process running: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia "
        "&& sudo modprobe nvidia", "%s   (or, %s)"))


def compute_libraries_fix(module: Optional[str]) -> Fix:
    """Install the user-space libraries (libcuda) of the loaded kernel module's branch; without a known branch,
    reinstall the driver."""
    branch = (module or "").split(".")[0]
    if not branch.isdigit():
        return reinstall_driver_fix()
    install = "sudo apt install libnvidia-compute-%s" % branch
    return run(install, "sudo ldconfig", "nvidia-smi", text="%s   (Ubuntu/Debian: the user-space libraries of "
               "driver branch %s, matching the loaded kernel module %s; other distributions: reinstall the driver "
               "%s with its package or NVIDIA's installer), then `sudo ldconfig` and check with `nvidia-smi`" % (
                   install, branch, module, module),
               manual="other distributions: reinstall the driver %s with its package or NVIDIA's installer" % module)


def gpu_unseen_fix() -> Fix:
    """The driver sees no GPU: confirm, read the kernel's NVRM/Xid errors, bring the GPU back, reboot."""
    return run("nvidia-smi", "sudo dmesg | grep -iE 'nvrm|xid'", text="Run `nvidia-smi` to confirm, then look for "
               "NVRM/Xid errors with `sudo dmesg | grep -iE 'nvrm|xid'`; enable the GPU in the firmware (or reseat "
               "it / check its power cables), then `sudo reboot`",
               manual="enable the GPU in the firmware (or reseat it / check its power cables), then `sudo reboot`")
