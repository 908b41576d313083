"""Fixes for the failure catalogue's machine-state entries: nvidia_uvm, Fabric Manager, CUDA libraries a framework
cannot load, CuPy twice, /dev/char links, cuDNN local repositories, driver upgrades waiting for a reboot; and the
fixes compat's tables hold as rows (`commands` plus `words`), built for the Target like every other."""
from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Sequence

from ..knowledge import Compat
from ..model import WINDOWS_SHELL, CudnnCopy, Facts, Fix, FrameworkFacts
from ..queries import missing_sublibraries
from .cudnn import machine_cudnn_fix
from .environments import need_of
from .frameworks import cudnn_package_reinstall_fix
from .acting import at, doctor, ldconfig, on_machine, pip, set_variable, sudo, system, target_shell
from .shell import advice, prepend_ld_path, q, qs, run, said, stated, then

# The programs a table's command names that belong to the machine's tree (its packages, its Python): under --root
# they run inside that tree; every other program acts on the running machine (its kernel, devices, GPUs).
_TREE_PROGRAMS = frozenset({"apt", "apt-get", "apt-mark", "dnf", "yum", "zypper", "dpkg", "ubuntu-drivers", "pip",
                            "conda"})


def table_command(command: str) -> str:
    """One command of a compat fix row (as typed on the machine itself, `sudo` where root is needed), written for the
    Target through the same primitives as every builder's: sudo for this user, --root, this cudnn-doctor's words."""
    privileged = command.startswith("sudo ")
    bare = command[len("sudo "):] if privileged else command
    program, _, arguments = bare.partition(" ")
    if program == "cudnn-doctor":
        return doctor(arguments, privileged=privileged)
    if program == "ldconfig":
        return ldconfig()
    if program in _TREE_PROGRAMS:
        return system(bare, privileged=privileged)
    return on_machine(bare, privileged=privileged)


def table_fix(row: Mapping[str, Any]) -> Fix:
    """The fix a compat table row holds: its `commands` built for the Target, said by its `words` ({0}, {1}, ...
    stand for the commands in order, then its `alternatives`: another way, said, not run). A row's part for Windows
    (platform_row) holds PowerShell's commands as typed there (never `sudo`: 'from an Administrator PowerShell' is
    said in its words)."""
    shell = str(row.get("shell", "sh"))
    commands = [table_command(c) if shell == "sh" else c for c in row.get("commands", [])]
    other = [table_command(c) if shell == "sh" else c for c in row.get("alternatives", [])]  # said after, not run
    words = str(row.get("words", ""))
    if not commands:
        return advice(words)
    return run(*commands, text=words.format(*commands, *other), shell=shell, alternatives=other)


def platform_row(row: Mapping[str, Any], platform: Optional[str]) -> Mapping[str, Any]:
    """A status row as the paste's platform reads it: its `on_windows` part for Windows, where it has one (a WDDM
    GPU has no exclusive mode; DLLs are found on PATH, not LD_LIBRARY_PATH)."""
    if platform == "windows" and isinstance(row.get("on_windows"), Mapping):
        return dict(row["on_windows"], shell=WINDOWS_SHELL)
    return row


def uvm_fix(modprobe: bool, in_container: bool) -> Fix:
    """Load nvidia_uvm and create /dev/nvidia-uvm (on the host when this is a container)."""
    if in_container:
        # The host's commands: another machine's, so its `sudo` stays plain (its user is not this run's).
        return run("sudo nvidia-modprobe -u -c 0", alternatives=["sudo modprobe nvidia_uvm"],
                   text="on the host: sudo nvidia-modprobe -u -c 0 (or sudo modprobe nvidia_uvm), then restart the "
                        "container with --gpus all so the runtime injects /dev/nvidia-uvm")
    if modprobe:
        return run(on_machine("nvidia-modprobe -u -c 0"))
    return run(on_machine("modprobe nvidia_uvm"), on_machine(
        "mknod -m 666 /dev/nvidia-uvm c $(grep nvidia-uvm /proc/devices | cut -d' ' -f1) 0"))


def fabric_manager_fix(branch: str, driver: str, installed: bool) -> Fix:
    """Fabric Manager of exactly the driver's version, enabled; only enabled when that one is installed."""
    if installed:
        return run(on_machine("systemctl enable --now nvidia-fabricmanager"))
    return run(system("apt install 'nvidia-fabricmanager-%s=%s*'" % (branch, driver)),
               on_machine("systemctl enable --now nvidia-fabricmanager"))


