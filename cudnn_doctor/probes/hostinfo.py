"""Host facts: kernel, container, WSL, device nodes; these change how other facts should be read. The container, WSL
and CPU architecture are read here from what the host seam gives (files, the environment), for the probes and for
smoke and diagnose's loader view."""
from __future__ import annotations

import os
import platform
import re
import sys
from typing import Optional

from ..host import Host
from ..model import HostFacts
from ..readers.elf import read_elf


def probe(ctx) -> None:
    host = ctx.host
    facts = HostFacts(root=str(host.root))
    facts.platform = sys.platform if host.is_live else "linux"
    facts.machine = machine_of(host)
    facts.glibc = glibc_version(host)
    facts.hostname = _hostname(host)
    facts.python = sys.executable if host.running_python else None
    release = host.read_text("/proc/sys/kernel/osrelease")
    if release is None and host.is_live:  # only where /proc cannot tell
        release = platform.release()
    facts.kernel_release = release.strip() if release else None
    # WSL2 exposes the GPU as /dev/dxg and the driver under /usr/lib/wsl/lib (catalogue H4/H5).
    facts.wsl = in_wsl(host, facts.kernel_release or "")
    facts.in_container = in_container(host)
    facts.shm_bytes = shm_bytes(host) if facts.in_container else None  # a container's own size (Docker: 64 MiB)
    facts.rdma_memlock_bytes = rdma_memlock_bytes(host)  # what NCCL's InfiniBand transport may pin
    facts.dev_nodes = [p for p in host.glob("/dev/nvidia*")] + (["/dev/dxg"] if host.lexists("/dev/dxg") else [])
    # Fixes name packages for the machine's own package manager (apt-get is apt's stable command).
    facts.package_manager = next((name for tool, name in _PACKAGE_MANAGERS if host.lexists("/usr/bin/" + tool)), None)
    facts.euid = host.euid()
    facts.home = (host.getenv("HOME") or None) if host.is_live else None
    ctx.facts.host = facts
    for place in ("/proc/sys/kernel/osrelease", "/.dockerenv", "/run/.containerenv", "/proc/1/cgroup", "/dev/nvidia*",
                  "/dev/dxg", "/usr/bin/{apt-get,dnf,yum,zypper}"):
        ctx.searched("host", place)
    if facts.in_container:
        ctx.searched("host", "/proc/mounts")
    if facts.rdma_memlock_bytes is not None:
        ctx.searched("host", "/proc/self/limits")


# Where the root's C library is: its name tells glibc < 2.34 (libc-2.31.so); newer ones say it in their text.
LIBC_PLACES = ("/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6",
               "/usr/lib64/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
               "/lib/libc.so.6", "/usr/lib/libc.so.6")
_LIBC_NAME = re.compile(r"libc-(\d+\.\d+)\.so$")
_LIBC_TEXT = re.compile(rb"GNU C Library [^\n]{0,120}?version (\d+\.\d+)")


def glibc_version(host: Host) -> Optional[str]:
    """The root's glibc ('2.35'): what this process runs with on a live machine, else read from the root's libc
    (its file name up to 2.33, the banner in its text after); None for musl or where none is found."""
    if host.is_live and hasattr(os, "confstr"):
        try:
            text = os.confstr("CS_GNU_LIBC_VERSION") or ""
        except (ValueError, OSError):
            text = ""
        if text.startswith("glibc "):
            return text.split()[1]
    for place in LIBC_PLACES:
        if not host.lexists(place):
            continue
        real, _ = host.realpath(place)
        named = _LIBC_NAME.search(real)
        if named:
            return named.group(1)
        data = host.read_bytes(place, limit=8 << 20) or b""
        found = _LIBC_TEXT.search(data)
        if found:
            return found.group(1).decode("ascii")
    return None


_PACKAGE_MANAGERS = (("apt-get", "apt"), ("dnf", "dnf"), ("yum", "yum"), ("zypper", "zypper"))


def _hostname(host) -> "str | None":
    """This machine's node name; under --root, the image's /etc/hostname (a mounted node root names that node)."""
    if host.is_live:
        return platform.node() or None
    text = host.read_text("/etc/hostname", limit=4096)
    return text.strip().split()[0] if text and text.strip() else None


def machine_of(host: Host) -> str:
    """The CPU architecture programs under the root are built for: 'x86_64', 'aarch64', ...

    Live: this machine's. Under --root: the ELF machine of the root's own shell or loader, so an arm64 image
    inspected from an x86_64 host is judged as arm64 (x86_64 where none can be read)."""
    if host.is_live:
        name = platform.machine().lower()
        return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)
    for program in ("/bin/sh", "/usr/bin/env", "/bin/ls"):
        opened = host.open_binary(program)
        if opened is None:
            continue
        fh, size = opened
        try:
            info = read_elf(fh, size, expect_machine="", dynamic=False)
        except Exception:
            continue
        finally:
            fh.close()
        if info.machine:
            return info.machine
    return "x86_64"


def in_container(host: Host) -> bool:
    """Whether this machine is a container (Docker, Podman, Kubernetes, containerd): its GPU comes from the host
    through the container runtime, never from a driver installed inside."""
    cgroup = host.read_text("/proc/1/cgroup", limit=65536) or ""
    return bool(host.lexists("/.dockerenv") or host.lexists("/run/.containerenv") or host.getenv("container")
                or any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod")))


def shm_bytes(host: Host) -> Optional[int]:
    """The size of /dev/shm as /proc/mounts states it (tmpfs's size= option, in the kernel's k; the last mount there
    is the one seen); None where nothing is mounted there or no size is stated (tmpfs's default, half the memory)."""
    size = ""
    for line in (host.read_text("/proc/mounts", limit=1 << 20) or "").splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1] == "/dev/shm":
            size = next((o[len("size="):] for o in fields[3].split(",") if o.startswith("size=")), "")
    digits = size.rstrip("kKmMgG")
    unit = size[len(digits):].lower()
    if not digits.isdigit() or len(unit) > 1:
        return None
    return int(digits) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit]


def rdma_memlock_bytes(host: Host) -> Optional[int]:
    """The soft limit on locked memory (/proc/self/limits, what `ulimit -l` sets) where the machine has RDMA devices
    (/dev/infiniband/uverbs*): NCCL's InfiniBand transport registers its buffers under it. None without such
    devices, where it is unlimited, or where the file says nothing."""
    if not host.glob("/dev/infiniband/uverbs*"):
        return None
    for line in (host.read_text("/proc/self/limits", limit=1 << 16) or "").splitlines():
        if line.startswith("Max locked memory"):
            soft = line[len("Max locked memory"):].split()[:1]
            return int(soft[0]) if soft and soft[0].isdigit() else None
    return None


def in_wsl(host: Host, kernel_release: Optional[str] = None) -> bool:
    """Whether this is WSL2, whose GPU driver is the Windows one (/dev/dxg, /usr/lib/wsl/lib)."""
    release = (kernel_release if kernel_release is not None else host.read_text("/proc/sys/kernel/osrelease")
               or "").lower()
    return "microsoft" in release or "wsl" in release or host.lexists("/dev/dxg")


def driver_place(host: Host) -> str:
    """Where this machine's NVIDIA driver has to come from: 'container', 'wsl' or 'host' (queries.driver_place
    answers the same from the facts)."""
    return "container" if in_container(host) else "wsl" if in_wsl(host) else "host"
