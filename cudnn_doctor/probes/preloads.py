"""The cuDNN a framework's own Python code loads before its library asks the loader: torch preloads NVIDIA's wheels
from sys.path when its libtorch_global_deps cannot find the CUDA runtime, and the JAX CUDA plugin loads
nvidia.cudnn's library by full path. Read from the installed framework's own source, never assumed."""
from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

from ..model import ETC_PRELOAD, FrameworkFacts, Resolution
from .python_places import sys_path_sites

# Where a forced library comes from, as a Resolution's `via` says it: the variable, then glibc's own file.


def _table_entry(folder: str, files: str) -> "re.Pattern[str]":
    """One wheel folder's entry in torch/__init__.py's preload table, as `_preload_cuda_deps(lib_folder, lib_name)`
    takes it: a dict entry `"cudnn": "..."` up to 2.9 (torch 2.4 quotes with '), a tuple `("cudnn", "...")` from
    2.14."""
    return re.compile(r'["\']%s["\'][:,]\s*["\'](%s)["\']' % (folder, files))


_TORCH_PRELOAD = _table_entry("cudnn", r"libcudnn\.so\.\*\[0-9\]")
_TORCH_RUNTIME = _table_entry("cuda_runtime", r"libcudart\.so\.\*\[0-9\]")
# _get_cuda_dep_paths (2.9+) also looks in nvidia/cu<CUDA major>/lib, where CUDA 13's wheels install.
_TORCH_MAJOR_FOLDER = 'f"cu{maj_cuda_version}"'
# 2.14: after libtorch_global_deps loads, `_preload_cuda_deps(required=False)` preloads every wheel sys.path holds.
_TORCH_BEST_EFFORT = re.compile(r"^\s+_preload_cuda_deps\(required=False\)", re.M)
# jax_plugins/xla_cudaNN/__init__.py: `_load("cudnn", ["libcudnn.so.9"])`
_JAX_LOAD = re.compile(r'_load\(\s*"cudnn",\s*\[\s*"(libcudnn\.so\.\d+)"')
_RUNTIME = re.compile(r"libcudart\.so\.\d+")
_NVIDIA_PREFIXES = ("libcu", "libnv")  # NVIDIA's CUDA libraries (cudart, cuBLAS, nvToolsExt, ...), not libc or libgomp


def python_path(ctx, fw: FrameworkFacts) -> List[str]:
    """The framework's sys.path entries that can hold NVIDIA's wheels, in order: PYTHONPATH, then its site and what
    site.py adds around it (the user site, a venv's base sites, .pth folders: probes/python_places.py)."""
    entries = [e for e in (ctx.host.getenv("PYTHONPATH") or "").split(":") if e.startswith("/")]
    return list(dict.fromkeys(entries + sys_path_sites(ctx.host, fw.location)))


def preloaded_cudnn(ctx, fw: FrameworkFacts, major: int, name: str, ld_preload: bool = True) -> Optional[Resolution]:
    """The libcudnn the framework's Python side loads itself (which then answers its library's own request for
    `name`), or None when it loads none and the loader's search decides. A library LD_PRELOAD (or /etc/ld.so.preload)
    loads comes before both: it is loaded before the program starts, and answers the request only by its soname
    (PaddlePaddle's dlopen of the bare libcudnn.so is not answered by a preloaded libcudnn.so.8). Without
    ``ld_preload``: what it would be once LD_PRELOAD and /etc/ld.so.preload are gone."""
    library = fw.consumer_library
    if not library:
        return None
    forced = ld_preloaded(ctx, name) if ld_preload else None
    if forced is not None:
        return forced
    if fw.name == "torch":
        return _torch(ctx, fw, major, library)
    if fw.name.startswith("jax-cuda"):
        return _jax(ctx, fw, major, library)
    return None


def preload_entries(ctx) -> List[Tuple[str, str]]:
    """(entry, where it was set) in the loader's own order: LD_PRELOAD, then /etc/ld.so.preload (glibc's rtld
    loads both before the program's own libraries; whitespace or colons separate entries)."""
    out = [(p, "LD_PRELOAD") for p in ctx.facts.loader.ld_preload]
    text = ctx.host.read_text(ETC_PRELOAD, limit=64 * 1024) or ""
    out += [(p, ETC_PRELOAD) for p in text.replace(":", " ").split() if not p.startswith("#")]
    return out


def ld_preloaded(ctx, name: str) -> Optional[Resolution]:
    """A preloaded library that answers a later request for `name`: ld.so matches every later DT_NEEDED and dlopen
    by name against the objects already loaded (by soname), so the preloaded copy wins over every search path, the
    framework's RPATH and its Python side's own preload alike (torch then says 'compiled against (9, 26, 0) but found
    runtime version (9, 13, 0)'). A bare name is searched as the loader searches it."""
    for entry, where in preload_entries(ctx):
        if not os.path.basename(entry).startswith("libcudnn"):
            continue
        path = entry
        if "/" not in entry:
            found = ctx.loader.resolve(entry)
            if not found.path:
                continue
            path = found.path
        if ctx.host.lexists(path) and _answers(ctx, path, name):
            return _found(ctx, name, path, where)
    return None


