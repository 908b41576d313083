"""The GPU architectures each framework's CUDA libraries carry, read from their .nv_fatbin sections (B1)."""
from __future__ import annotations

import fnmatch
import os
import time
from typing import BinaryIO, Dict, List, Optional, Tuple, Union

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


def read_libraries(host, paths: List[str]) -> List[Union[None, Dict, Exception]]:
    """The GPU code of each library, touching only its ELF section table and fat binary headers; the cache is
    asked once for all of them. A library that could not be read is the exception its read raised."""
    opened: List[Optional[Tuple[BinaryIO, int]]] = []
    spent: List[float] = []
    identities: List[Tuple] = []
    try:
        for path in paths:
            start = time.perf_counter()
            one = host.open_binary(path)
            identity: Tuple = (path, "unread")
            if one is not None:
                try:
                    st = os.fstat(one[0].fileno())
                    # A framework's library is hundreds of MB: its headers are read once per build of it, not once
                    # a run (the file's identity is the key, so a reinstall or an edit is read afresh).
                    identity = (path, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns)
                except OSError as exc:
                    one[0].close()
                    one = None
                    identity = (path, "unread", str(exc))
            opened.append(one)
            identities.append(identity)
            spent.append(time.perf_counter() - start)

        def scan(i: int) -> Optional[Dict]:
            start = time.perf_counter()
            try:
                one = opened[i]
                return None if one is None or one[1] < 64 else _scan(one[0].fileno(), one[1])
            finally:
                spent[i] += time.perf_counter() - start
        # Only files opened and big enough are asked of the cache; the others have nothing to read.
        asked = [i for i, one in enumerate(opened) if one is not None and one[1] >= 64]
        answers = dict(zip(asked, parsed_cache.remember_all("fatbin", [identities[i] for i in asked],
                                                            lambda k: scan(asked[k]))))
    finally:
        for one in opened:
            if one is not None:
                one[0].close()
    out: List[Union[None, Dict, Exception]] = []
    for i, path in enumerate(paths):
        found = answers.get(i)
        if found is None or isinstance(found, Exception):
            out.append(found)
        else:
            out.append(dict({"library": path}, **found, ms=round(spent[i] * 1000, 1)))
    return out


def _scan(fd: int, size: int) -> Optional[Dict]:
    code = gpu_code(_FileView(fd, size))
    if code is None or not code.entries:
        return None
    return {"sass": code.sass, "ptx": code.ptx, "containers": code.containers, "entries": code.entries,
            "error": code.error}


def probe(ctx) -> None:
    wanted = []
    for fw in ctx.facts.python.frameworks:
        if fw.cuda_build is False:
            continue
        for path in _libraries(ctx, fw):
            ctx.searched("gpu-code", path)
            wanted.append((fw, path))
    for (fw, path), found in zip(wanted, read_libraries(ctx.host, [path for _, path in wanted])):
        if isinstance(found, (OSError, ValueError)):  # unmappable or vanished file: the table fallback stays
            found = {"library": path, "sass": [], "ptx": [], "error": str(found)}
        elif isinstance(found, Exception):
            raise found
        if found:
            fw.gpu_code.append(found)
