"""Where cuDNN goes: a CUDA toolkit (its version, OS layout, real folders) or a plain prefix."""
from __future__ import annotations

import glob
import os
import platform
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional

from ..bounded_io import not_a_folder
from ..host import Host
from ..probes.toolkit import read_version
from ..remedies.install import (create_parent_fix, name_the_toolkit_fix, prefix_folder_fix, toolkit_folder_fix,
                                toolkit_or_prefix_fix)
from .errors import Refusal
from .layout import host_arch

STATE_DIR = ".cudnn-doctor"


@dataclass
class Target:
    """A resolved install target. ``root`` is the real path (links followed)."""

    root: str
    kind: str  # toolkit | prefix
    system: str  # linux | macos | windows: the layout its folders follow
    arch: Optional[str] = None  # x86_64 / sbsa / ... for Linux toolkits
    cuda_version: Optional[str] = None
    cuda_version_source: Optional[str] = None
    given: str = ""  # what the user named (before links were followed)
    notes: List[str] = field(default_factory=list)

    @property
    def state_dir(self) -> str:
        return os.path.join(self.root, STATE_DIR)

    def dest_dirs(self, archive_system: str) -> Dict[str, str]:
        """role -> real destination folder for an archive built for ``archive_system``."""
        join = os.path.join
        if self.kind == "prefix":
            return {"include": join(self.root, "include"), "lib": join(self.root, "lib"),
                    "implib": join(self.root, "lib"), "bin": join(self.root, "bin")}
        if archive_system == "windows":
            return {"include": _real(join(self.root, "include")), "bin": _real(join(self.root, "bin")),
                    "implib": _real(join(self.root, "lib", "x64")), "lib": _real(join(self.root, "lib", "x64"))}
        if archive_system == "macos":
            return {"include": _real(join(self.root, "include")), "lib": _real(join(self.root, "lib"))}
        return {"include": _real(join(self.root, "include")), "lib": self._linux_libdir()}

    def _linux_libdir(self) -> str:
        """lib64 (following deb/runfile links into targets/<arch>-linux/lib), else the target's lib."""
        lib64 = os.path.join(self.root, "lib64")
        if os.path.lexists(lib64):
            return _real(lib64)
        targets = sorted(glob.glob(os.path.join(self.root, "targets", "*-linux", "lib")))
        if len(targets) == 1:
            return os.path.realpath(targets[0])
        return lib64


def _real(path: str) -> str:
    return os.path.realpath(path) if os.path.lexists(path) else path


def toolkit_version(root: str) -> "tuple[Optional[str], Optional[str]]":
    """(version, where it came from), read exactly as `check` reads a toolkit (probes.toolkit).

    The probe runs on a Host rooted at the toolkit folder itself: it reads only that folder,
    and never the rest of the machine (the installer may run against a mounted or fake tree).
    """
    try:
        version, source = read_version(Host(root, env={}), "")
    except Exception:  # a hostile or half-installed toolkit must give "unknown", not a crash
        return None, None
    if source and " " not in source:  # a file inside the toolkit ("version.json", "include/cuda.h")
        source = os.path.join(root, source)
    return version, source if version else None


def toolkit_system(root: str) -> str:
    """The OS a toolkit folder is laid out for: Windows has lib/x64 or .exe tools, macOS lib/*.dylib."""
    if os.path.isdir(os.path.join(root, "lib", "x64")) or glob.glob(os.path.join(root, "bin", "*.exe")):
        return "windows"
    if not os.path.lexists(os.path.join(root, "lib64")) and glob.glob(os.path.join(root, "lib", "*.dylib")):
        return "macos"
    return "linux"


def toolkit_arch(root: str) -> str:
    """targets/<arch>-linux that lib64 leads into, else the only one present, else this machine's."""
    lib64 = os.path.realpath(os.path.join(root, "lib64"))
    marker = os.sep + "targets" + os.sep
    if marker in lib64:
        rest = lib64.split(marker, 1)[1].split(os.sep)[0]
        if rest.endswith("-linux"):
            return rest[: -len("-linux")]
    found = [os.path.basename(p)[: -len("-linux")] for p in glob.glob(os.path.join(root, "targets", "*-linux"))]
    if len(found) == 1:
        return found[0]
    return host_arch(platform.machine())


def resolve(cuda_home: Optional[str], prefix: Optional[str], env: Mapping[str, str]) -> Target:
    """--prefix DIR, else --cuda-home, else CUDA_HOME / CUDA_PATH, else /usr/local/cuda."""
    if prefix:
        root = os.path.realpath(os.path.abspath(prefix))
        if os.path.lexists(root) and not os.path.isdir(root):
            raise Refusal("--prefix %s %s" % (prefix, not_a_folder(root) or "is not a folder"), "cuDNN is installed into DIR/include and DIR/lib",
                          prefix_folder_fix(), code=2)
        if not os.path.isdir(os.path.dirname(root)):
            raise Refusal("the parent of --prefix %s does not exist" % prefix, "only the last folder is created",
                          create_parent_fix(os.path.dirname(root)), code=2)
        return Target(root=root, kind="prefix", system=_host_system(), given=prefix)
    given = cuda_home or env.get("CUDA_HOME") or env.get("CUDA_PATH") or "/usr/local/cuda"
    where = "--cuda-home" if cuda_home else ("CUDA_HOME" if env.get("CUDA_HOME") else
                                            "CUDA_PATH" if env.get("CUDA_PATH") else "the default")
    root = os.path.realpath(os.path.abspath(given))
    if cuda_home and not os.path.isdir(root):  # named on the command line: a usage error, with what it is instead

        raise Refusal("--cuda-home %s %s" % (cuda_home, not_a_folder(cuda_home) or "is not a folder"),
                      "cuDNN is installed into a toolkit's include and lib64 folders",
                      toolkit_folder_fix(), code=2)
    if not os.path.isdir(root):
        raise Refusal("no CUDA toolkit at %s (%s)" % (given, where),
                      "cuDNN is installed into a toolkit's include and lib64 folders",
                      name_the_toolkit_fix())
    version, source = toolkit_version(root)
    looks_like_toolkit = version or os.path.isdir(os.path.join(root, "bin")) or os.path.lexists(
        os.path.join(root, "lib64"))
    if not looks_like_toolkit:
        raise Refusal("%s does not look like a CUDA toolkit" % given,
                      "it has no version.json, version.txt, include/cuda.h, bin or lib64",
                      toolkit_or_prefix_fix(given))
    system = toolkit_system(root)
    target = Target(root=root, kind="toolkit", system=system, cuda_version=version, cuda_version_source=source,
                    given=given, arch=toolkit_arch(root) if system == "linux" else None)
    if not version:
        target.notes.append("the toolkit's CUDA version is unknown (no version.json, version.txt or cuda.h)")
    return target


def _host_system() -> str:
    return {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux")
