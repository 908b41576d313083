"""Which cuDNN, CUDA runtime and zlib DLLs each consumer would load, by Windows' DLL search order."""
from __future__ import annotations

import ntpath
import re
from typing import List, Optional

from ...model_windows import WinLoad
from ...versions import parse_version
from .state import State
from .search import PYTHON_EXTENSION_FLAGS, SEARCH_DEFAULT_DIRS, Candidate, Load, Process

PLAIN = "a program started from a shell"
PLAIN_MODE = "standard search order (the program's folder, System32, the Windows folder, the current folder, PATH)"
PYTHON_MODE = ("Python 3.8+: ctypes and extension modules search the program's folder, os.add_dll_directory "
               "folders and System32, not PATH")
PYTHON_EXT_MODE = ("Python 3.8+ extension module: the library's own folder, the program's folder, "
                   "os.add_dll_directory folders and System32, not PATH")
TORCH_MODE = ("torch's loader: os.add_dll_directory(torch\\lib), LoadLibraryExW of each torch\\lib\\*.dll with "
              "LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR; cuDNN then loads its "
              "sub-libraries by name")


def lookup_for(state: State):
    def lookup(folder: str, name: str) -> Optional[Candidate]:
        found = state.drive.find(folder, name)
        if found is None:
            return None
        info = state.pe(found)
        return Candidate(path=found, machine=info.machine, imports=info.imports)
    return lookup


def process(state: State, **kw) -> Process:
    return Process(lookup_for(state), system32=state.system32, windows_dir=state.win.windows_dir, **kw)


def cudnn_sequence(state: State, major: int) -> List[str]:
    """What a program using cuDNN `major` loads, in order: cudnn64_N.dll, then its sub-libraries by name."""
    layout = state.ctx.knowledge.cudnn_layout(major)
    return [layout.get("windows_main") or "cudnn64_%d.dll" % major] + list(layout.get("windows_sublibraries", []))


def needs_zlib(version: Optional[str], compat) -> bool:
    """cuDNN 8.3 up to 9 loads zlibwapi.dll at run time (compat/windows.toml [zlibwapi])."""
    table = compat.zlibwapi()
    v = parse_version(version)
    lo, hi = parse_version(table.get("cudnn_from")), parse_version(table.get("cudnn_before"))
    return v is not None and lo is not None and hi is not None and lo <= v < hi


def record(state: State, consumer: str, mode: str, load: Load) -> WinLoad:
    out = WinLoad(consumer=consumer, mode=mode, request=load.request, path=load.path, via=load.via,
                  error=load.error, missing=load.missing, shadowed=load.shadowed, skipped=load.skipped,
                  modules=load.modules)
    if load.path:
        out.copy = ntpath.dirname(load.path)
    state.win.loads.append(out)
    return out


def plain_loads(state: State, proc: Process, major: int, consumer: str, mode: str, first_flags: int = 0) -> None:
    """cudnn64_N.dll (with ``first_flags``), its sub-libraries by name as cuDNN loads them, then zlibwapi.dll
    where that cuDNN needs it."""
    sequence = cudnn_sequence(state, major)
    main = record(state, consumer, mode, proc.load_library(sequence[0], first_flags))
    if not main.path:
        return
    for sub in sequence[1:]:
        record(state, consumer, mode, proc.load_library(sub))
    version = next((d.version for d in state.win.dlls if d.path.lower() == main.path.lower()), None)
    if major == 8 and needs_zlib(version, state.ctx.knowledge):
        record(state, consumer, mode, proc.load_library("zlibwapi.dll"))


def predict(state: State) -> None:
    copies = state.ctx.facts.cudnn
    majors = sorted({c.major for c in copies if c.major is not None}, reverse=True)
    for major in majors:
        plain_loads(state, process(state, path=state.win.path), major, PLAIN, PLAIN_MODE)
    runtimes = sorted({ntpath.basename(tk.cudart_path) for tk in state.ctx.facts.toolkits if tk.cudart_path})
    for name in runtimes:
        record(state, PLAIN, PLAIN_MODE, process(state, path=state.win.path).load_library(name))
    for python_dir in state.win.python_dirs:  # ctypes.CDLL("cudnn64_9.dll") or an extension module's import
        for major in majors:
            plain_loads(state, process(state, app_dir=python_dir, path=state.win.path), major,
                        "Python 3.8+ in %s" % python_dir, PYTHON_MODE, SEARCH_DEFAULT_DIRS)
    for fw in state.ctx.facts.python.frameworks:
        if fw.name == "torch":
            torch_loads(state, fw.location, "torch %s" % fw.version)
        else:
            consumer_loads(state, fw)


def consumer_loads(state: State, fw) -> None:
    """A framework library that imports cuDNN or the CUDA runtime (its PE import table), loaded the way Python
    3.8+ loads extension modules: its own folder, the program's folder, os.add_dll_directory folders, System32."""
    for row in state.ctx.knowledge.windows_consumers():
        if row.get("dist") != fw.name:
            continue
        path = state.drive.find(ntpath.join(fw.location, ntpath.dirname(row["file"])), ntpath.basename(row["file"]))
        if path is None:
            continue
        imports = [i.lower() for i in state.dll(path).imports]
        if not any(re.match(r"^(cudnn64_\d+|cudart64_\d+)\.dll$", i) for i in imports):
            continue
        python_dir = ntpath.dirname(ntpath.dirname(fw.location))
        proc = process(state, app_dir=python_dir, path=state.win.path)
        load = record(state, "%s %s" % (fw.name, fw.version), PYTHON_EXT_MODE,
                      proc.load_library(path, PYTHON_EXTENSION_FLAGS))
        if load.error:
            load.unresolved = proc.unresolved_imports(path, state.dll(path).imports, PYTHON_EXTENSION_FLAGS)


def torch_loads(state: State, site: str, consumer: str) -> None:
    """torch/__init__.py on Windows: add_dll_directory, preload every torch\\lib DLL, PATH patched on failure."""
    lib = ntpath.join(site, "torch", "lib")
    names = sorted(n for n in state.drive.listdir(lib) if n.lower().endswith(".dll"))
    if not names:
        return
    python_dir = ntpath.dirname(ntpath.dirname(site))  # ...\Python311\Lib\site-packages -> ...\Python311
    user_dirs = [d for d in (lib, ntpath.join(python_dir, "Library", "bin")) if state.drive.is_dir(d)]
    proc = process(state, app_dir=python_dir, path=state.win.path, user_dirs=user_dirs)
    for name in names:
        full = ntpath.join(lib, name)
        if proc.load_library(full, PYTHON_EXTENSION_FLAGS).path is None:
            proc.path = [d for d in user_dirs if d not in proc.path] + proc.path  # torch prepends to PATH
            proc.load_library(full)
    for name in names:
        m = re.match(r"^cudnn64_(\d+)\.dll$", name, re.I)
        if m:
            plain_loads(state, proc, int(m.group(1)), consumer, TORCH_MODE)
