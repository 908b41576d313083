"""The native tasks asked for both by the command line before its imports (cli._early_native, speculatively) and by
the probes: one builder for each, since a probe's task takes a speculative answer only where both agree on
everything but the library's spelling (native/session.py)."""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from .driver import NativeTask

# /proc/driver/nvidia/gpus/BUS/information: "GPU UUID: GPU-..." (question marks until the GPU is initialised).
_UUID = re.compile(r"^GPU UUID:\s*(GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*$",
                   re.MULTILINE | re.IGNORECASE)


def gpu_uuid(information: str) -> Optional[str]:
    """The UUID a GPU's /proc/driver/nvidia/gpus/*/information names, None while it is not known."""
    found = _UUID.search(information)
    return found.group(1) if found else None


def health_task(lib: Optional[str], ready: bool) -> NativeTask:
    """The GPUs' health reads; the NVLink error counters only with --ready: NVML answers them in one call per GPU
    that took about 20 ms on an H100, too slow for every check of an 8-GPU node."""
    return dict({"op": "gpu_health", "lib": lib}, **({"nvlink_errors": True} if ready else {}))


def ready_task(lib: str, gpus: Sequence[Tuple[str, Optional[str]]]) -> Optional[NativeTask]:
    """The readiness task of the GPUs ``(bus id, UUID or None)``, numbered in the order given (PCI bus order); None
    without a GPU."""
    if not gpus:
        return None
    return {"op": "cuda_ready", "lib": lib,
            "gpus": [{"index": index, "bus_id": address.lower(), "uuid": uuid}
                     for index, (address, uuid) in enumerate(gpus)]}


def early_tasks(ready: bool) -> List[NativeTask]:
    """What the driver and node probes ask of a live Linux machine, by soname, before any probe asks (the
    readiness tasks, which need the GPUs' list, are added by the caller)."""
    return [{"op": "nvml", "lib": None}, {"op": "cuda_driver", "lib": "libcuda.so.1"}, health_task(None, ready)]
