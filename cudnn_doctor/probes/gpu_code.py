"""The GPU architectures each framework's CUDA libraries carry, read from their .nv_fatbin sections (B1)."""
from __future__ import annotations

import fnmatch
import os
import time
from typing import Dict, List, Optional

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
        code = gpu_code(_FileView(fh.fileno(), size))
    finally:
        fh.close()
    if code is None or not code.entries:
        return None
    return {"library": path, "sass": code.sass, "ptx": code.ptx, "containers": code.containers,
            "entries": code.entries, "error": code.error, "ms": round((time.perf_counter() - start) * 1000, 1)}


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
