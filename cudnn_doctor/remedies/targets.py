"""Fixes when a machine does not fit a framework, a --for target or a GPU: another release, build, or machine."""
from __future__ import annotations

from typing import Dict, Optional

from ..model import Fix
from .shell import stated


def matrix_fix(framework: str) -> Fix:
    return stated("See `cudnn-doctor matrix --for %s`." % framework)


def dl4j_matrix_fix() -> Fix:
    return stated("See `cudnn-doctor matrix --for dl4j` for the releases compat knows.")


def target_syntax_fix() -> Fix:
    return stated("Use torch, tensorflow, jax or dl4j, optionally ==VERSION (see `cudnn-doctor matrix --for dl4j`)")


def requirement_syntax_fix() -> Fix:
    return stated("Write it as a key and a version comparison, e.g. --require 'cudnn>=8.9,<10'")


def tensorflow_on_windows_fix(version: str, last_native: str) -> Fix:
    """TensorFlow after its last native-Windows GPU release: WSL2, or that release."""
    return stated('Use WSL2 with `pip install "tensorflow[and-cuda]==%s"`, or TensorFlow %s (`pip install '
                  '"tensorflow==%s.*"`)' % (version, last_native, last_native))


def dl4j_for_this_gpu_fix(newer: Optional[Dict[str, str]], newest: Dict[str, str]) -> Fix:
    """The DL4J release whose CUDA backend drives this GPU, or where none does, another GPU or the CPU."""
    if newer:
        return stated("Use DL4J %s (CUDA %s backend %s), whose CUDA supports this GPU." % (
            newer["dl4j"], newer["cuda"], newer["backend"]))
    return stated("No DL4J release in compat has a CUDA backend for this GPU (newest backend: CUDA %s in DL4J %s); "
                  "run DL4J on a GPU that CUDA %s supports, or on CPU with the nd4j-native backend." % (
                      newest["cuda"], newest["dl4j"], newest["cuda"]))


def torch_from_source_fix(cc: str) -> Fix:
    return stated("Build PyTorch from source with TORCH_CUDA_ARCH_LIST=%s, or use a GPU the wheel has code for." % cc)


def framework_upgrade_for_cc_fix(name: str, cc: str) -> Fix:
    return stated("python3 -m pip install -U %s   (a release built for compute capability %s)" % (name, cc))


def tensorflow_cpu_or_newer_gpu_fix(floor: str) -> Fix:
    return stated("Run TensorFlow on CPU or on a GPU of compute capability %s or newer." % floor)


def older_cudnn_for_gpu_fix(older: Optional[str], cc: str) -> Fix:
    if older:
        return stated("Install cuDNN %s or older (the newest release in compat that still supports compute "
                      "capability %s), run on CPU, or use a newer GPU." % (older, cc))
    return stated("Use a cuDNN release that supports compute capability %s, or a newer GPU." % cc)


def older_toolkit_for_gpu_fix(cc: str) -> Fix:
    return stated("Install an older CUDA toolkit that still supports compute capability %s." % cc)


def free_gpu_memory_fix() -> Fix:
    return stated("Free the GPU (`nvidia-smi` lists the processes holding it) or pick another one; stop frameworks "
                  "from grabbing all memory: export TF_FORCE_GPU_ALLOW_GROWTH=true (TensorFlow), "
                  "export XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX).")
