"""Answers for the runtime states `check` judges on a machine (CD605 hidden GPUs, CD109 Fabric Manager, GPU memory
for cuDNN's handle) and for the driver states a program meets (a driver library without an entry point the runtime
calls, a driver too old for FFmpeg's NVENC, a GPU index the process does not have), read from a paste: the same
remedies check gives, filled with what the text says (the CUDA_VISIBLE_DEVICES it set, the driver it names).
Pure: evidence and knowledge in, sentences and a Fix out."""
from __future__ import annotations

import re
from typing import Optional

from ..knowledge import Compat
from ..remedies import paste, paste_builds as builds
from ..remedies.containers import (container_gpu_fix, container_ldcache_fix, default_runtime_fix,
                                   docker_desktop_runtime_fix, shm_mode_fix, wsl_libcuda_first_fix)
from ..remedies.gpu import unhide_gpus_fix
from ..remedies.paste_answers import fabric_manager_for_driver_fix, visible_devices_or_unhide_fix
from ..remedies.paste_tools import (caffe_grouped_conv_fix, kv_cache_fix, memory_or_compute_cache_fix, no_device_fix,
                                   supported_gpu_or_release_fix)
from .answer_facts import gpu_cc
from .answered import Answer
from .evidence import Evidence

# A `docker run` command line, its backslash-continued lines included; what in it gives the container the GPUs.
_DOCKER_RUN = re.compile(r"(?<![\w-])docker[ \t]+(?:container[ \t]+)?run\b(?:[^\n\\]|\\\r?\n|\\)*")
# Anywhere in the paste (a flag on a line of its own, daemon.json's default runtime): the GPUs were asked for.
GPU_FLAGS = re.compile(r"--gpus\b|--runtime[ =]\S*nvidia|NVIDIA_VISIBLE_DEVICES|nvidia\.com/gpu|"
                        r"--device[ =]\S*nvidia\.com|default-runtime\W+nvidia")
# The driver was reached: nvidia-smi ran, or the framework read the CUDA it runs (PyTorch's "found version 11040").
DRIVER_REACHED = re.compile(r"Driver Version:|found version \d{4,5}\b")
# What a CUDA runtime says where no driver library reaches it: libcuda absent reads as a driver too old (35).
_NO_DRIVER_KINDS = ("driver-too-old", "no-device", "driver-library-missing")
_NO_DRIVER_STATUSES = ("cudaErrorInsufficientDriver", "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE")

# FFmpeg's NVENC words: the API it was built for, the driver's, and the floor it knows ("(unknown)" past its table)
_NVENC_API = re.compile(r"required nvenc API version\. Required: (\d+\.\d+) Found: (\d+\.\d+)")
_NVENC_FLOOR = re.compile(r"minimum required Nvidia driver for nvenc is (\d+(?:\.\d+){1,2})")
# CUDA_VISIBLE_DEVICES as a shell line or an environment dump sets it: the value up to the next blank or quote.
_VISIBLE = re.compile(r"CUDA_VISIBLE_DEVICES[ \t]{0,3}=[ \t]{0,3}['\"]?([^\s'\"`]{0,80})")
# What CUDA accepts there: GPU indices or GPU/MIG UUIDs, comma-separated.
_DEVICES = re.compile(r"(?:\d{1,3}|GPU-[\w-]+|MIG-[\w/-]+)(?:,(?:\d{1,3}|GPU-[\w-]+|MIG-[\w/-]+))*")