def _torch(ctx, fw: FrameworkFacts, major: int, library: str) -> Optional[Resolution]:
    """torch's _load_global_deps(): when libtorch_global_deps.so cannot load (its CUDA runtime is not on its RPATH,
    LD_LIBRARY_PATH or the cache) it preloads each CUDA wheel from the first sys.path entry holding it; from 2.14 it
    also preloads whatever wheels sys.path holds after a good load (best effort)."""
    lib = os.path.dirname(library)
    source = ctx.host.read_text(os.path.join(os.path.dirname(lib), "__init__.py"), limit=1 << 20) or ""
    deps = os.path.join(lib, "libtorch_global_deps.so")
    pattern = _TORCH_PRELOAD.search(source)
    if not pattern or not ctx.host.lexists(deps):
        return None
    info = ctx.loader.elf(deps, dynamic=True)
    runtimes = [n for n in info.needed if _RUNTIME.fullmatch(n)]
    # Every NVIDIA library the global deps need decides whether they load: torch 2.4's also needs libnvToolsExt.so.1
    # (the nvtx wheel), and a miss there makes torch preload every wheel from sys.path just as a missing runtime does.
    nvidia = [n for n in info.needed if n.startswith(_NVIDIA_PREFIXES)]
    found = [ctx.loader.resolve(n, runpath=info.runpath, rpath=info.rpath, origin=lib) for n in nvidia]
    cuda = runtimes[0].rsplit(".", 1)[1] if runtimes else None
    hit = _on_sys_path(ctx, fw, source, "cudnn", pattern.group(1), cuda)
    if hit and not _answers(ctx, hit, "libcudnn.so.%d" % major):
        # The glob took another major's file (libcudnn.so.8 for a torch asking .so.9): loaded, but the loader matches
        # the library's own request by soname, so its search still decides.
        return None
    via = "sys.path (torch's _preload_cuda_deps)"
    if all(r.path and not r.error for r in found):
        # global deps load: the library's own search decides, unless this release preloads what sys.path has anyway
        if hit and _TORCH_BEST_EFFORT.search(source):
            return _found(ctx, "libcudnn.so.%d" % major, hit, via)
        return None
    runtime = _TORCH_RUNTIME.search(source)
    if runtime and not _on_sys_path(ctx, fw, source, "cuda_runtime", runtime.group(1), cuda):
        # No sys.path entry holds the runtime either: torch stops on that library before cuDNN matters, and once the
        # runtime is where the global deps' RPATH finds it (its wheel), the library's own search decides cuDNN.
        return None
    if hit:
        return _found(ctx, "libcudnn.so.%d" % major, hit, via)
    return Resolution(name="libcudnn.so.%d" % major, error="torch's _preload_cuda_deps: libcudnn.so.*[0-9] not found in "
                                                "sys.path (%s)" % ", ".join(python_path(ctx, fw)))


def _on_sys_path(ctx, fw: FrameworkFacts, source: str, folder: str, pattern: str, cuda: Optional[str]) -> Optional[str]:
    """The first file torch's _get_cuda_dep_paths/_preload_cuda_deps finds for one wheel folder on sys.path."""
    for entry in python_path(ctx, fw):
        dirs = [os.path.join(entry, "nvidia", folder, "lib")]
        if cuda and _TORCH_MAJOR_FOLDER in source:
            dirs.append(os.path.join(entry, "nvidia", "cu" + cuda, "lib"))
        for d in dirs:
            hits = ctx.host.glob(os.path.join(d, pattern))
            if hits:
                return hits[0]
    return None


def _answers(ctx, path: str, name: str) -> bool:
    """Whether a preloaded file answers a later request for `name`: ld.so matches loaded objects by their soname
    (the file name where the ELF names none)."""
    soname = ctx.loader.elf(path, dynamic=True).soname
    base = os.path.basename(path)
    return soname == name if soname else (base == name or base.startswith(name + "."))


def _found(ctx, name: str, path: str, via: str) -> Resolution:
    real, _ = ctx.host.realpath(path)
    return Resolution(name=name, path=path, realpath=real, via=via)


def _jax(ctx, fw: FrameworkFacts, major: int, library: str) -> Optional[Resolution]:
    """The JAX plugin's _load("cudnn", [...]): `import nvidia.cudnn` (the first sys.path entry that has it) and a
    load of its lib/ file by full path, before anything else; a missing file leaves the loader's search."""
    source = ctx.host.read_text(os.path.join(os.path.dirname(library), "__init__.py"),
                                limit=1 << 20) or ""
    m = _JAX_LOAD.search(source)
    if not m or m.group(1) != "libcudnn.so.%d" % major:
        return None
    for package in nvidia_package(ctx.host, python_path(ctx, fw)):
        if not ctx.host.is_dir(os.path.join(package, "cudnn")):
            continue
        path = os.path.join(package, "cudnn", "lib", m.group(1))
        if not ctx.host.lexists(path):
            return None
        return _found(ctx, m.group(1), path, "sys.path (the JAX plugin's nvidia.cudnn)")
    return None


def nvidia_package(host, entries) -> List[str]:
    """The folders `import nvidia` takes its submodules from, as Python's path finder does: a sys.path entry whose
    nvidia/ holds __init__.py is a regular package and wins alone, even after namespace portions (an old NVIDIA wheel
    in a user site shipped one: a new user's trial, where JAX then looked for cuDNN there only); else every nvidia/
    folder, in sys.path order."""
    portions: List[str] = []
    for entry in entries:
        package = os.path.join(entry, "nvidia")
        if host.lexists(os.path.join(package, "__init__.py")):
            return [package]
        if host.is_dir(package):
            portions.append(package)
    return portions
