"""The pool the real-world generator draws from: real framework and NVIDIA wheels from PyPI, each unpacked once (only
what the oracle and the doctor read of a framework; NVIDIA's wheels whole), framework libraries of hundreds of MB
kept as sparse files holding only what the loader and readelf read of them (the doctor reads no more of those)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import realworld_wheels as wheels

Wheel = Tuple[str, str]

# kind: how the framework loads cuDNN (the oracle's and the draw's switch); wheels: installed together.
FRAMEWORKS: Dict[str, Tuple[str, Tuple[Wheel, ...]]] = {
    "torch-2.4.1": ("torch", (("torch", "2.4.1"),)),
    "torch-2.5.1": ("torch", (("torch", "2.5.1"),)),
    "torch-2.9.1": ("torch", (("torch", "2.9.1"),)),
    "torch-2.14.1": ("torch", (("torch", "2.14.1"),)),
    "tensorflow-2.15.1": ("tensorflow", (("tensorflow", "2.15.1"),)),
    "tensorflow-2.17.1": ("tensorflow", (("tensorflow", "2.17.1"),)),
    "tensorflow-2.18.0": ("tensorflow", (("tensorflow", "2.18.0"),)),
    "tensorflow-2.19.0": ("tensorflow", (("tensorflow", "2.19.0"),)),
    "jax-cuda12-0.4.30": ("jax", (("jax-cuda12-pjrt", "0.4.30"), ("jax-cuda12-plugin", "0.4.30"))),
    "jax-cuda12-0.5.3": ("jax", (("jax-cuda12-pjrt", "0.5.3"), ("jax-cuda12-plugin", "0.5.3"))),
    "jax-cuda12-0.7.2": ("jax", (("jax-cuda12-pjrt", "0.7.2"), ("jax-cuda12-plugin", "0.7.2"))),
    "jax-cuda13-0.7.2": ("jax", (("jax-cuda13-pjrt", "0.7.2"), ("jax-cuda13-plugin", "0.7.2"))),
    "onnxruntime-gpu-1.18.0": ("onnxruntime", (("onnxruntime-gpu", "1.18.0"),)),
    "onnxruntime-gpu-1.22.0": ("onnxruntime", (("onnxruntime-gpu", "1.22.0"),)),
    "cupy-cuda12x-13.3.0": ("cupy", (("cupy-cuda12x", "13.3.0"),)),
    "cupy-cuda12x-14.2.0": ("cupy", (("cupy-cuda12x", "14.2.0"),)),
    "paddlepaddle-gpu-2.6.2": ("paddle", (("paddlepaddle-gpu", "2.6.2"),)),
}

# NVIDIA's cuDNN wheels, by CUDA major and release.
CUDNN: Tuple[Wheel, ...] = (
    ("nvidia-cudnn-cu11", "8.9.6.50"), ("nvidia-cudnn-cu12", "8.9.4.25"), ("nvidia-cudnn-cu12", "8.9.7.29"),
    ("nvidia-cudnn-cu12", "9.1.0.70"), ("nvidia-cudnn-cu12", "9.3.0.75"), ("nvidia-cudnn-cu12", "9.5.1.17"),
    ("nvidia-cudnn-cu12", "9.8.0.87"), ("nvidia-cudnn-cu12", "9.10.2.21"), ("nvidia-cudnn-cu13", "9.24.0.43"),
)
# The other CUDA libraries (TensorFlow's [and-cuda] set, torch's runtime and NVTX): one release each.
CUDA_LIBS: Tuple[Wheel, ...] = (
    ("nvidia-cuda-runtime-cu12", "12.3.101"), ("nvidia-cublas-cu12", "12.3.4.1"), ("nvidia-cufft-cu12", "11.0.12.1"),
    ("nvidia-curand-cu12", "10.3.4.107"), ("nvidia-cusolver-cu12", "11.5.4.101"),
    ("nvidia-cusparse-cu12", "12.2.0.103"), ("nvidia-nvjitlink-cu12", "12.3.101"),
    ("nvidia-cuda-runtime-cu11", "11.8.89"),
    # torch 2.4's libtorch_global_deps.so needs libnvToolsExt.so.1 (its pin nvidia-nvtx-cu12==12.1.105)
    ("nvidia-nvtx-cu12", "12.1.105"),
)
TF_AND_CUDA = CUDA_LIBS[:7]
NVTX = CUDA_LIBS[-1]

SLIM_OVER = 400 << 20  # framework libraries bigger than this keep only their ELF headers and dynamic section


def every_wheel() -> List[Wheel]:
    return [w for _, ws in FRAMEWORKS.values() for w in ws] + list(CUDNN) + list(CUDA_LIBS)


def fetch(workers: int = 3) -> List[Wheel]:
    """Download and unpack the whole pool (each wheel once); the wheels that could not be had."""
    with ThreadPoolExecutor(workers) as pool:
        got = list(pool.map(lambda w: (w, unpacked(w)), every_wheel()))
    return [w for w, tree in got if tree is None]


def unpacked(wheel: Wheel) -> Optional[Path]:
    name, version = wheel
    if name.startswith("nvidia-"):
        import realworld_stacks as stacks
        return stacks.unpacked(wheel)
    tree = wheels.tree(name, version)
    if tree is not None:
        for path in tree.rglob("*.so*"):
            if path.is_file() and path.stat().st_size > SLIM_OVER and (
                    path.stat().st_blocks * 512 > SLIM_OVER or b".nv_fatbin\0" in _shstrtab(path)):
                slim_elf(path)
    return tree


def _shstrtab(path: Path) -> bytes:
    out = subprocess.run(["readelf", "-p", ".shstrtab", str(path)], capture_output=True, text=True).stdout
    return ("\0".join(re.findall(r"\]\s+(\S+)", out)) + "\0").encode()


def slim_elf(path: Path) -> None:
    """Rewrite an ELF file as a sparse file of the same size holding only its ELF and program headers, section
    headers and the dynamic section and strings (as readelf locates them): what ld.so's RPATH/RUNPATH/NEEDED
    search and readelf -d read of a library that is never itself loaded."""
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


if __name__ == "__main__":
    missing = fetch()
    print("pool ready; missing: %s" % (missing or "none"))
    sys.exit(1 if missing else 0)