def _no_device(ev: Evidence) -> Answer:
    set_to = _VISIBLE.search(ev.text)
    if set_to is not None:
        value = set_to.group(1)
        odd = "" if _DEVICES.fullmatch(value) else " (not a GPU index or UUID)"
        return Answer("CUDA sees no GPU: the program ran with CUDA_VISIBLE_DEVICES=%s%s, which hides every GPU or "
                      "names one that does not exist" % (value, odd),
                      builds.visible_devices_fix("windows") if ev.platform == "windows" else unhide_gpus_fix())
    if any(s.value == "container" for s in ev.facts.os):
        return Answer("CUDA sees no GPU inside the container: it was started without GPU access (or "
                      "CUDA_VISIBLE_DEVICES hides them)", visible_devices_or_unhide_fix())
    if any(s.value == "wsl" for s in ev.facts.os):
        # WSL has no /dev/nvidia*: only the Windows driver's libcuda (/usr/lib/wsl/lib) reaches the GPU (numba#6777)
        return Answer("CUDA sees no GPU under WSL: the process loaded a libcuda other than WSL's own "
                      "(/usr/lib/wsl/lib/libcuda.so.1, the Windows driver's) - a Linux driver or a CUDA compat package "
                      "installed inside WSL, a toolkit's stub on the path, or a program that opens its own (numba's "
                      "NUMBA_CUDA_DRIVER)", wsl_libcuda_first_fix())
    if ev.platform == "windows":
        return Answer("CUDA sees no GPU (no CUDA-capable device): CUDA_VISIBLE_DEVICES hides them or names an index "
                      "that does not exist, or the NVIDIA driver does not run (nvidia-smi lists no GPU)",
                      builds.visible_devices_fix("windows"))
    return Answer("CUDA sees no GPU (no CUDA-capable device): most often CUDA_VISIBLE_DEVICES hides them or names an "
                  "index that does not exist; else a container started without GPUs, or no NVIDIA kernel module loaded "
                  "(after a kernel update, until a reboot)", no_device_fix())


# Fabric Manager's own log line: "fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver
# version 530.41.03" (gpu-operator#544): the second is the driver's, the one Fabric Manager must be
_FM_MISMATCH = re.compile(r"driver interface version (\S+) don.t match with driver version (\d+\.\d+(?:\.\d+)?)")


def _not_ready(ev: Evidence) -> Answer:
    mismatch = _FM_MISMATCH.search(ev.text)
    if mismatch is not None:
        return Answer("nvidia-fabricmanager is release %s and the driver %s: Fabric Manager runs only at exactly the "
                      "driver's version, and without it CUDA on an NVSwitch system waits (error 802)" % mismatch.groups(),
                      fabric_manager_for_driver_fix(mismatch.group(2)))
    driver = ev.facts.driver.value if ev.facts.driver else None
    return Answer("CUDA error 802 (system not yet initialized): on an NVSwitch system (HGX/DGX) CUDA waits for "
                  "nvidia-fabricmanager, of exactly the driver's version%s, to run" % (
                      (" (%s)" % driver) if driver else ""),
                  fabric_manager_for_driver_fix(driver))


def _cudnn_handle(ev: Evidence) -> Answer:
    if ev.facts.runs("Caffe") and not ev.facts.runs("TensorFlow"):
        # src/caffe/layers/cudnn_conv_layer.cpp creates CUDNN_STREAMS_PER_GROUP (3) handles and streams per group
        return Answer("Caffe's cuDNN convolution layer creates three cuDNN handles and CUDA streams for each group, "
                      "so a grouped (depthwise) convolution of many groups, as MobileNet's, exhausts them and GPU "
                      "memory: cuDNN then fails with an internal error; else GPU memory itself ran out",
                      caffe_grouped_conv_fix())
    tf = "TensorFlow maps nearly all GPU memory when it starts, so " if ev.facts.runs("TensorFlow") or \
        "Failed to get convolution algorithm" in ev.text else ""
    return Answer("cuDNN failed to initialise its handle or workspace: %scuDNN finds no GPU memory left (most "
                  "often); else a cuDNN/CUDA mismatch, printed in the lines above, or a CUDA compute cache (~/.nv) "
                  "that an earlier run left unwritable (as root) or stale (another driver)" % tf,
                  memory_or_compute_cache_fix(ev.platform))


