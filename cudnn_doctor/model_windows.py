"""Facts only a Windows machine has: its DLLs as PE files and what each LoadLibrary call would map."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional


@dataclass
class WinDll:
    """One DLL that matters to CUDA/cuDNN, read from its PE headers."""

    path: str  # C:\Program Files\NVIDIA\CUDNN\v9.1\bin\12.4\cudnn64_9.dll
    machine: Optional[str] = None  # x64, x86 (a 32-bit DLL a 64-bit process cannot load)
    version: Optional[str] = None
    # "PE version resource", "cudnn_version.h beside it", "file name", "cudnnGetVersion"
    version_source: Optional[str] = None
    imports: List[str] = field(default_factory=list)
    error: Optional[str] = None


@dataclass
class WinLoad:
    """Where one consumer's LoadLibrary of one DLL lands, and everything it passed over."""

    consumer: str  # "a program started from a shell", "torch 2.3.0"
    mode: str  # how it searches: "standard search order (PATH)", "Python 3.8+ (os.add_dll_directory, no PATH)"
    request: str  # cudnn64_9.dll, zlibwapi.dll, or a full path
    path: Optional[str] = None
    via: Optional[str] = None
    error: Optional[int] = None  # 126, 193
    missing: Optional[str] = None
    shadowed: List[Dict[str, str]] = field(default_factory=list)
    skipped: List[Dict[str, str]] = field(default_factory=list)
    modules: Dict[str, str] = field(default_factory=dict)
    copy: Optional[str] = None  # the cuDNN copy folder this belongs to, when it is a cuDNN library
    unresolved: List[str] = field(default_factory=list)  # every direct import its search cannot find


@dataclass
class WindowsFacts:
    """A Windows machine (or a drive read as C:): its PATH, the NVIDIA DLLs found and what loads them."""

    drive: Optional[str] = None  # the folder read as C: (None on a live Windows machine)
    windows_dir: str = "C:\\Windows"
    path: List[str] = field(default_factory=list)  # PATH, in order
    path_absent: List[str] = field(default_factory=list)  # PATH entries that are not folders
    cuda_path_vars: Dict[str, str] = field(default_factory=dict)  # CUDA_PATH, CUDA_PATH_V12_4, ...
    python_dirs: List[str] = field(default_factory=list)  # Python installations found (folder of python.exe)
    dlls: List[WinDll] = field(default_factory=list)
    loads: List[WinLoad] = field(default_factory=list)
    driver_model: Dict[str, str] = field(default_factory=dict)  # GPU index -> WDDM / TCC (NVML, live only)
