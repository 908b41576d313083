"""Fixes for containers: a container or WSL without the GPU or driver it needs, a container runtime older than the
driver, and an image judged against a node (the node's driver, the image's environment, or another image)."""
from __future__ import annotations

from typing import Optional

from ..knowledge import DriverFloor
from ..model import WINDOWS_SHELL, Fix
from .acting import ldconfig, on_machine, system, under_root
from .node import runtime_configure_fix
from .shell import advice, or_else, run, said, say
from .shells import command_fix
from .software import driver_upgrade_fix


def _driver_for(floor: Optional[DriverFloor], image_cuda: Optional[str]) -> str:
    """The driver the image's CUDA needs: the table's floor, else said by the CUDA it must support."""
    return floor.text() if floor else "one that supports CUDA %s" % (image_cuda or "?")


def image_on_node_fix(node: Optional[str], floor: Optional[DriverFloor], image_cuda: Optional[str],
                      node_cuda: Optional[str]) -> Fix:
    """Upgrade the node's driver (on that node), or run an image built for the CUDA the node's driver has."""
    older = ("or use an image built for CUDA %s or older" % node_cuda) if node_cuda else \
        "or use an image built for an older CUDA"
    where = "on %s: " % node if node else ""
    return say("%s%s; %s (this one needs CUDA %s)", where, driver_upgrade_fix(_driver_for(floor, image_cuda)), older,
               image_cuda or "?")


def capabilities_fix(missing: str) -> Fix:
    """Ask for the driver capability the image needs, at run time and for good in the image."""
    return advice("Start it with -e NVIDIA_DRIVER_CAPABILITIES=%s,utility (docker/podman run; a Kubernetes pod's "
                  "env), or set ENV NVIDIA_DRIVER_CAPABILITIES=%s,utility in the image's Dockerfile and rebuild"
                  % (missing, missing))


def visible_devices_fix() -> Fix:
    docker, podman = "docker run --gpus all ...", "podman run --device nvidia.com/gpu=all ..."
    return run(docker, alternatives=[podman], text="Start it with the GPUs it should get: `%s`, `%s`, or a Kubernetes "
               "nvidia.com/gpu resource limit; or drop NVIDIA_VISIBLE_DEVICES=void/none from the image"
               % (docker, podman))


def forward_compat_gpu_fix(node: Optional[str], floor: Optional[DriverFloor], image_cuda: Optional[str]) -> Fix:
    """Forward compatibility cannot work on this GPU: only a driver new enough for the image's CUDA helps."""
    where = "on %s: " % node if node else ""
    return say("%s%s; or run the image on data-center GPUs, where its cuda-compat libcuda works", where,
               driver_upgrade_fix(_driver_for(floor, image_cuda)))


def legacy_cuda_version_fix() -> Fix:
    """A legacy image (no NVIDIA_REQUIRE_CUDA) whose CUDA_VERSION the runtime cannot read."""
    return advice("Set CUDA_VERSION to the image's CUDA release (e.g. ENV CUDA_VERSION=12.4.1) and rebuild")


def invalid_requirement_fix(requirement: str) -> Fix:
    """A NVIDIA_REQUIRE_* value the runtime cannot parse refuses every node: correct it, or switch the check off."""
    return advice("Correct the image's NVIDIA_REQUIRE_* value (%r), or start it with -e NVIDIA_DISABLE_REQUIRE=true"
                  % requirement)


def product_brand_fix() -> Fix:
    """The runtime's verdict hangs on the GPU's NVML brand, which a node report does not record."""
    return said("Run `%s` on the node to see which it is", on_machine("nvidia-smi -q | grep 'Product Brand'",
                                                                       privileged=False))


def node_report_again_fix() -> Fix:
    """The node report lacks what the runtime compares: save it again on the node."""
    return said("Save the node's report again with `%s` on the node", "cudnn-doctor check --json -o NODE.json")


def compat_older_fix() -> Fix:
    return advice("Keep the image's /usr/local/cuda/compat off LD_LIBRARY_PATH and /etc/ld.so.conf.d on this node "
                  "(the node's driver is newer than the compat libcuda), or rebuild the image without cuda-compat")


