"""The GPU code a framework wheel carries: its CUDA libraries (the ones check reads, probes/gpu_code.LIBRARIES)
unpacked one at a time from the wheel and read with the same fat-binary reader."""
from __future__ import annotations

import fnmatch
import os
import re
import shutil
import tempfile
import zipfile
from typing import Dict, List, Optional

from ..probes.gpu_code import LIBRARIES
from ..readers.elf import read_elf
from ..readers.fatbin import gpu_code


def project_of(wheel_name: str) -> str:
    """'torch-2.11.0-cp312-...whl' -> 'torch'; 'jax_cuda12_pjrt-0.12.0.1-...' -> 'jax-cuda12-pjrt'."""
    return re.sub(r"[_.]+", "-", os.path.basename(wheel_name).split("-", 1)[0]).lower()


# Libraries a wheel carries its kernels in beyond those check reads: TensorFlow 2.x wheels keep theirs in
# libtensorflow_cc (its _pywrap_tensorflow_internal.so has no .nv_fatbin in tensorflow 2.21.0).
EXTRA = (("tensorflow*", ("tensorflow/libtensorflow_cc.so.*",)),)


def library_globs(project: str) -> List[str]:
    for pattern, globs in EXTRA + LIBRARIES:
        if fnmatch.fnmatchcase(project, pattern):
            return list(globs)
    return []


class _View:
    """An open file as len() and slices (the reader's buffer protocol) without loading it."""

    def __init__(self, fh) -> None:
        self.fh = fh
        self.size = os.fstat(fh.fileno()).st_size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, where: slice) -> bytes:
        start, stop, _ = where.indices(self.size)
        return os.pread(self.fh.fileno(), max(0, stop - start), start) if stop > start else b""


def wheel_code(wheel: str) -> Optional[Dict[str, object]]:
    """{project, libraries, sass, ptx, cuda_major}: the architectures every CUDA library of the wheel has code for (the
    intersection: a GPU runs the framework only where each of its libraries has a kernel image); None when the
    wheel has no library check knows, or none of them carries GPU code."""
    project = project_of(wheel)
    globs = library_globs(project)
    sass: Optional[set] = None
    ptx: Optional[set] = None
    read: List[str] = []
    majors: set = set()
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as scratch:
        names = [n for n in archive.namelist() if any(fnmatch.fnmatchcase(n, g) for g in globs)]
        for name in sorted(names):
            target = os.path.join(scratch, "lib.so")
            with archive.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
            with open(target, "rb") as fh:
                code = gpu_code(_View(fh))
                majors |= cuda_majors(read_elf(fh, os.fstat(fh.fileno()).st_size).needed)
            os.unlink(target)
            if code is None or not code.entries:
                continue
            read.append(name)
            sass = set(code.sass) if sass is None else sass & set(code.sass)
            ptx = set(code.ptx) if ptx is None else ptx & set(code.ptx)
    if not read:
        return None
    return {"project": project, "libraries": read, "sass": _sorted(sass or set()), "ptx": _sorted(ptx or set()),
            "cuda_major": ",".join(sorted(majors))}


def cuda_majors(needed: List[str]) -> set:
    """The CUDA majors a library links: 'libcudart.so.12', 'libcublas.so.13' -> {'12', '13'} (the libraries whose soname is the CUDA major)."""
    found = (re.match(r"lib(?:cudart|cublas|cublasLt)\.so\.(\d+)$", n) for n in needed)
    return {m.group(1) for m in found if m}


def _sorted(names: set) -> List[str]:
    return sorted(names, key=lambda n: (int("".join(c for c in n.split("_", 1)[1] if c.isdigit()) or 0), n))
