"""Fixes for the NVIDIA driver itself: none installed, its kernel module unbuilt, refused or outrun by its libraries,
nouveau in its place, a known-bad release, missing libcuda, a GPU it cannot see."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .acting import at, on_machine, ldconfig, sudo, system
from .containers import container_gpu_fix, wsl_driver_fix
from .shell import or_else, q, run, said, say, stated


def secure_boot_fix() -> Fix:
    return said("Sign the module and enroll the key: `%s` (or the key your distribution's signed driver package "
                "uses), reboot and complete the MOK enrollment screen; or disable Secure Boot in the firmware "
                "settings.", _mok_import())


def known_bad_driver_fix(fixed_in: Optional[str] = None) -> Fix:
    """Leave a known-bad driver release for the one that fixed it (when the table names none, a newer one)."""
    return stated("Upgrade the driver to %s or newer if you rely on it." % (
        "a newer release" if fixed_in is None else fixed_in))


def reinstall_driver_fix() -> Fix:
    """The driver's user-space libraries are gone while its kernel module runs, and its branch is not known."""
    return said("Reinstall the NVIDIA driver (Ubuntu: `%s`, or NVIDIA's installer), then `%s` and check with `%s`",
                system("ubuntu-drivers install"), ldconfig(), on_machine("nvidia-smi", privileged=False))


def install_driver_fix() -> Fix:
    """No driver and no GPU seen: install a driver if the machine has an NVIDIA GPU, else use a machine that has."""
    installer = "https://www.nvidia.com/Download/index.aspx"
    install, reboot = system("ubuntu-drivers install"), on_machine("reboot")
    smi = on_machine("nvidia-smi", privileged=False)
    return run(install, reboot, smi, text="If the machine has an NVIDIA GPU, install the driver (Ubuntu: `%s`; others: "
               "the installer from %s), reboot (`%s`) and check with `%s`. If it has no NVIDIA GPU, CUDA and cuDNN "
               "cannot run here: use a GPU machine." % (install, installer, reboot, smi),
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
    return or_else(run(system("apt install linux-headers-%s dkms" % kernel), system("dkms autoinstall"),
                       on_machine("reboot")),
                   said("reinstall the driver package for this kernel; keep dkms installed so future kernels rebuild "
                        "the module; with Secure Boot on, enroll DKMS's module key with `%s`", _mok_import()))


NOUVEAU_BLACKLIST = "/etc/modprobe.d/blacklist-nouveau.conf"
DKMS_KEY = "/var/lib/dkms/mok.pub"


def _mok_import() -> str:
    """Enroll the root's DKMS signing key in the firmware (the key file is the root's; the firmware is this one's)."""
    return on_machine("mokutil --import %s" % q(at(DKMS_KEY)))


def blacklist_nouveau_fix(nova: bool) -> Fix:
    """Keep nouveau (and nova_core, where it drove the GPU) off the GPU from the next boot on."""
    lines = "blacklist nouveau\\noptions nouveau modeset=0\\n" + (
        "blacklist nova_core\\nblacklist nova_drm\\n" if nova else "")
    write = "printf '%s' | %s" % (lines, sudo("tee %s" % q(at(NOUVEAU_BLACKLIST))))
    initramfs, dracut, reboot = system("update-initramfs -u"), system("dracut -f"), on_machine("reboot")
    return run(write, initramfs, reboot, text="%s && %s (Fedora/RHEL: %s) && %s" % (write, initramfs, dracut, reboot),
               manual="Fedora/RHEL: %s instead of update-initramfs" % dracut, writes=[at(NOUVEAU_BLACKLIST)],
               alternatives=[dracut])


def driver_reload_fix() -> Fix:
    """Libraries newer than the loaded module: load the new module (reboot or unload/reload), then hold the packages."""
    return say("%s; to stop it recurring: %s", or_else(
        run(on_machine("reboot")), said("with no GPU process running: %s && %s",
                                        on_machine("rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia"),
                                        on_machine("modprobe nvidia")),
        "%s   (or, %s)"), run(system("apt-mark hold 'nvidia-*' 'libnvidia-*'")))


def compute_libraries_fix(module: Optional[str]) -> Fix:
    """Install the user-space libraries (libcuda) of the loaded kernel module's branch; without a known branch,
    reinstall the driver."""
    branch = (module or "").split(".")[0]
    if not branch.isdigit():
        return reinstall_driver_fix()
    install, smi = system("apt install libnvidia-compute-%s" % branch), on_machine("nvidia-smi", privileged=False)
    return run(install, ldconfig(), smi, text="%s   (Ubuntu/Debian: the user-space libraries of driver branch %s, "
               "matching the loaded kernel module %s; other distributions: reinstall the driver %s with its package "
               "or NVIDIA's installer), then `%s` and check with `%s`" % (install, branch, module, module, ldconfig(),
                                                                          smi),
               manual="other distributions: reinstall the driver %s with its package or NVIDIA's installer" % module)


def gpu_unseen_fix() -> Fix:
    """The driver sees no GPU: confirm, read the kernel's NVRM/Xid errors, bring the GPU back, reboot."""
    smi, dmesg, reboot = on_machine("nvidia-smi", privileged=False), on_machine("dmesg | grep -iE 'nvrm|xid'"), on_machine("reboot")
    return run(smi, dmesg, text="Run `%s` to confirm, then look for NVRM/Xid errors with `%s`; enable the GPU in the "
               "firmware (or reseat it / check its power cables), then `%s`" % (smi, dmesg, reboot),
               manual="enable the GPU in the firmware (or reseat it / check its power cables), then `%s`" % reboot)
