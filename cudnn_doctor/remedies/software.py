"""Installing what a fix needs besides cuDNN: the driver, a CUDA toolkit, NVRTC, PyTorch and JAX builds."""
from __future__ import annotations

import re
from typing import Any, Optional

from ..knowledge import Compat
from ..versions import mm, mm_text, ver, version_of
from ..model import WINDOWS_SHELL, Facts, Fix
from ..queries import driver_cuda, gpu_label, gpus_with_cc, jax_choice, platform_of
from .acting import at, doctor, on_machine, system
from .shell import advice, prepend_ld_path, q, run, say, stated, then
from .shells import command_fix


DRIVER_DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"
TOOLKIT_ARCHIVE = "https://developer.nvidia.com/cuda-toolkit-archive"


def driver_upgrade_fix(floor_text: str, platform: str = "linux") -> Fix:
    """Install a driver at least ``floor_text``: Ubuntu's tool or NVIDIA's installer, then a reboot (on Windows,
    NVIDIA's Windows installer and a restart)."""
    if platform == "windows":
        return stated("Install or upgrade the NVIDIA driver to %s (NVIDIA's Windows installer from %s), then restart "
                      "Windows" % (floor_text, DRIVER_DOWNLOAD))
    if platform == "wsl":  # WSL 2 runs on the Windows driver; a Linux driver inside it hides that one
        return command_fix(["wsl --shutdown"], shell=WINDOWS_SHELL, text="Install or upgrade the NVIDIA driver on "
                           "Windows to %s (NVIDIA's Windows installer from %s; no Linux driver inside WSL), then run "
                           "`wsl --shutdown` from Windows and reopen the distro" % (floor_text, DRIVER_DOWNLOAD))
    installer = "NVIDIA's installer from %s" % DRIVER_DOWNLOAD
    if platform == "container":  # containers run on the host's driver: the host's commands (its own sudo)
        return run("sudo ubuntu-drivers install", "sudo reboot", text="on the host, not in the container (containers "
                   "use the host's driver): install or upgrade the NVIDIA driver to %s (Ubuntu: `sudo ubuntu-drivers "
                   "install`, or %s), reboot the host (`sudo reboot`), then start the container again" % (
                       floor_text, installer), manual=installer + " on the host, then reboot it")
    install, reboot = system("ubuntu-drivers install"), on_machine("reboot")
    return command_fix([install, reboot],
                       text="Install or upgrade the NVIDIA driver to %s (Ubuntu: `%s`, or %s), then reboot (`%s`)"
                            % (floor_text, install, installer, reboot), manual=installer + ", then reboot")


def driver_or_older_image_fix(needs_cuda: str, have_cuda: str, platform: str = "linux") -> Fix:
    """A container image needs a newer CUDA than the host driver: upgrade the driver, or pick an older image."""
    return say("%s; or use an image tag built for CUDA %s or older",
               driver_upgrade_fix("one that supports CUDA %s" % needs_cuda, platform), have_cuda)


def arch_driver_limit(facts: Facts, compat: Compat, branch: Optional[str]) -> str:
    """A sentence when a GPU's architecture has no driver at `branch` or later (so upgrading cannot help)."""
    if not branch or ver(branch) is None:
        return ""
    for gpu in gpus_with_cc(facts):
        arch = compat.arch_for_cc(gpu.compute_capability)
        if arch and arch.last_driver_branch and version_of(arch.last_driver_branch) < version_of(branch):
            return (" Note: %s is a %s GPU, whose last driver branch is R%s, so no driver that new exists for it "
                    "[%s]." % (gpu_label(gpu), arch.name, arch.last_driver_branch, arch.source))
    return ""


def torch_variant_tag(cuda: str) -> str:
    """'13.0' -> 'cu130' (PyTorch wheel index names)."""
    pair = mm(cuda)
    return "cu%d%d" % pair if pair else "cu?"


def torch_install(compat: Compat, version: Optional[str], cuda: str, platform: str = "linux") -> Fix:
    return run(system("pip install --force-reinstall %s" % torch_source(compat, version, cuda, platform=platform),
                      privileged=False))


def before_torch_indexes(compat: Compat, release: Optional[str]) -> bool:
    """Whether a PyTorch release predates its per-CUDA indexes (compat's find_links_before: 1.11 and older)."""
    have = ver(release.split("+")[0]) if release else None
    before = ver(str(compat.install_recipe("torch").get("find_links_before") or ""))
    return have is not None and before is not None and have < before


def newest_torch_before_indexes(compat: Compat, cuda: str) -> Optional[str]:
    """The newest PyTorch release built for `cuda` where even that one predates the per-CUDA indexes (CUDA 10.0:
    1.2), so the build has to be named by release: download.pytorch.org has no index for such a CUDA."""
    releases = [str(r["torch"]) for r in compat.framework_rows("pytorch") if r.get("cuda") == mm_text(cuda)]
    newest = max(releases, key=version_of, default=None)
    return newest if newest and before_torch_indexes(compat, newest) else None