def workspace_limit_fix(paddle_default_limit_mb: int) -> Fix:
    # DL4J's and PyTorch's settings are lines of the user's program (words); Paddle's is the shell's.
    paddle = set_variable("FLAGS_conv_workspace_size_limit", paddle_default_limit_mb)
    return run(paddle, shell=target_shell(), text="If that happens: DL4J .cudnnAlgoMode(ConvolutionLayer.AlgoMode."
               "NO_WORKSPACE) on conv layers; Paddle %s (MB); PyTorch torch.backends.cudnn.benchmark = False." % paddle)


def tensorflow_libraries_fix(version: str, missing: Sequence[str], pins: Sequence[str], pip_wheels: bool) -> Fix:
    """TensorFlow's CUDA libraries: the exact wheels its [and-cuda] extra pins (`pins`, read from its own metadata),
    else that extra by name, else (a release without it) the toolkit libraries of its build on the loader path."""
    if pins:
        return run(pip("install %s" % " ".join('"%s"' % p for p in pins)))
    if pip_wheels:
        return run(pip('install "tensorflow[and-cuda]==%s"' % version.split("+")[0]))
    return stated("install the CUDA toolkit libraries TensorFlow %s was built with (%s) and put their folder on the "
                  "loader path" % (version, ", ".join(missing)))


def paddle_cudnn_fix(directory: str, name: str, major: int) -> Fix:
    """Paddle dlopens `name` by itself: a folder with that name first on LD_LIBRARY_PATH; where the copy has only
    libcudnn.so.N (NVIDIA's wheels), the unversioned link to it made there first."""
    steps = [] if name == "libcudnn.so.%d" % major else ["ln -sf libcudnn.so.%d %s" % (major, q(at(os.path.join(
        directory, name))))]
    return run(*steps, prepend_ld_path(directory))


def paddle_copy_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, copy: CudnnCopy, name: str, major: int) -> Fix:
    """Paddle sent to a copy of its major in its own environment; one that lacks sub-libraries is reinstalled first,
    or linked as it is its first call would fail (draw 486637-59)."""
    link = paddle_cudnn_fix(copy.directory, name, major)
    if not missing_sublibraries(compat, copy):
        return link
    return then(cudnn_package_reinstall_fix(facts, compat, copy, copy.directory, fw), link)


def paddle_wheel_fix(facts: Facts, compat: Compat, fw: FrameworkFacts, name: str, major: int) -> Fix:
    """Paddle with no cuDNN of its major built for its CUDA: the cuDNN wheel of its own CUDA (nvidia-cudnn-cu11==8.*
    for Paddle 2.6's CUDA 11.8 build) in its site-packages, whose nvidia/cudnn folder then gets the unversioned link
    and goes first on LD_LIBRARY_PATH; another CUDA's cuDNN wheel there is removed first (both write the same file
    names into that folder). Without such a wheel: the machine's cuDNN for its CUDA."""
    need = need_of(compat, fw)
    if need is None or need.major != major:
        return machine_cudnn_fix(facts, compat, fw.cuda_version, major)
    others = sorted({w["name"] for w in facts.python.nvidia_wheels if w.get("location") == fw.location
                     and w["name"].startswith("nvidia-cudnn-") and w["name"] != need.project})
    steps = [pip("uninstall -y %s" % " ".join(others))] if others else []
    folder = os.path.join(fw.location, "nvidia/cudnn/lib")
    return run(*steps, pip('install "%s"' % need.wants), *paddle_cudnn_fix(folder, name, major).commands)


def one_cupy_fix(names: Sequence[str], wheel: str) -> Fix:
    return run(system("python3 -m pip uninstall -y %s" % " ".join(sorted(names)), privileged=False),
               system("python3 -m pip install %s" % wheel, privileged=False))


def dev_char_links_fix(ctk: Optional[str]) -> Fix:
    """The /dev/char links systemd's cgroup driver needs, made by the NVIDIA Container Toolkit."""
    if ctk:
        return run(on_machine("%s system create-dev-char-symlinks --create-all" % q(at(ctk))))
    return run(system("apt install nvidia-container-toolkit"),
               on_machine("nvidia-ctk system create-dev-char-symlinks --create-all"))


def local_repo_fix(repo: Dict[str, str], packages: Sequence[str]) -> Fix:
    """Install the cuDNN packages a registered local repository holds (its key first, where it has one)."""
    steps = []
    if repo.get("keyring"):
        steps.append(sudo("cp %s %s" % (q(at(os.path.join(repo["repo"], repo["keyring"]))),
                                        at("/usr/share/keyrings/"))))
    steps += [system("apt update"), system("apt install %s" % " ".join(packages))]
    return run(*steps)


def reboot_and_hold_fix(packages: Sequence[str]) -> Fix:
    return said("%s   (then keep them from moving unattended: %s)", on_machine("reboot"),
                system("apt-mark hold %s" % qs(packages)))
