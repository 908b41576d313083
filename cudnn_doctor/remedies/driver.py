"""Fixes for the NVIDIA driver itself: none installed, its kernel module unbuilt, refused or outrun by its libraries,
nouveau in its place, a known-bad release, missing libcuda, a GPU it cannot see."""
from __future__ import annotations

from typing import Optional

from ..model import WINDOWS_SHELL, Fix
from .acting import at, on_machine, ldconfig, sudo, system
from .containers import container_gpu_fix, wsl_driver_fix
from .shell import advice, or_else, q, run, said, say, stated
from .shells import command_fix


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


def uvm_reload_fix(platform: str) -> Fix:
    """The unified-memory module broke (after suspend/resume): reload it, or restart."""
    if platform == "windows":
        return advice("restart Windows (a GPU fault after sleep leaves the driver unusable until then); if it "
                      "happens without sleep, update the NVIDIA driver")
    if platform == "wsl":  # WSL has no nvidia modules of its own: the Windows driver's state, restarted from Windows
        return command_fix(["wsl --shutdown"], shell=WINDOWS_SHELL, text="from Windows: `wsl --shutdown`, then reopen "
                           "the distro (after a sleep restart Windows too); if it happens without sleep, rerun with "
                           "CUDA_LAUNCH_BLOCKING=1 to see which call faulted")
    if platform == "container":  # the module is the host's: a container cannot reload it
        return run("sudo rmmod nvidia_uvm", "sudo modprobe nvidia_uvm",
                   text="on the host, not in the container (its nvidia_uvm is the host's): if the host was suspended "
                        "since the driver loaded, `sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm` with no GPU "
                        "container running (or reboot the host), then start the container again; if not, rerun "
                        "with CUDA_LAUNCH_BLOCKING=1 to see which call faulted")
    return run("sudo rmmod nvidia_uvm", "sudo modprobe nvidia_uvm",
               text="if the machine was suspended since the driver loaded: `sudo rmmod nvidia_uvm && sudo modprobe "
                    "nvidia_uvm` (or reboot); if not, the program's own kernel faulted: rerun it with "
                    "CUDA_LAUNCH_BLOCKING=1 to see which call")


def mismatched_driver_fix(platform: str) -> Fix:
    """The CUDA driver library and the kernel module/display driver are different releases."""
    if platform == "windows":
        return advice("reinstall the NVIDIA driver (clean installation option) and restart Windows")
    if platform == "container":  # the host's module and libraries: the host's commands (its own sudo)
        return run("sudo reboot", text="on the host (containers get its driver): its driver's libraries were upgraded "
                   "but the old kernel module is still loaded: reboot the host (`sudo reboot`), then start the "
                   "container again; if it persists, take any .../cuda-*/compat folder off LD_LIBRARY_PATH in the "
                   "image")
    if platform == "wsl":  # WSL's libcuda is the Windows driver's: reinstall that one, then restart WSL
        return command_fix(["wsl --shutdown"], shell=WINDOWS_SHELL, text="reinstall the NVIDIA driver on Windows "
                           "(clean installation option; no Linux driver inside WSL), then run `wsl --shutdown` from "
                           "Windows and reopen the distro")
    # The loader's cache can still name a removed driver's libraries (a driver or nvidia-docker left them), so the
    # module and what the cache finds differ until ldconfig runs again (DockerMonitor#12).
    return run(ldconfig(), on_machine("reboot"), text="the driver's libraries were upgraded but the old kernel module "
               "is still loaded, or the loader's cache still names another release's libraries (or a cuda-compat "
               "libcuda is on the path): rebuild the cache (`%s`) and reboot (`%s`); if it persists, take any "
               ".../cuda-*/compat folder off LD_LIBRARY_PATH" % (ldconfig(), on_machine("reboot")))