def _driver_entry_missing(ev: Evidence) -> Answer:
    """cudaGetDeviceCount's error 500: the driver library lacks an entry point (Docker Desktop's runtime, mostly)."""
    where = "inside a container, " if "docker" in ev.text.lower() or any(
        s.value in ("container", "wsl") for s in ev.facts.os) else ""
    return Answer("counting the GPUs failed with CUDA error 500 (cudaErrorSymbolNotFound): %sthe driver library the "
                  "process reached lacks an entry point this CUDA runtime calls. Under Docker Desktop (WSL 2) its "
                  "NVIDIA runtime is older than the Windows driver; on Linux, the container toolkit is older than the "
                  "driver, or the image carries a libcuda of its own" % where, docker_desktop_runtime_fix())


def _nvenc(ev: Evidence, compat: Compat) -> Answer:
    """The driver floor the paste states, else the table's for the NVENC API it requires (both platforms' where the
    paste does not say it is from Windows)."""
    api = _NVENC_API.search(ev.text)
    said = _NVENC_FLOOR.search(ev.text)
    floor = said.group(1) if said else ""
    if api and not said:
        rows = {p: compat.nvenc_driver(api.group(1), p) for p in ("windows", "linux")}
        if ev.platform == "windows" and rows["windows"]:
            floor = rows["windows"].version or ""
        elif rows["windows"] and rows["linux"]:
            floor = "%s on Windows, %s on Linux" % (rows["windows"].version, rows["linux"].version)
    gap = " (built for NVENC API %s; this driver provides %s)" % api.groups() if api else ""
    return Answer("the NVIDIA driver is too old for this FFmpeg's NVENC encoder%s: it needs driver %s or newer" % (
        gap, floor or "newer than this one"), paste.driver_fix(floor or None, ev.driver_platform))


# torch.distributed.launch's --nproc_per_node=4, torchrun's --nproc-per-node 4
_PROCESSES = re.compile(r"--nproc[_-]per[_-]node[= ](\d{1,3})\b")


def _invalid_device(ev: Evidence) -> Answer:
    """A GPU index the process does not have: the launcher's process count against the GPUs it lets the process see."""
    shown = _VISIBLE.search(ev.text)
    visible = len([d for d in shown.group(1).split(",") if d]) if shown and _DEVICES.fullmatch(shown.group(1)) else 0
    procs = _PROCESSES.search(ev.text)
    if visible and procs and int(procs.group(1)) > visible:
        return Answer("%s processes were launched, one GPU each by rank, but only %d GPU%s visible "
                      "(CUDA_VISIBLE_DEVICES=%s): rank %d and up ask for a device ordinal that does not exist" % (
                          procs.group(1), visible, " is" if visible == 1 else "s are", shown.group(1) if shown else "",
                          visible),
                      builds.one_process_per_gpu_fix(visible))
    where = " (CUDA_VISIBLE_DEVICES=%s shows it %d)" % (shown.group(1), visible) if visible and shown else ""
    return Answer("the program asked for a GPU index the process does not have%s: indices count from 0 over the "
                  "GPUs it sees" % where, builds.device_index_fix())