def container_toolkit_fix(runtime: str = "docker") -> Fix:
    """The host's container runtime has no GPU runtime: install the NVIDIA Container Toolkit and register it (the
    node's runtime_configure_fix), written like every command of the machine (sudo for a user, none for root)."""
    return say("install the NVIDIA Container Toolkit (`%s` after adding NVIDIA's repository), then register it with "
               "%s: `%s`", run(on_machine("apt-get install -y nvidia-container-toolkit")), runtime,
               runtime_configure_fix(runtime))


def shm_mode_fix() -> Fix:
    """/dev/shm writable by every user again, with the sticky bit its tmpfs is mounted with (mode 1777)."""
    return run(on_machine("chmod 1777 /dev/shm"), text="give /dev/shm back the mode it is mounted with, writable by "
               "every user with the sticky bit: `%s`" % on_machine("chmod 1777 /dev/shm"))


def default_runtime_fix() -> Fix:
    """The node's container runtime runs every container with the NVIDIA runtime, so containers that do not ask for
    it by name (the Kubernetes device plugin's) get the driver's libraries too (words for docker's)."""
    return say("on the node, make the NVIDIA runtime the container runtime's default: `%s` (docker: "
               "--runtime=docker and restart docker), or give the pod runtimeClassName: nvidia",
               run(on_machine("nvidia-ctk runtime configure --runtime=containerd --set-as-default"),
                   on_machine("systemctl restart containerd")))


def container_gpu_fix() -> Fix:
    """Start the container with the GPU, and give the host's Docker the NVIDIA runtime (words: the host is another
    machine, so its commands are not this fix's to run)."""
    configure = runtime_configure_fix("docker")
    return say("Run the container with the GPU (on a host with an NVIDIA GPU and driver): `%s` (compose: "
               "deploy.resources.reservations.devices with capabilities [gpu]); on the host install the NVIDIA "
               "Container Toolkit, then `%s`. If nvidia-smi says 'Failed to initialize NVML: Unknown Error' after "
               "running for a while, restart the container.",
               run("docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility ..."), configure)


def container_driver_files_fix() -> Fix:
    """Driver libraries installed inside a container or its image, of another release than the host's module: take
    them out, so the NVIDIA runtime's mounts of the host's own serve again (words: the image and the host are not
    this machine's to change)."""
    return advice("remove the NVIDIA driver installed inside the container or its image (the nvidia-driver-* and "
                  "libnvidia-* packages, or what a driver or CUDA .run installer put there; a Dockerfile installs no "
                  "driver), then start a new container so the NVIDIA runtime mounts the host's driver libraries; a "
                  "framework that wants a newer CUDA needs its build for the CUDA the host's nvidia-smi prints, or a "
                  "newer driver on the host")


def container_ldcache_fix() -> Fix:
    """The driver libraries the NVIDIA runtime mounted, missing from the container's loader cache: rebuild it there;
    for good, the runtime's ldconfig setting on the host (nvidia-docker#854: '@/sbin/ldconfig' failed on Debian)."""
    rebuild = ldconfig()
    # a container's user is often not root and has no sudo: root's shell in it comes from the host
    as_user = "" if rebuild == "ldconfig" or under_root() else \
        " (where the container has none, as its root user: from the host, docker exec with -u 0 and its name)"
    return run(rebuild, text="inside the container: `%s`%s (the loader cache then lists libnvidia-ml.so.1); where every "
               "container needs that, the NVIDIA runtime's config on the host (/etc/nvidia-container-runtime/"
               "config.toml) names a loader-cache program the host does not run: set it to the host's own path, "
               "prefixed with @, or to the container's own" % (rebuild, as_user))


def wsl_libcuda_first_fix() -> Fix:
    """WSL's own libcuda first on the loader's path (and numba told where it is); a Linux driver inside WSL purged."""
    first = "export LD_LIBRARY_PATH=/usr/lib/wsl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    numba, purge = "export NUMBA_CUDA_DRIVER=/usr/lib/wsl/lib/libcuda.so.1", system(PURGE_LINUX_DRIVER)
    return run(first, text="put WSL's driver folder first: `%s` (numba: also `%s`); a Linux NVIDIA driver inside WSL "
                           "hides the Windows one: `%s`, then `wsl --shutdown` from Windows" % (first, numba, purge),
               alternatives=[numba, purge, "wsl --shutdown"])