def torch_source(compat: Compat, version: Optional[str], cuda: str, quoted: bool = False,
                 platform: str = "linux") -> str:
    """The pip words for a PyTorch release's CUDA build, in the form PyTorch's own page gives for that release: its
    CUDA index (`"torch==2.5.1" --index-url .../whl/cu124`), or, before the per-CUDA indexes (compat's
    find_links_before: 1.11 and older), the local version on the one find-links page (`"torch==1.10.2+cu111" -f
    .../torch_stable.html`). PyPI's own build of a release is a CUDA one on Linux only: on Windows its wheel is
    the CPU build, so there the page is always named."""
    recipe = compat.install_recipe("torch")
    release = version.split("+")[0] if version else newest_torch_before_indexes(compat, cuda)
    mark = '"' if quoted else ""
    if release and before_torch_indexes(compat, release):
        # The build PyPI itself serves for that release (its torch/version.py names this CUDA) needs no other page.
        if platform != "windows" and any(r["torch"] == mm_text(release) and r["cuda"] == mm_text(cuda) and
                                         r.get("channel") == "stable" for r in compat.framework_rows("pytorch")):
            return "%storch==%s%s" % (mark, release, mark)
        whole = ".".join((release.split(".") + ["0", "0"])[:3])  # what pip reads "1.8" as: 1.8.0, said so
        return "%storch==%s+%s%s -f %s" % (mark, whole, torch_variant_tag(cuda), mark, recipe["find_links"])
    pin = "%storch==%s%s" % (mark, release, mark) if release else "torch"
    return "%s --index-url https://download.pytorch.org/whl/%s" % (pin, torch_variant_tag(cuda))


def toolkit_install_fix(facts: Facts, compat: Compat, cuda: Any = None) -> Fix:
    """The command that installs a CUDA toolkit (no driver) for `cuda`, else for the driver's newest CUDA."""
    target = cuda or driver_cuda(facts, compat)
    package = compat.toolkit_package(target) if target else None
    windows = re.match(r"^cuda-toolkit-(\d+)-(\d+)$", package or "") if platform_of(facts) == "windows" else None
    if windows:
        return stated("install CUDA %s.%s from %s (Windows installer)" % (windows.group(1), windows.group(2),
                                                                         TOOLKIT_ARCHIVE))
    if package:
        return run(system("apt install %s" % package))
    return advice("install the CUDA toolkit matching the driver's CUDA version (the 'CUDA Version' nvidia-smi "
                  "prints) from https://developer.nvidia.com/cuda-downloads")


def jax_install(facts: Facts, compat: Compat, cuda_major: Any = None) -> Fix:
    row, why = jax_choice(facts, compat, cuda_major)
    if row is None:
        return advice("install JAX's CUDA build (compat has no JAX table)")
    fix = run(system('pip install -U "jax[%s]"' % row["extra"], privileged=False))
    if any("driver" in w for w in why):
        fix = then(driver_upgrade_fix("the R%s branch or later" % row["driver_linux"], platform_of(facts)), fix)
    return fix


def nvrtc_install_fix(facts: Facts, compat: Compat, cuda: Any, channel: str, prefix: str = "") -> Fix:
    """Install NVRTC of CUDA `cuda` with the machine's package manager so that the unversioned libnvrtc.so exists;
    pip wheels lack that link, so the pip fix makes it (in the site-packages holding `prefix`'s cuDNN)."""
    row = compat.nvrtc_packages()
    pair = mm(cuda)
    if pair is None or not row:
        return advice("install NVRTC (libnvrtc) of the CUDA release this cuDNN was built for")
    major, minor = pair

    def named(pattern: Any) -> str:
        return str(pattern).replace("<major>", str(major)).replace("<minor>", str(minor))

    wheel = row.get("pip", {}).get(str(major))
    if channel == "pip" and wheel and prefix:
        lib = "%s/%s" % (prefix.rstrip("/"), row.get("pip_folder", "nvidia/cuda_nvrtc/lib"))
        return run(system('pip install "%s==%d.*"' % (wheel, major), privileged=False), "cd %s" % q(at(lib)),
                   'ln -sf "$(ls libnvrtc.so.%d* | head -n1)" libnvrtc.so' % major, prepend_ld_path(lib))
    if channel == "conda":
        where = ("-p %s " % q(prefix)) if prefix else ""
        return run(system('conda install %s-c %s "%s=%d.%d"' % (where, row.get("conda_channel", "nvidia"),
                                                                row["conda"], major, minor), privileged=False))
    apt = system("apt install %s" % named(row["apt"]))
    if channel == "apt":
        return run(apt)
    if channel == "dnf":
        return run(system("dnf install %s" % named(row["dnf"])))
    others = ["dnf: `%s`" % system("dnf install %s" % named(row["dnf"]))]
    if wheel:
        others.append('pip: `%s`, then link libnvrtc.so to its libnvrtc.so.* in the wheel\'s '
                      '%s folder' % (system('pip install "%s==%d.*"' % (wheel, major), privileged=False),
                                row.get("pip_folder", "nvidia/cuda_nvrtc/lib")))
    return run(apt, text="%s   (NVIDIA's apt repository; %s)" % (apt, "; ".join(others)), manual="; ".join(others))



def knowledge_update_fix(date: str) -> Fix:
    """Refresh the knowledge from NVIDIA's and PyPI's machine-readable sources (cudnn-doctor does it itself)."""
    command = doctor("update")
    return command_fix([command], text="%s   (refreshes the knowledge, dated %s, from PyPI and NVIDIA's manifests; "
                       "then run the check again)" % (command, date or "?"), doctor=command,
                       manual="upgrade cudnn-doctor (pip install -U cudnn-doctor)")
