"""The pool the real-world generator draws from: real framework and NVIDIA wheels from PyPI, each unpacked once (only
what the oracle and the doctor read of a framework; NVIDIA's wheels whole), framework libraries of hundreds of MB
kept as sparse files holding only what the loader and readelf read of them (the doctor reads no more of those)."""
from __future__ import annotations

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
    # A framework's libraries over wheels.SLIM_OVER are slimmed while the tree is filled, under its cache lock
    # (realworld_wheels.tree): two runs sharing the cache never rewrite the same file at once.
    return wheels.tree(name, version)


if __name__ == "__main__":
    missing = fetch()
    print("pool ready; missing: %s" % (missing or "none"))
    sys.exit(1 if missing else 0)
