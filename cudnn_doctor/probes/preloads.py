"""The cuDNN a framework's own Python code loads before its library asks the loader: torch preloads NVIDIA's wheels
from sys.path when its libtorch_global_deps cannot find the CUDA runtime, and the JAX CUDA plugin loads
nvidia.cudnn's library by full path. Read from the installed framework's own source, never assumed."""
from __future__ import annotations

import os
import re
from typing import List, Optional

from ..model import FrameworkFacts, Resolution

# torch/__init__.py: `def _preload_cuda_deps(lib_folder, lib_name...)`, called with ("cudnn", "libcudnn.so.*[0-9]")
_TORCH_PRELOAD = re.compile(r'"cudnn":\s*"(libcudnn\.so\.\*\[0-9\])"')
# jax_plugins/xla_cudaNN/__init__.py: `_load("cudnn", ["libcudnn.so.9"])`
_JAX_LOAD = re.compile(r'_load\(\s*"cudnn",\s*\[\s*"(libcudnn\.so\.\d+)"')
_RUNTIME = re.compile(r"libcudart\.so\.\d+")


def python_path(ctx, fw: FrameworkFacts) -> List[str]:
    """The framework's sys.path entries that can hold NVIDIA's wheels, in order: PYTHONPATH, then its site."""
    entries = [e for e in (ctx.host.getenv("PYTHONPATH") or "").split(":") if e.startswith("/")]
    return list(dict.fromkeys(entries + [fw.location]))


def preloaded_cudnn(ctx, fw: FrameworkFacts, major: int) -> Optional[Resolution]:
    """The libcudnn the framework's Python side loads itself (which then answers its library's own request), or
    None when it loads none and the loader's search decides."""
    library = fw.consumer_library
    if not library:
        return None
    if fw.name == "torch":
        return _torch(ctx, fw, major, library)
    if fw.name.startswith("jax-cuda"):
        return _jax(ctx, fw, major, library)
    return None


def _torch(ctx, fw: FrameworkFacts, major: int, library: str) -> Optional[Resolution]:
    """torch's _load_global_deps(): only when libtorch_global_deps.so cannot load (its CUDA runtime is not on its
    RPATH, LD_LIBRARY_PATH or the cache) does it preload each CUDA wheel from the first sys.path entry holding it."""
    lib = os.path.dirname(library)
    source = ctx.host.read_text(os.path.join(os.path.dirname(lib), "__init__.py"), limit=1 << 20) or ""
    deps = os.path.join(lib, "libtorch_global_deps.so")
    pattern = _TORCH_PRELOAD.search(source)
    if not pattern or not ctx.host.lexists(deps):
        return None
    info = ctx.loader.elf(deps, dynamic=True)
    runtimes = [n for n in info.needed if _RUNTIME.fullmatch(n)]
    found = [ctx.loader.resolve(n, runpath=info.runpath, rpath=info.rpath, origin=lib) for n in runtimes]
    if all(r.path and not r.error for r in found):
        return None  # global deps load: no preload, the library's own search decides
    for entry in python_path(ctx, fw):
        hits = ctx.host.glob(os.path.join(entry, "nvidia", "cudnn", "lib", pattern.group(1)))
        if hits:
            real, _ = ctx.host.realpath(hits[0])
            return Resolution(name="libcudnn.so.%d" % major, path=hits[0], realpath=real,
                              via="sys.path (torch's _preload_cuda_deps)")
    return Resolution(name="libcudnn.so.%d" % major, error="torch's _preload_cuda_deps: libcudnn.so.*[0-9] not found in "
                                                "sys.path (%s)" % ", ".join(python_path(ctx, fw)))


def _jax(ctx, fw: FrameworkFacts, major: int, library: str) -> Optional[Resolution]:
    """The JAX plugin's _load("cudnn", [...]): `import nvidia.cudnn` (the first sys.path entry that has it) and a
    load of its lib/ file by full path, before anything else; a missing file leaves the loader's search."""
    source = ctx.host.read_text(os.path.join(os.path.dirname(library), "__init__.py"),
                                limit=1 << 20) or ""
    m = _JAX_LOAD.search(source)
    if not m or m.group(1) != "libcudnn.so.%d" % major:
        return None
    for entry in python_path(ctx, fw):
        package = os.path.join(entry, "nvidia")
        if not ctx.host.is_dir(os.path.join(package, "cudnn")):
            if ctx.host.lexists(os.path.join(package, "__init__.py")):
                return None  # a regular `nvidia` package without cudnn hides the later entries: ImportError
            continue
        path = os.path.join(package, "cudnn", "lib", m.group(1))
        if not ctx.host.lexists(path):
            return None
        real, _ = ctx.host.realpath(path)
        return Resolution(name=m.group(1), path=path, realpath=real, via="sys.path (the JAX plugin's nvidia.cudnn)")
    return None