def wsl_driver_fix() -> Fix:
    return said("Install or update the NVIDIA driver on Windows (not inside WSL), then run `%s` from Windows and "
                "reopen the distro; check with `%s` inside WSL.", "wsl --shutdown", "nvidia-smi")


def wsl_adapters_fix() -> Fix:
    """No GPU adapter under WSL: the distro on WSL 2, WSL itself updated, the Windows driver current. Windows's
    commands (PowerShell); moving a distro to WSL 2 needs its name, which the first one lists, so it is said."""
    look, update, restart = "wsl -l -v", "wsl --update", "wsl --shutdown"
    return command_fix([look, update, restart], shell=WINDOWS_SHELL, text=(
        "from Windows: `%s` lists each distro's WSL version (one on WSL 1 moves to 2 with the --set-version option "
        "of wsl, given its NAME and 2); `%s`; install the current NVIDIA driver on Windows (it brings the GPU into WSL 2: no Linux "
        "driver inside); then `%s` and reopen the distro, where nvidia-smi then lists the GPU") % (look, update, restart))


PURGE_LINUX_DRIVER = "apt remove --purge 'nvidia-driver-*' 'libnvidia-compute-*'"
ANY_WSL_TOOLKIT = "the cuda-toolkit package of the CUDA version nvidia-smi prints (cuda-toolkit-12-4 for 12.4)"


def purge_unused_wsl_linux_driver_fix(toolkit_package: Optional[str]) -> Fix:
    """A Linux driver inside WSL that loses to the WSL share today: purge it, keep only the toolkit, restart WSL."""
    purge = system(PURGE_LINUX_DRIVER)
    return run(purge, "wsl --shutdown", text="%s (keep only %s from NVIDIA's wsl-ubuntu repository), then from Windows: "
               "wsl --shutdown" % (purge, toolkit_package or ANY_WSL_TOOLKIT),
               manual="then from Windows: wsl --shutdown")


def replace_wsl_linux_driver_fix(toolkit_package: Optional[str]) -> Fix:
    """A Linux driver inside WSL that hides the Windows one: purge it, install the toolkit alone, restart WSL."""
    purge = system(PURGE_LINUX_DRIVER)
    install = system("apt install %s" % toolkit_package) if toolkit_package else "then install %s" % ANY_WSL_TOOLKIT
    return run(purge, *([install] if toolkit_package else []), "wsl --shutdown",
               text="%s %s %s (the toolkit only, from NVIDIA's wsl-ubuntu repository); update the Windows driver; "
               "then from Windows: wsl --shutdown" % (purge, "&&" if toolkit_package else ";", install),
               manual="update the Windows driver; then from Windows: wsl --shutdown")


def container_toolkit_upgrade_fix() -> Fix:
    """nvidia-container-cli cannot find a driver file it mounts: an old toolkit (the WSL file layout) or a driver
    changed under a running engine."""
    return run("sudo apt-get install --only-upgrade nvidia-container-toolkit libnvidia-container1",
               "sudo systemctl restart docker", alternatives=["wsl --shutdown"],
               text="upgrade the NVIDIA Container Toolkit (`sudo apt-get install --only-upgrade nvidia-container-toolkit "
                    "libnvidia-container1`; on WSL 2 the toolkit must know its driver folder layout), restart Docker "
                    "(`sudo systemctl restart docker`); after a driver update also restart Docker Desktop or WSL "
                    "(`wsl --shutdown`)")


def docker_desktop_runtime_fix() -> Fix:
    """A container's CUDA runtime reached a driver library without an entry point it needs: under Docker Desktop
    (WSL 2) its NVIDIA runtime predates the Windows driver; on a Linux host the toolkit is upgraded instead."""
    return or_else(advice("update Docker Desktop to its newest release (its NVIDIA runtime must know the Windows "
                          "driver's libraries), then restart it"), container_toolkit_upgrade_fix(),
                   "%s. On a Linux host: %s")