def started_without_gpus(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """A container the paste starts with `docker run` and no GPU request (--gpus, the NVIDIA runtime): `--device
    /dev/nvidia0` passes the device nodes but none of the host driver's libraries, so the CUDA runtime finds no
    libcuda and says the driver is too old or absent (nvidia-docker#24: driver 346.46 was new enough)."""
    if not (any(k in _NO_DRIVER_KINDS for k in ev.kinds()) or
            any(s.code.name in _NO_DRIVER_STATUSES for s in ev.statuses)):
        return None
    runs = [m.group(0) for m in _DOCKER_RUN.finditer(ev.text) if not re.match(r"docker\s+run\s+--help", m.group(0))]
    if not runs or GPU_FLAGS.search(ev.text) or DRIVER_REACHED.search(ev.text) or ev.drivers:
        return None
    devices = "; its --device flags pass the device nodes, not the driver's libraries" if "--device" in runs[0] else ""
    return Answer("most likely the container was started without the GPUs: the `docker run` line asks for no GPU (no "
                  "--gpus, no NVIDIA runtime%s), so the host driver's libcuda is not in the container and the CUDA "
                  "runtime reads that as no driver, or one too old (nothing in the text shows the driver was reached)"
                  % devices, container_gpu_fix())


# vLLM's own words (vllm/worker): "The model's max seq len (32768) is larger than the maximum number of tokens that
# can be stored in KV cache (7344)."
_KV_CACHE = re.compile(r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV "
                       r"cache \((\d+)\)")


# NGC's words for a GPU newer than the container release ("which is not yet supported in this version of the container")
_NOT_YET = re.compile(r"not yet supported")
# Kubernetes' words: a pod, the device plugin, a DaemonSet, kubectl
_POD = re.compile(r"device.plugin|kubectl|\bpods?\b|daemonset|k8s|kubelet|nvml with error", re.I)


def from_states(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The runtime state a named condition is, answered with check's own remedy for it."""
    if kind == "no-device":
        return _no_device(ev)
    if kind == "system-not-ready":
        return _not_ready(ev)
    if kind == "cudnn-internal-error":
        return _cudnn_handle(ev)
    if kind == "device-count-symbol-missing":
        return _driver_entry_missing(ev)
    if kind == "nvenc-api-too-new":
        return _nvenc(ev, compat)
    if kind == "invalid-device":
        return _invalid_device(ev)
    if kind == "container-gpu-unsupported":
        gpu = next((g.value for g in ev.facts.gpus), None)
        cc = gpu_cc(ev, compat)
        arch = compat.arch_for_cc(cc) if cc else None
        return Answer("the container release's CUDA and libraries do not support this GPU%s; its entry point "
                      "refuses it" % ((" (the %s%s)" % (gpu, (": %s, compute capability %s" % (arch.name, cc))
                                                        if arch else "")) if gpu else ""),
                      supported_gpu_or_release_fix(_NOT_YET.search(ev.text) is not None))
    if kind == "vllm-kv-cache":
        m = _KV_CACHE.search(ev.text)
        return Answer("vLLM's KV cache holds %s tokens in the GPU memory left after the model's weights, fewer than "
                      "the model's max seq len (%s)" % (m.group(2) if m else "fewer", m.group(1) if m else "its "
                      "context length"), kv_cache_fix(m.group(2) if m else None))
    if kind == "shm-permission":
        return Answer("/dev/shm is not writable by this user: NCCL's shm_open of its segment was refused (Permission "
                      "denied), which it reports as an unhandled system error; the folder's size is not the issue",
                      shm_mode_fix())
    if kind == "container-no-nvml" and (any(s.value == "container" for s in ev.facts.os) or _POD.search(ev.text)):
        return Answer("the program in the container found no libnvidia-ml.so.1: the node's container runtime did not "
                      "inject the driver's libraries (the NVIDIA runtime is not its default runtime, or the pod does not "
                      "ask for it), or the node has no driver", default_runtime_fix())
    if kind == "nvidia-smi-no-nvml":
        if ev.driver_platform == "container":  # the runtime mounted them; the container's loader cache missed them
            return Answer("the NVIDIA runtime put nvidia-smi and the driver's libraries into the container, but the "
                          "container's loader cache (ld.so.cache) does not list libnvidia-ml.so: the runtime's ldconfig "
                          "step failed", container_ldcache_fix())
        return Answer("nvidia-smi cannot load libnvidia-ml.so, the NVIDIA driver's NVML library: the driver's libraries "
                      "are not installed, or not where the loader looks", paste.driver_fix(None, ev.driver_platform))
    if kind == "container-no-nvml":  # on a host: the driver's own NVML library is not there
        return Answer("the program found no libnvidia-ml.so.1, the NVIDIA driver's NVML library: the driver is not "
                      "installed, or its libraries are not where the loader looks", paste.driver_fix(None, ev.driver_platform))
    return None
