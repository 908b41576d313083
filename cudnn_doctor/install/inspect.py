"""What an archive holds: cuDNN version (header), OS and arch, the CUDA it was built for."""
from __future__ import annotations

import os
import platform
import re
import struct
from dataclasses import dataclass, field
from typing import Callable, List, Optional

from ..readers.elf import read_elf
from ..readers.headers import parse_cudnn_header
from ..remedies.install_archive import cudnn_archive_fix, download_again_fix
from ..versions import decode_cuda, decode_cudnn
from .errors import Refusal
from .extract import HEADER_NAMES, Listing
from .layout import cuda_label_from_names, full_version_of, host_arch, platform_from_names, same_arch

MAIN_LIB = re.compile(r"^libcudnn\.so(\.\d+)*$")


@dataclass
class ArchiveInfo:
    """Facts about the cuDNN inside an archive, and where each came from."""

    archive: str
    cudnn_version: str
    major: int
    header: str
    system: str  # linux | macos | windows
    arch: Optional[str] = None
    cuda_label: Optional[str] = None  # from the file/folder name: "12", "10.2"
    library_cudart: Optional[str] = None  # cudnnGetCudartVersion of the library, decoded
    library_version: Optional[str] = None  # cudnnGetVersion, decoded
    load_error: Optional[str] = None
    loadable_here: bool = False
    main_lib: Optional[str] = None  # libcudnn.so.<major>, inside the lib folder
    notes: List[str] = field(default_factory=list)

    @property
    def built_for_cuda(self) -> Optional[str]:
        """The name's CUDA label ("12"), unless the library itself says another major.

        The label is the CUDA family NVIDIA built the archive for (one cuDNN-for-CUDA-12 serves
        every 12.x); the library's own cudart version is the exact toolkit it was compiled with,
        so it wins only when it contradicts the label (a renamed file).
        """
        if self.cuda_label and self.library_cudart:
            if self.cuda_label.split(".")[0] != self.library_cudart.split(".")[0]:
                return self.library_cudart
            return self.cuda_label
        return self.cuda_label or self.library_cudart

    def to_dict(self) -> dict:
        return {"archive": self.archive, "cudnn_version": self.cudnn_version, "header": self.header,
                "system": self.system, "arch": self.arch, "cuda_label": self.cuda_label,
                "library_cudart": self.library_cudart, "library_version": self.library_version,
                "built_for_cuda": self.built_for_cuda, "load_error": self.load_error, "notes": self.notes}


Loader = Callable[[str, str], dict]


_DRY_RUN_LIBS = re.compile(r"^libcudnn(_graph)?\.so(\.\d+)*$")


def keep_for_inspection(entry) -> bool:
    """In a dry run only the headers, the main library and (9.x) the graph library it needs to
    answer cudnnGetVersion are unpacked, to a temp folder; the big engine libraries are not."""
    return entry.role == "lib" and bool(_DRY_RUN_LIBS.match(entry.rel))


def inspect(listing: Listing, staged: Optional[str], load: Optional[Loader]) -> ArchiveInfo:
    """Refuses archives that are not cuDNN or that mix releases; loads the library when it can."""
    name = os.path.basename(listing.archive)
    headers = [(h, parse_cudnn_header(listing.headers[h])) for h in HEADER_NAMES if h in listing.headers]
    header = next(((h, parsed) for h, parsed in headers if parsed is not None), None)
    libs = [e for e in listing.entries if e.role in ("lib", "bin") and
            (e.rel.startswith("libcudnn") or e.rel.endswith(".dll"))]
    if header is None or not libs:
        missing = ("a cudnn_version.h or cudnn.h with the version macros" if header is None
                   else "libcudnn library (or cudnn*.dll)")
        raise Refusal("%s is not a cuDNN archive: it has no %s" % (name, missing),
                      "installing it would not give a working cuDNN",
                      cudnn_archive_fix())
    header_rel, version = header[0], header[1]["version"]
    system = _system_of(libs)
    os_name, arch = platform_from_names(listing.top, listing.dist_info, name)
    info = ArchiveInfo(archive=listing.archive, cudnn_version=version, major=int(version.split(".")[0]),
                       header="include/" + header_rel, system=system, arch=arch,
                       cuda_label=cuda_label_from_names(listing.top, listing.dist_info, name))
    if os_name and os_name != system:
        info.notes.append("the name says %s but the files are %s libraries" % (os_name, system))
    for entry in libs:
        found = full_version_of(entry.rel)
        if found and found != version:
            raise Refusal("%s mixes cuDNN releases: its header says %s but it has %s" % (name, version, entry.rel),
                          "mixed sub-library versions fail at run time (failure D3)",
                          download_again_fix())
    mains = sorted((e.rel for e in libs if e.role == "lib" and MAIN_LIB.match(e.rel)), key=len)
    info.main_lib = next((m for m in mains if re.match(r"^libcudnn\.so\.\d+$", m)), mains[0] if mains else None)
    if system == "linux" and staged and info.main_lib:
        path = os.path.join(staged, "lib", info.main_lib)
        if info.arch is None:
            info.arch = elf_arch(path)
        here = host_arch(platform.machine())
        info.loadable_here = bool(info.arch and same_arch(info.arch, here)) and os.path.exists(path)
        if info.loadable_here and load is not None:
            result = load(path, os.path.dirname(path))
            _take_load_result(info, result)
        elif info.arch and not same_arch(info.arch, here):
            info.notes.append("built for linux-%s, this machine is %s: the library cannot be loaded here to "
                              "check it" % (info.arch, here))
    if info.library_version and info.library_version != version:
        raise Refusal("%s is inconsistent: its header says cuDNN %s but its library reports %s"
                      % (name, version, info.library_version),
                      "a header that does not match the library breaks builds (failure D7)",
                      download_again_fix())
    return info


def _take_load_result(info: ArchiveInfo, result: dict) -> None:
    if result.get("version"):
        info.library_version = decode_cudnn(int(result["version"]))
    if result.get("cudart_version"):
        info.library_cudart = decode_cuda(int(result["cudart_version"]))
    if not result.get("loaded", False) or "version" not in result:
        info.load_error = str(result.get("error") or result.get("crashed") or result.get("timeout")
                              or result.get("version_error") or "unknown error")


_NVIDIA_ARCH = {"x86_64": "x86_64", "aarch64": "sbsa", "ppc64": "ppc64le"}  # read_elf's names -> NVIDIA's


def elf_arch(path: str) -> Optional[str]:
    """x86_64 / sbsa / ppc64le from the ELF header, read by the probes' ELF reader (aarch64 is sbsa)."""
    try:
        with open(path, "rb") as fh:
            info = read_elf(fh, os.fstat(fh.fileno()).st_size, expect_machine="", dynamic=False)
    except (OSError, ValueError, struct.error):
        return None
    return _NVIDIA_ARCH.get(info.machine or "")


def _system_of(libs) -> str:
    names = [e.rel for e in libs]
    if any(n.endswith(".dll") for n in names):
        return "windows"
    if any(".dylib" in n for n in names):
        return "macos"
    return "linux"
