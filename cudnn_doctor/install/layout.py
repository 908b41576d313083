"""Facts about cuDNN archive layouts and file names: which member goes where, and what is stale."""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple


def role_of(name: str) -> Optional[Tuple[str, str]]:
    """(role, path inside the role folder) for a clean member name, or None when not installed.

    Layouts: `cuda/{include,lib64,lib,bin,lib/x64}` (<= 8.2, macOS, old Windows),
    `cudnn-<os>-<arch>-<ver>_cudaN-archive/{include,lib,bin,lib/x64}` (8.3+), and the wheel's
    `nvidia/cudnn/{include,lib,bin}`. Like NVIDIA's recipe (`cp include/cudnn*.h`,
    `cp -P lib/libcudnn*`) only cuDNN's own files are installed; anything else is skipped.
    """
    parts = name.split("/")
    if parts[0] == "nvidia":
        if len(parts) < 4 or parts[1] != "cudnn":
            return None
        parts = parts[2:]
    elif parts[0] not in ("include", "lib", "lib64", "bin"):
        parts = parts[1:]  # the single top folder: cuda/ or cudnn-...-archive/
    if len(parts) < 2:
        return None
    head, rest = parts[0], parts[1:]
    if head == "include":
        role = "include"
    elif head == "lib64":
        role = "lib"
    elif head == "lib" and rest[0] == "x64":
        role, rest = "implib", rest[1:]
    elif head == "lib":
        role = "lib"
    elif head == "bin":
        role = "bin"
    else:
        return None
    if not rest or "__pycache__" in rest or not is_cudnn_name(rest[-1]):
        return None
    return role, "/".join(rest)


def is_cudnn_name(filename: str) -> bool:
    """cuDNN's own files: cudnn*.h, libcudnn* (.so/.a/.dylib), cudnn*.dll and cudnn*.lib.

    cudnn_frontend*.h belongs to the separate header-only cuDNN frontend project, which users
    install into the same include folder; it is neither installed nor retired here.
    """
    if filename.startswith("cudnn_frontend") or filename.endswith(".py"):
        return False
    return filename.startswith("libcudnn") or filename.startswith("cudnn")


_SO_MAJOR = re.compile(r"\.so\.(\d+)(?:\.\d+)*$")
_SUFFIX_MAJOR = re.compile(r"_v(\d+)\.(?:h|a|lib)$")
_DLL_MAJOR = re.compile(r"64_(\d+)\.dll$")
_DYLIB_MAJOR = re.compile(r"\.(\d+)(?:\.\d+)*\.dylib$")


def major_of(filename: str) -> Optional[int]:
    """The cuDNN major a file name is tied to, or None for unversioned names (headers, .so, .a)."""
    for pattern in (_SO_MAJOR, _SUFFIX_MAJOR, _DLL_MAJOR, _DYLIB_MAJOR):
        m = pattern.search(filename)
        if m:
            return int(m.group(1))
    return None


def full_version_of(filename: str) -> Optional[str]:
    """'libcudnn_ops.so.9.1.0' -> '9.1.0' (only three-part versions count)."""
    m = re.search(r"\.so\.(\d+\.\d+\.\d+)$", filename) or re.search(r"\.(\d+\.\d+\.\d+)\.dylib$", filename)
    return m.group(1) if m else None


def stale_files(existing: Iterable[str], incoming: Iterable[str], new_major: int) -> List[Tuple[str, str]]:
    """Which cuDNN files already in a destination folder must go (into the backup), and why.

    Leaving them is failure D3/D7: a folder that mixes releases makes the loader or the
    compiler pick pieces of two cuDNNs. The rule:
      * a versioned file of the same major that the new release does not overwrite
        (libcudnn_ops.so.9.1.0 under a 9.14 install, a sub-library the new release dropped)
        is retired: ldconfig could point the .so.9 link back at it, and the shim would
        load a sub-library of another release;
      * unversioned files (headers, .so dev links, static .a, Windows .lib) are retired:
        a folder serves one development version, and stale headers mismatch the library;
      * versioned runtime files of another major (libcudnn*.so.8* under a 9 install) stay:
        their sonames differ, and programs built against that major keep working.
    Retired files move into the backup, so `cudnn-doctor rollback` brings them back.
    """
    incoming = set(incoming)
    out = []
    for name in sorted(existing):
        if name in incoming or not is_cudnn_name(name):
            continue
        major = major_of(name)
        if major is None:
            out.append((name, "unversioned file of the replaced cuDNN (one development version per folder, D7)"))
        elif major == new_major:
            out.append((name, "same-major file of another release (would mix sub-library versions, D3)"))
    return out


# --- what the names say about the build -----------------------------------------------

_PLATFORM_PATTERNS = (
    (re.compile(r"cudnn-linux-(x86_64|sbsa|aarch64|ppc64le)-"), lambda m: ("linux", m.group(1))),
    (re.compile(r"cudnn-windows-(x86_64)-"), lambda m: ("windows", "x86_64")),
    (re.compile(r"-linux-x64-v\d"), lambda m: ("linux", "x86_64")),
    (re.compile(r"-linux-(ppc64le|aarch64|sbsa)-v\d"), lambda m: ("linux", m.group(1))),
    (re.compile(r"-osx-x64-v\d"), lambda m: ("macos", "x86_64")),
    (re.compile(r"-windows\d*-x64-v\d"), lambda m: ("windows", "x86_64")),
    (re.compile(r"manylinux\w*_(x86_64|aarch64)"), lambda m: ("linux", "sbsa" if m.group(1) == "aarch64"
                                                             else "x86_64")),
    (re.compile(r"win_amd64"), lambda m: ("windows", "x86_64")),
)


def platform_from_names(*names: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """(os, arch) from the archive's top folder or file name; (None, None) when they do not say."""
    for name in names:
        for pattern, result in _PLATFORM_PATTERNS:
            m = pattern.search(name or "")
            if m:
                return result(m)
    return None, None


_CUDA_PATTERNS = (
    re.compile(r"_cuda(\d+(?:\.\d+)?)-archive"),
    re.compile(r"^cudnn-(\d+\.\d+)-(?:linux|osx|windows)"),
    re.compile(r"nvidia[-_]cudnn[-_]cu(\d+)"),
)


def cuda_label_from_names(*names: Optional[str]) -> Optional[str]:
    """The CUDA build NVIDIA put in the name: '_cuda12' -> '12', 'cudnn-10.2-linux...' -> '10.2'."""
    for name in names:
        for pattern in _CUDA_PATTERNS:
            m = pattern.search(name or "")
            if m:
                return m.group(1)
    return None


def host_arch(machine: str) -> str:
    """platform.machine() in NVIDIA's platform words."""
    return {"amd64": "x86_64", "x86_64": "x86_64", "aarch64": "sbsa", "arm64": "sbsa",
            "ppc64le": "ppc64le"}.get(machine.lower(), machine.lower())


def same_arch(a: str, b: str) -> bool:
    """sbsa and aarch64 (Jetson) builds share the instruction set."""
    group = {"aarch64": "sbsa"}
    return group.get(a, a) == group.get(b, b)
