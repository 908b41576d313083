"""Questions about the machine as a whole: its platform, its driver and where the driver comes from, the toolkit
builds use and the loader's folders (LD_LIBRARY_PATH, ld.so.conf), how it installs CUDA pieces."""
from __future__ import annotations

import os
from typing import List, Optional

from ..knowledge import Compat
from ..model import CudnnCopy, Facts, ToolkitFacts


def platform_of(facts: Facts) -> str:
    return "windows" if (facts.host.platform or "").lower().startswith("win") else "linux"


def driver_version(facts: Facts) -> Optional[str]:
    return facts.driver.version or facts.driver.kernel_module_version


def driver_cuda(facts: Facts, compat: Compat) -> Optional[str]:
    """The newest CUDA the driver supports: what it reports, else what its version implies."""
    if facts.driver.cuda_version:
        return facts.driver.cuda_version
    version = driver_version(facts)
    return compat.max_cuda_for_driver(version, platform_of(facts)) if version else None


def has_driver(facts: Facts) -> bool:
    d = facts.driver
    return bool(d.version or d.kernel_module_version or d.libcuda_path or d.libnvml_path or facts.gpus)


def driver_place(facts: Facts) -> str:
    """Where the machine's NVIDIA driver has to come from: 'container' (the host, through the container runtime),
    'wsl' (the Windows driver) or 'host' (installed here); the one answer check, smoke and install give."""
    return "container" if facts.host.in_container else "wsl" if facts.host.wsl else "host"


def primary_toolkit(facts: Facts) -> Optional[ToolkitFacts]:
    """The toolkit builds and plain programs use: /usr/local/cuda, else CUDA_HOME/CUDA_PATH, else the only one."""
    system = [t for t in facts.toolkits if t.kind != "pip" and not t.dangling and t.version]
    for t in system:
        if t.path.rstrip("/") == "/usr/local/cuda":
            return t
    for t in system:
        if any(v in ("CUDA_HOME", "CUDA_PATH") for v in t.found_via):
            return t
    return system[0] if len(system) == 1 else None


def toolkit_owning(facts: Facts, directory: str) -> Optional[ToolkitFacts]:
    folder = os.path.normpath(directory)
    best = None
    for t in facts.toolkits:
        for root in filter(None, (t.path, t.realpath)):
            root = os.path.normpath(root)
            if folder == root or folder.startswith(root + "/"):
                if best is None or len(root) > len(best[1]):
                    best = (t, root)
    return best[0] if best else None


def machine_cuda(facts: Facts, compat: Compat) -> Optional[str]:
    """The CUDA new installs should be built for: the toolkit programs use, else the newest the driver runs."""
    tk = primary_toolkit(facts)
    return (tk.version if tk else None) or driver_cuda(facts, compat)


def ld_entry_for(facts: Facts, path: Optional[str]) -> Optional[str]:
    """The LD_LIBRARY_PATH entry a resolved file came from."""
    if not path:
        return None
    folder = os.path.normpath(os.path.dirname(path))
    for entry in facts.loader.ld_library_path:
        if os.path.normpath(entry) == folder:
            return entry
    return None


def folder_aliases(facts: Facts, directory: str) -> List[str]:
    """A folder under each name a toolkit link gives it (/usr/local/cuda/lib64 is /usr/local/cuda-13.0/lib64)."""
    names = [os.path.normpath(directory)]
    for t in facts.toolkits:
        for a, b in ((t.path, t.realpath), (t.realpath, t.path)):
            if not a or not b:
                continue
            a, b = os.path.normpath(a), os.path.normpath(b)
            for name in list(names):
                if name == a or name.startswith(a + "/"):
                    names.append(b + name[len(a):])
    return list(dict.fromkeys(names))


def listed_in_ld_conf(facts: Facts, directory: str) -> Optional[str]:
    """The /etc/ld.so.conf(.d) entry that already names this folder (itself or through a toolkit link), if any."""
    listed = {os.path.normpath(d): d for d in facts.loader.conf_dirs}
    return next((listed[n] for n in folder_aliases(facts, directory) if n in listed), None)


def package_channel(facts: Facts, copy: Optional[CudnnCopy] = None) -> str:
    """How this machine installs CUDA pieces, from what installed them so far: "pip" or "conda" for a copy from
    there, "apt" where a Debian package is seen, else the package manager the root has ("dnf" for yum too);
    "" when nothing says."""
    if copy is not None and copy.origin in ("pip", "conda"):
        return copy.origin
    if any((c.package or "").startswith("deb ") for c in facts.cudnn):
        return "apt"
    return {"yum": "dnf"}.get(facts.host.package_manager or "", facts.host.package_manager or "")
