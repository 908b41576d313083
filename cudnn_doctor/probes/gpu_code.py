"""The GPU architectures each framework's CUDA libraries carry, read from their .nv_fatbin sections (B1)."""
from __future__ import annotations

import fnmatch
import os
import stat
import time
from typing import Dict, List, Optional, Tuple, Union

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


class _Changed(Exception):
    """The file was replaced between its stat and its open: read it, but remember nothing of it."""


def read_libraries(host, paths: List[str]) -> List[Union[None, Dict, Exception]]:
    """The GPU code of each library, touching only its ELF section table and fat binary headers; the cache is
    asked once for all of them, and a library it knows is not even opened (a framework has dozens). A library
    that could not be read is the exception its read raised."""
    spent = [0.0] * len(paths)
    asked: List[int] = []
    identities: List[Tuple] = []
    for i, path in enumerate(paths):
        start = time.perf_counter()
        st = host.stat(path)
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size >= 64:
            asked.append(i)
            identities.append(parsed_cache.file_identity(path, st))
        elif st is not None and not stat.S_ISREG(st.st_mode):
            opened = host.open_binary(path)  # a FIFO, socket or device where a library belongs is noted (CD003)
            if opened is not None:
                opened[0].close()
        spent[i] += time.perf_counter() - start

    def scan(k: int) -> Optional[Dict]:
        i = asked[k]
        start = time.perf_counter()
        opened = host.open_binary(paths[i])
        try:
            if opened is None:
                raise _Changed(paths[i])
            fh, size = opened
            found = _scan(fh.fileno(), size)
            if parsed_cache.file_identity(paths[i], os.fstat(fh.fileno())) != identities[k]:
                raise _Changed(paths[i])
            return found
        finally:
            if opened is not None:
                opened[0].close()
            spent[i] += time.perf_counter() - start
    answers = dict(zip(asked, parsed_cache.remember_all("fatbin", identities, scan)))
    out: List[Union[None, Dict, Exception]] = []
    for i, path in enumerate(paths):
        found = answers.get(i)
        if isinstance(found, _Changed):  # read it as it is now, unremembered
            found = _read_now(host, path)
        if found is None or isinstance(found, Exception):
            out.append(found)
        else:
            out.append(dict({"library": path}, **found, ms=round(spent[i] * 1000, 1)))
    return out


def _read_now(host, path: str) -> Union[None, Dict, Exception]:
    opened = host.open_binary(path)
    if opened is None:
        return None
    try:
        return _scan(opened[0].fileno(), opened[1]) if opened[1] >= 64 else None
    except (OSError, ValueError) as exc:
        return exc
    finally:
        opened[0].close()


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
