"""The GPU architectures each framework's CUDA libraries carry, read from their .nv_fatbin sections (B1)."""
from __future__ import annotations

import fnmatch
import os
import time
from typing import Dict, List, Optional

from .. import parsed_cache
from ..readers.fatbin import gpu_code

# Distribution name pattern -> libraries (globs under site-packages) that hold its own CUDA kernels.
LIBRARIES = (
    ("torch", ("torch/lib/libtorch_cuda.so",)),
    ("jax-cuda*-pjrt", ("jax_plugins/xla_cuda*/xla_cuda_plugin.so",)),
    ("jax-cuda*-plugin", ("jax_cuda*_plugin/*.so",)),
    ("jaxlib", ("jaxlib/cuda/*.so",)),  # jaxlib < 0.4.17 carried its CUDA kernels itself
    ("cupy*", ("cupy/_core/*.so", "cupy/cuda/*.so", "cupy_backends/cuda/libs/*.so")),
    ("onnxruntime*", ("onnxruntime/capi/libonnxruntime_providers_cuda.so",)),
    ("paddlepaddle*", ("paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so")),
    ("tensorflow*", ("tensorflow/python/_pywrap_tensorflow_internal.so",)),
)


def _libraries(ctx, fw) -> List[str]:
    name = fw.name.lower()
    for pattern, globs in LIBRARIES:
        if fnmatch.fnmatchcase(name, pattern):
            found: List[str] = []
            for rel in globs:
                found += sorted(ctx.host.glob("%s/%s" % (fw.location.rstrip("/"), rel)))
            return list(dict.fromkeys(found))
    return []


class _FileView:
    """A file as len() and slices, each slice one pread: unlike mmap, reading the headers scattered through a
    1 GB library leaves no pages in this process's memory (mmap's fault-around cost 100 MB of RSS)."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, where: slice) -> bytes:
        start, stop, _ = where.indices(self.size)
        return os.pread(self.fd, max(0, stop - start), start) if stop > start else b""


def read_library(host, path: str) -> Optional[Dict]:
    """The GPU code of one library, touching only the ELF section table and the fat binary headers."""
    opened = host.open_binary(path)
    if opened is None:
        return None
    fh, size = opened
    start = time.perf_counter()
    try:
        if size < 64:
            return None
        st = os.fstat(fh.fileno())
        # A framework's library is hundreds of MB: its headers are read once per build of it, not once a run
        # (the file's identity is the key, so a reinstall or an edit is read afresh).
        identity = (path, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns)
        found = parsed_cache.remember("fatbin", identity, lambda: _scan(fh.fileno(), size))
    finally:
        fh.close()
    if found is None:
        return None
    return dict({"library": path}, **found, ms=round((time.perf_counter() - start) * 1000, 1))


def _scan(fd: int, size: int) -> Optional[Dict]:
    code = gpu_code(_FileView(fd, size))
    if code is None or not code.entries:
        return None
    return {"sass": code.sass, "ptx": code.ptx, "containers": code.containers, "entries": code.entries,
            "error": code.error}


def probe(ctx) -> None:
    for fw in ctx.facts.python.frameworks:
        if fw.cuda_build is False:
            continue
        for path in _libraries(ctx, fw):
            ctx.searched("gpu-code", path)
            try:
                found = read_library(ctx.host, path)
            except (OSError, ValueError) as exc:  # unmappable or vanished file: the table fallback stays
                found = {"library": path, "sass": [], "ptx": [], "error": str(exc)}
            if found:
                fw.gpu_code.append(found)
