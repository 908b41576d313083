"""What this machine puts before a pasted start-up error's own answer: no NVIDIA driver, or no GPU, at all."""
from __future__ import annotations

from typing import Optional

from ..knowledge import Compat
from ..model import Facts
from ..queries import driver_place, has_driver, visible_gpus
from ..remedies import paste_runtime as rt
from ..remedies.driver import missing_driver_fix
from .answered import Answer
from .evidence import Evidence

# Errors any CUDA program prints when it cannot start on a GPU, whatever the library: the machine decides them.
STARTUP_SIGNALS = frozenset({"cudnn-not-initialized", "cudnn-internal-error", "no-device", "cuda-unknown-error",
                             "driver-too-old", "tf-cannot-dlopen", "system-not-ready", "cudnn-no-engine",
                             "cannot-talk-to-driver"})
STARTUP_STATUSES = frozenset({"CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_INTERNAL_ERROR", "cudaErrorNoDevice",
                              "CUDA_ERROR_NO_DEVICE", "cudaErrorInsufficientDriver", "CUDA_ERROR_NOT_INITIALIZED",
                              "cudaErrorInitializationError", "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown",
                              "NVML_ERROR_DRIVER_NOT_LOADED", "CUBLAS_STATUS_NOT_INITIALIZED"})


def is_startup_error(ev: Evidence) -> bool:
    """Whether the text is a generic start-up failure (not a named library, version or loader problem)."""
    return not ev.loader and not ev.checks and (
        any(k in STARTUP_SIGNALS for k in ev.kinds()) or any(s.code.name in STARTUP_STATUSES for s in ev.statuses))


def startup_blocker(ev: Evidence, facts: Facts, compat: Compat) -> Optional[Answer]:
    """For a Linux start-up error checked on a machine without a driver or without a GPU: that, first."""
    if ev.platform == "windows" or not is_startup_error(ev):
        return None
    said = ev.facts.driver or ev.facts.cuda_driver  # the paste's machine has a driver: this one's is no cause
    if not has_driver(facts) and said is None:
        # check's own builder for where the driver comes from: a container gets its GPUs from the host (CD801).
        place = driver_place(facts)
        return Answer("and here: %s, so no CUDA program can start on this machine" % (
            "a container started without GPU access (no /dev/nvidia* devices, no libcuda.so.1)" if place ==
            "container" else "no NVIDIA driver at all"), missing_driver_fix(place))
    if not visible_gpus(facts) and facts.driver.version:
        return Answer("and here: the driver sees no GPU (none present, hidden by CUDA_VISIBLE_DEVICES, or a "
                      "container started without GPUs)", rt.no_gpu_fix())
    return None
