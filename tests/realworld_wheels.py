"""Real framework and NVIDIA wheels for the real-world corpus: downloaded once through pip, unpacked once (the parts a
framework loads cuDNN with), then hard-linked into each case so a case costs no disk and $ORIGIN stays exact."""
from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import zipfile
from pathlib import Path
from typing import Optional, Sequence

from realdata import CACHE, download_wheel, unpacked_wheel

WHEELS = CACHE / "wheels"
TREES = CACHE / "realworld-trees"
SLIM_OVER = 400 << 20  # framework libraries bigger than this keep only their ELF headers and dynamic section
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
        if not name.startswith("nvidia-"):  # slimmed here, in the private folder under the tree's lock, never in place
            for path in tmp.rglob("*.so*"):
                if path.is_file() and path.stat().st_size > SLIM_OVER and (
                        path.stat().st_blocks * 512 > SLIM_OVER or b".nv_fatbin\0" in _shstrtab(path)):
                    slim_elf(path)
    # A framework wheel is read once; only NVIDIA's are installed again (by the fixes, with pip).
    keep = name.startswith("nvidia-") or bool(os.environ.get("CUDNN_DOCTOR_KEEP_WHEELS"))
    return unpacked_wheel(TREES / ("%s-%s" % (name, version)), lambda: wheel_file(name, version), fill,
                          keep_wheel=keep)


def _shstrtab(path: Path) -> bytes:
    out = subprocess.run(["readelf", "-p", ".shstrtab", str(path)], capture_output=True, text=True).stdout
    return ("\0".join(re.findall(r"\]\s+(\S+)", out)) + "\0").encode()


def slim_elf(path: Path) -> None:
    """Rewrite an ELF file as a sparse file of the same size holding only its ELF and program headers, section
    headers and the dynamic section and strings (as readelf locates them): what ld.so's RPATH/RUNPATH/NEEDED
    search and readelf -d read of a library that is never itself loaded. Only called on a tree being filled (its
    private folder, under its cache lock): a file another run may be reading is never rewritten."""
    out = subprocess.run(["readelf", "-hlS", "--wide", str(path)], capture_output=True, text=True, check=True).stdout
    header = dict(re.findall(r"^\s+(Start of (?:program|section) headers|Size of (?:program|section) headers|"
                             r"Number of (?:program|section) headers):\s+(\d+)", out, re.M))
    keep = [(0, int(header["Start of program headers"]) +
             int(header["Size of program headers"]) * int(header["Number of program headers"])),
            (int(header["Start of section headers"]),
             int(header["Size of section headers"]) * int(header["Number of section headers"]))]
    for name, offset, size in re.findall(r"\]\s+(\.dynamic|\.dynstr|\.shstrtab|\.gnu\.version_d)\s+\S+\s+\S+\s+"
                                         r"([0-9a-f]+)\s+([0-9a-f]+)", out):
        keep.append((int(offset, 16), int(size, 16)))
    size = path.stat().st_size
    tmp = path.with_name(path.name + ".slim")
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        dst.truncate(size)
        for offset, length in keep:
            src.seek(offset)
            dst.seek(offset)
            # The GPU code is not kept: its section is renamed, so no reader walks the holes as a fat binary.
            dst.write(src.read(length).replace(b".nv_fatbin\0", b".nv_fatbix\0"))
    os.chmod(tmp, path.stat().st_mode)
    os.replace(tmp, path)


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
