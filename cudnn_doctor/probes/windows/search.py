"""Windows' DLL search order, simulated: which file each LoadLibrary call maps, and what it passed over.

Modelled on the documented order (Microsoft, "Dynamic-link library search order") and proven file for file
against Wine's loader by tests/windows/test_windows_wine.py. Standard order (SafeDllSearchMode): the program's folder,
System32, System, the Windows folder, the current folder, then PATH. With LOAD_LIBRARY_SEARCH_* flags (how
Python 3.8+ loads extension modules and ctypes libraries) PATH and the current folder are not searched: the
loaded DLL's own folder, the program's folder, the AddDllDirectory (os.add_dll_directory) folders, System32.
A module already loaded under the same file name is reused; a load fails as a whole when any import fails.
"""
from __future__ import annotations

import ntpath
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

# LoadLibraryExW flags (libloaderapi.h).
LOAD_WITH_ALTERED_SEARCH_PATH = 0x8
SEARCH_DLL_LOAD_DIR = 0x100
SEARCH_APPLICATION_DIR = 0x200
SEARCH_USER_DIRS = 0x400
SEARCH_SYSTEM32 = 0x800
SEARCH_DEFAULT_DIRS = 0x1000
PYTHON_EXTENSION_FLAGS = SEARCH_DEFAULT_DIRS | SEARCH_DLL_LOAD_DIR  # Python 3.8+ for .pyd files and ctypes paths

ERROR_MOD_NOT_FOUND = 126
ERROR_BAD_EXE_FORMAT = 193

# Imports every Windows (and Wine) provides from System32 or the loader itself; a drive copied without its
# System32 must not make every DLL look broken.
SYSTEM_PREFIXES = ("api-ms-win-", "ext-ms-win-")
SYSTEM_DLLS = frozenset(
    "kernel32.dll ntdll.dll kernelbase.dll user32.dll advapi32.dll gdi32.dll shell32.dll ole32.dll oleaut32.dll "
    "ws2_32.dll msvcrt.dll ucrtbase.dll shlwapi.dll setupapi.dll version.dll dbghelp.dll bcrypt.dll crypt32.dll "
    "psapi.dll winmm.dll rpcrt4.dll secur32.dll iphlpapi.dll comctl32.dll comdlg32.dll imm32.dll".split())


@dataclass
class Candidate:
    path: str  # Windows path as users write it
    machine: Optional[str]  # "x64", "x86", ... from the PE header
    imports: List[str] = field(default_factory=list)


Lookup = Callable[[str, str], Optional[Candidate]]  # (folder, file name) -> the file there, case-insensitively


@dataclass
class Step:
    folder: str
    via: str  # why the loader looks there: "PATH", "System32", "os.add_dll_directory", ...


@dataclass
class Load:
    """The answer to one LoadLibrary call."""

    request: str  # the name or path asked for
    path: Optional[str] = None  # the file mapped (None: the call fails)
    via: Optional[str] = None
    error: Optional[int] = None  # 126 (a module or one of its imports not found), 193 (wrong machine type)
    missing: Optional[str] = None  # the file that could not be found or loaded
    shadowed: List[Dict[str, str]] = field(default_factory=list)  # later candidates: {"path", "via"}
    skipped: List[Dict[str, str]] = field(default_factory=list)  # wrong-machine files passed over: {"path", "machine"}
    modules: Dict[str, str] = field(default_factory=dict)  # every module this call mapped: name -> path


