"""Real framework and NVIDIA wheels for the real-world corpus: downloaded once through pip, unpacked once (the parts a
framework loads cuDNN with), then hard-linked into each case so a case costs no disk and $ORIGIN stays exact."""
from __future__ import annotations

import fnmatch
import os
import zipfile
from pathlib import Path
from typing import Optional, Sequence

from realdata import CACHE, download_wheel, unpacked_wheel

WHEELS = CACHE / "wheels"
TREES = CACHE / "realworld-trees"
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64",
             "manylinux1_x86_64")

# What of each framework wheel the corpus needs: its metadata, build records and the library that loads cuDNN.
# NVIDIA's own wheels are unpacked whole (every sub-library is a file the loader may pick).
KEEP = {
    "torch": ("torch/version.py", "torch/lib/libtorch_cuda.so", "torch/__init__.py", "torch/lib/libtorch_global_deps.so"),
    "tensorflow": ("tensorflow/python/platform/build_info.py", "tensorflow/libtensorflow_framework.so.2"),
    "onnxruntime-gpu": ("onnxruntime/__init__.py", "onnxruntime/capi/_ld_preload.py",
                        "onnxruntime/capi/libonnxruntime_providers_cuda.so",
                        "onnxruntime/capi/libonnxruntime_providers_shared.so"),
    "jax-cuda12-pjrt": ("jax_plugins/*",),
    "jax-cuda12-plugin": ("jax_cuda12_plugin/version.py", "jax_cuda12_plugin/__init__.py",
                          "jax_cuda12_plugin/_versions.so"),
    "jaxlib": ("jaxlib/version.py", "jaxlib/__init__.py"),
    "tensorflow-cpu": ("tensorflow/python/platform/build_info.py", "tensorflow/libtensorflow_framework.so.2"),
    "onnxruntime": ("onnxruntime/__init__.py", "onnxruntime/capi/*.so*"),
    "jax-cuda13-pjrt": ("jax_plugins/*",),
    "jax-cuda13-plugin": ("jax_cuda13_plugin/version.py", "jax_cuda13_plugin/__init__.py",
                          "jax_cuda13_plugin/_versions.so"),
    "paddlepaddle-gpu": ("paddle/version/__init__.py", "paddle/libs/libphi.so"),
    "cupy-cuda12x": ("cupy/_environment.py", "cupy/.data/_wheel.json", "cupy/__init__.py", "cupy/cuda/__init__.py",
                     "cupy_backends/cuda/libs/cudnn.*.so"),
}


def _stem(name: str) -> str:
    return name.replace("-", "_")


def wheel_file(name: str, version: str) -> Optional[Path]:
    """The cached Linux wheel, fetched by `pip download` (through pip's own HTTP cache) on first use."""
    return download_wheel(name, version, "%s-%s-*x86_64.whl" % (_stem(name), version), PLATFORMS)


def _wanted(name: str, member: str) -> bool:
    if ".dist-info/" in member:
        return True
    keep = KEEP.get(name)
    return keep is None or any(fnmatch.fnmatchcase(member, pat) for pat in keep)


def tree(name: str, version: str) -> Optional[Path]:
    """The wheel unpacked as a site-packages folder holding only what the corpus reads (cached, done once)."""
    def fill(zf: zipfile.ZipFile, tmp: Path) -> None:
        for info in zf.infolist():
            if info.is_dir() or not _wanted(name, info.filename):
                continue
            zf.extract(info, tmp)
            mode = (info.external_attr >> 16) & 0o777
            if mode:  # zip drops the exec bits pip keeps
                os.chmod(tmp / info.filename, mode)
    # A framework wheel is read once; only NVIDIA's are installed again (by the fixes, with pip).
    keep = name.startswith("nvidia-") or bool(os.environ.get("CUDNN_DOCTOR_KEEP_WHEELS"))
    return unpacked_wheel(TREES / ("%s-%s" % (name, version)), lambda: wheel_file(name, version), fill,
                          keep_wheel=keep)


def link_into(src: Path, dest: Path, only: Sequence[str] = ()) -> None:
    """Hard-link a cached tree into a case folder (as `pip install --no-deps --target` would lay it out);
    `only`: file-name globs to keep (a cuDNN copy with some sub-libraries missing)."""
    for folder, _, files in os.walk(src):
        rel = os.path.relpath(folder, src)
        for name in files:
            if name == ".complete" or (only and not any(fnmatch.fnmatchcase(name, p) for p in only)):
                continue
            out = dest / rel / name
            out.parent.mkdir(parents=True, exist_ok=True)
            if not out.exists():
                os.link(os.path.join(folder, name), out)
