"""Host facts: kernel, container, WSL, device nodes; these change how other facts should be read."""
from __future__ import annotations

import os
import sys

from ..model import HostFacts


def probe(ctx) -> None:
    host = ctx.host
    facts = HostFacts(root=str(host.root))
    facts.platform = sys.platform if host.is_live else "linux"
    facts.machine = host.machine()
    facts.hostname = _hostname(host)
    facts.python = sys.executable if host.running_python else None
    release = host.read_text("/proc/sys/kernel/osrelease")
    if release is None and host.is_live:
        import platform  # only where /proc cannot tell (platform costs 2 ms to import)

        release = platform.release()
    facts.kernel_release = release.strip() if release else None
    # WSL2 exposes the GPU as /dev/dxg and the driver under /usr/lib/wsl/lib (catalogue H4/H5).
    facts.wsl = host.in_wsl(facts.kernel_release or "")
    facts.in_container = host.in_container()
    facts.dev_nodes = [p for p in host.glob("/dev/nvidia*")] + (["/dev/dxg"] if host.lexists("/dev/dxg") else [])
    # Fixes name packages for the machine's own package manager (apt-get is apt's stable command).
    facts.package_manager = next((name for tool, name in _PACKAGE_MANAGERS if host.lexists("/usr/bin/" + tool)), None)
    facts.euid = host.euid()
    ctx.facts.host = facts
    for place in ("/proc/sys/kernel/osrelease", "/.dockerenv", "/run/.containerenv", "/proc/1/cgroup", "/dev/nvidia*",
                  "/dev/dxg", "/usr/bin/{apt-get,dnf,yum,zypper}"):
        ctx.searched("host", place)


_PACKAGE_MANAGERS = (("apt-get", "apt"), ("dnf", "dnf"), ("yum", "yum"), ("zypper", "zypper"))


def _hostname(host) -> "str | None":
    """This machine's node name; under --root, the image's /etc/hostname (a mounted node root names that node)."""
    if host.is_live:
        if hasattr(os, "uname"):  # what platform.node() answers on POSIX, without importing platform
            return os.uname().nodename or None
        import platform

        return platform.node() or None
    text = host.read_text("/etc/hostname", limit=4096)
    return text.strip().split()[0] if text and text.strip() else None