class Process:
    """One process's loader state: its search settings and the modules it has loaded so far."""

    def __init__(self, lookup: Lookup, *, system32: str, windows_dir: str, app_dir: Optional[str] = None,
                 cwd: Optional[str] = None, path: Sequence[str] = (), user_dirs: Sequence[str] = (),
                 default_flags: int = 0, machine: str = "x64") -> None:
        self.lookup = lookup
        self.system32 = system32
        self.windows_dir = windows_dir
        self.app_dir = app_dir
        self.cwd = cwd
        self.path = [p for p in path if p]
        self.user_dirs = list(user_dirs)  # in the order they were added
        self.default_flags = default_flags  # SetDefaultDllDirectories
        self.machine = machine
        self.loaded: Dict[str, str] = {}  # lower-case file name -> path

    def steps(self, flags: int, requester: Optional[str] = None) -> List[Step]:
        """The folders searched for a name, in order, for a call with these flags."""
        search = flags & 0xFF00 or (self.default_flags if not flags & LOAD_WITH_ALTERED_SEARCH_PATH else 0)
        if search & SEARCH_DEFAULT_DIRS:
            search |= SEARCH_APPLICATION_DIR | SEARCH_USER_DIRS | SEARCH_SYSTEM32
        out: List[Step] = []
        if search:
            if search & SEARCH_DLL_LOAD_DIR and requester and _has_path(requester):
                out.append(Step(ntpath.dirname(requester),
                                "the loaded DLL's own folder (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR)"))
            if search & SEARCH_APPLICATION_DIR and self.app_dir:
                out.append(Step(self.app_dir, "the program's folder"))
            if search & SEARCH_USER_DIRS:
                # Microsoft leaves their order unspecified; Wine searches the folder added last first.
                out.extend(Step(d, "os.add_dll_directory / AddDllDirectory") for d in reversed(self.user_dirs))
            if search & SEARCH_SYSTEM32:
                out.append(Step(self.system32, "System32"))
            return out
        first = ntpath.dirname(requester) if flags & LOAD_WITH_ALTERED_SEARCH_PATH and requester and \
            _has_path(requester) else self.app_dir
        if first:
            out.append(Step(first, "the program's folder" if first == self.app_dir else "the loaded DLL's folder"))
        out += [Step(self.system32, "System32"), Step(ntpath.join(self.windows_dir, "System"), "System"),
                Step(self.windows_dir, "the Windows folder")]
        if self.cwd:
            out.append(Step(self.cwd, "the current folder"))
        out.extend(Step(p, "PATH") for p in self.path)
        return out

    def unresolved_imports(self, path: str, imports: Sequence[str], flags: int = 0) -> List[str]:
        """The direct imports of the DLL at ``path`` that its load's search finds nowhere (system DLLs aside)."""
        steps = self.steps(flags, path)
        return [dep for dep in imports if not _is_system(dep.lower()) and dep.lower() not in self.loaded
                and self._find(dep, steps)[0] is None]

    def load_library(self, request: str, flags: int = 0) -> Load:
        """LoadLibraryExW(request, NULL, flags): the module mapped, or the error and the file that caused it."""
        before = dict(self.loaded)
        result = Load(request=request)
        steps = self.steps(flags, request)
        ok = self._load(request, steps, result, top=True)
        if not ok:
            self.loaded = before  # Windows unloads everything a failed call mapped
            result.modules = {}
            result.path = None if result.path is None or result.error else result.path
        return result

    def _load(self, name: str, steps: List[Step], result: Load, top: bool = False) -> bool:
        key = ntpath.basename(name).lower()
        if not _has_path(name) and key in self.loaded:
            if top:
                result.path, result.via = self.loaded[key], "already loaded"
            return True
        found, via, shadowed, skipped = self._find(name, steps)
        if top:
            result.shadowed, result.skipped = shadowed, skipped
        if found is None:
            if _is_system(key):
                return True
            result.error = ERROR_BAD_EXE_FORMAT if skipped else ERROR_MOD_NOT_FOUND
            result.missing = name
            return False
        if top:
            result.path, result.via = found.path, via
        self.loaded[key] = found.path
        result.modules[ntpath.basename(found.path)] = found.path
        for dep in found.imports:
            if not self._load(dep, steps, result):
                if top:
                    result.error = result.error or ERROR_MOD_NOT_FOUND
                return False
        return True

    def _find(self, name: str, steps: List[Step]) -> Tuple[Optional[Candidate], Optional[str], List[Dict[str, str]],
                                                          List[Dict[str, str]]]:
        if _has_path(name):
            cand = self.lookup(ntpath.dirname(name), ntpath.basename(name))
            if cand is not None and cand.machine not in (None, self.machine):
                return None, None, [], [{"path": cand.path, "machine": cand.machine}]
            return cand, "the path given", [], []
        found: Optional[Candidate] = None
        via: Optional[str] = None
        shadowed: List[Dict[str, str]] = []
        skipped: List[Dict[str, str]] = []
        seen = set()
        for step in steps:
            folder_key = step.folder.rstrip("\\").lower()
            if folder_key in seen:
                continue
            seen.add(folder_key)
            cand = self.lookup(step.folder, name)
            if cand is None:
                continue
            if cand.machine not in (None, self.machine):
                # Wine's loader passes over an image of another machine type and keeps searching.
                if found is None:
                    skipped.append({"path": cand.path, "machine": cand.machine})
                continue
            if found is None:
                found, via = cand, step.via
            else:
                shadowed.append({"path": cand.path, "via": step.via})
        return found, via, shadowed, skipped


def _has_path(name: str) -> bool:
    return "\\" in name or "/" in name


def _is_system(key: str) -> bool:
    return key in SYSTEM_DLLS or key.startswith(SYSTEM_PREFIXES)
