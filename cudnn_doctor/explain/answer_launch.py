"""Answers for what launchers and serving stacks say of the GPU they were given, with the numbers their own words
carry: Triton's compute capability floor under torch.compile, bfloat16 on a GPU older than Ampere, PyTorch without
NCCL, a collective past its timeout, GPUs without peer access, vLLM's memory share, a kernel module the kernel refused,
a GPU off the bus, Kubernetes finding no free GPU, NVML refusing a call, TensorRT-LLM's MPI world size, an illegal
instruction. Pure: evidence and knowledge in."""
from __future__ import annotations

import re
from typing import Callable, Dict, Optional

from packaging.version import Version

from ..knowledge import Compat
from ..remedies import paste, paste_launch as launch
from .answer_facts import gpu_cc
from .answered import Answer, clause
from .evidence import Evidence

# torch/utils/_triton.py (and older torch/_dynamo): "Found NVIDIA GeForce GTX 1070 which is too old to be supported by
# the triton GPU compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but
# your device is of CUDA capability 6.1"
_TRITON_OLD = re.compile(r"Found (.{1,60}?) which is too old to be supported by the triton GPU compiler.{0,200}?"
                         r"Capability >= (\d+\.\d+), but your device is of CUDA capability (\d+\.\d+)", re.S)
# vLLM: "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute
# capability 7.5."
_BF16_FLOOR = re.compile(r"Bfloat16\s+is\s+only\s+supported\s+on\s+GPUs\s+with\s+compute\s+capability\s+of\s+at\s+"
                         r"least\s+(\d+\.\d+)\.\s+Your\s+(.{1,60}?)\s+GPU\s+has\s+compute\s+capability\s+(\d+\.\d+)", re.S)
# vLLM: "Free memory on device (67.24/79.25 GiB) on startup is less than desired GPU memory utilization (0.9, 71.33
# GiB)"
_VLLM_SHARE = re.compile(r"Free memory on device(?: \S{1,20})? \((\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) GiB\)\s+on\s+startup\s+is\s+"
                         r"less\s+than\s+desired\s+GPU\s+memory\s+utilization\s+\((\d(?:\.\d+)?),\s+(\d+(?:\.\d+)?) GiB\)")
# ProcessGroupNCCL: "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, ...,
# Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
_NCCL_TIMEOUT = re.compile(r"OpType=(\w+).{0,200}?Timeout\(ms\)=(\d+)", re.S)
_VLLM = re.compile(r"\bvllm\b", re.I)


def _triton_too_old(ev: Evidence, compat: Compat) -> Answer:
    m = _TRITON_OLD.search(ev.text)
    gpu, need, have = m.groups() if m else ("the GPU", "7.0", "?")
    return Answer("Triton, the compiler torch.compile's inductor backend uses, needs a GPU of compute capability %s or "
                  "newer, and %s is %s" % (need, gpu, have), launch.compile_off_fix(need))


def _bf16_too_old(ev: Evidence, compat: Compat) -> Optional[Answer]:
    m = _BF16_FLOOR.search(ev.text)
    if m is not None:
        need, gpu, have = m.groups()
        return Answer("bfloat16 needs a GPU of compute capability %s or newer, and the %s is %s" % (need, gpu, have),
                      launch.half_precision_fix(True))
    cc = gpu_cc(ev, compat)
    if cc is not None and Version(cc) >= Version("8.0"):  # an Ampere or newer GPU runs bfloat16: not this cause
        return None
    return Answer("cuBLAS has no bfloat16 (CUDA_R_16BF) matrix multiply for this GPU%s: bfloat16 runs natively from "
                  "compute capability 8.0 (Ampere) on" % (" (compute capability %s)" % cc if cc else ""),
                  launch.half_precision_fix(bool(_VLLM.search(ev.text))))


def _no_nccl(ev: Evidence, compat: Compat) -> Answer:
    where = {"windows": "on Windows", "macos": "on macOS"}.get(ev.platform, "")
    return Answer("this PyTorch build has no NCCL%s: PyTorch's Windows and macOS builds, and its CPU-only ones, ship "
                  "without it, so the nccl backend cannot start" % ((" (%s)" % where) if where else ""),
                  launch.gloo_backend_fix(linux=not where))


def _collective_timeout(ev: Evidence, compat: Compat) -> Answer:
    m = _NCCL_TIMEOUT.search(ev.text)
    what = "the %s collective" % m.group(1) if m else "a collective"
    after = " %d s" % (int(m.group(2)) // 1000) if m else ""
    return Answer("%s waited%s for a rank that never joined it: one process crashed, hangs (data loading, saving, an "
                  "uneven number of batches per rank) or cannot reach the others; NCCL's watchdog then stops the job"
                  % (what, after), launch.collective_timeout_fix())


def _no_peer_access(ev: Evidence, compat: Compat) -> Answer:
    return Answer("the two GPUs cannot read each other's memory directly (peer-to-peer, cudaErrorPeerAccessUnsupported): "
                  "GeForce cards have it turned off, and virtual machines often hide it, while NCCL or the program's "
                  "own all-reduce asked for it", launch.peer_access_fix(bool(_VLLM.search(ev.text))))


def _memory_share(ev: Evidence, compat: Compat) -> Answer:
    m = _VLLM_SHARE.search(ev.text)
    if m is None:
        return Answer("vLLM reserves a share of the GPU's memory that is not free", launch.memory_share_fix(None))
    free, total, asked, wanted = m.groups()
    share = int(float(free) / float(total) * 100 - 1) / 100.0  # a point under the free share, for vLLM's own context
    return Answer("vLLM reserves %s of the GPU's %s GiB (%s GiB) and only %s GiB are free: other processes hold the "
                  "rest (or, where it is a few hundred MiB, CUDA's own context)" % (asked, total, wanted, free),
                  launch.memory_share_fix("%.2f" % share if share >= 0.1 else None))


def _module_refused(ev: Evidence, compat: Compat) -> Answer:
    return Answer("the driver's installer built the nvidia kernel module and the kernel refused to load it: Secure "
                  "Boot without its signing key enrolled, nouveau holding the GPU, or a GPU this driver release does "
                  "not support", launch.kernel_module_refused_fix())


# The kernel's line names the GPU by its PCI bus id: "NVRM: The NVIDIA GPU 0000:b3:00.0 ... fallen off the bus"
_BUS_ID = re.compile(r"NVIDIA GPU ([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")


def _off_the_bus(ev: Evidence, compat: Compat) -> Answer:
    bus = _BUS_ID.search(ev.text)
    return Answer("the GPU%s stopped answering on the PCIe bus (Xid 79, 'fallen off the bus'): power, heat, the slot "
                  "or the card itself; the driver cannot use it again until it is reset" % (
                      " at %s" % bus.group(1) if bus else ""), launch.gpu_off_the_bus_fix(bus.group(1) if bus else None))


def _no_gpu_node(ev: Evidence, compat: Compat) -> Answer:
    return Answer("Kubernetes finds no node with a free nvidia.com/gpu: the NVIDIA device plugin does not advertise "
                  "the GPUs (not running, or finding none through the node's container runtime), or they are all "
                  "taken", launch.device_plugin_fix())


def _nvml_permission(ev: Evidence, compat: Compat) -> Answer:
    return Answer("NVML refused the call for lack of permission: a setting only root may change, or, on a GPU split "
                  "into MIG instances, a whole-GPU query from a process that sees one instance",
                  launch.nvml_permission_fix())


def _mpi_world(ev: Evidence, compat: Compat) -> Answer:
    return Answer("TensorRT-LLM's engine was built for tensor parallel times pipeline parallel ranks (tp * pp) and was "
                  "started with another number of MPI processes", launch.mpi_world_fix())


def _illegal_instruction(ev: Evidence, compat: Compat) -> Answer:
    return Answer("the process died of SIGILL (signal 4, illegal instruction): the CPU lacks an instruction set the "
                  "build was compiled for (AVX, AVX2 or AVX-512), an old CPU or a virtual machine that hides them",
                  launch.cpu_instructions_fix())


def _symptom_says(kind: str, compat: Compat) -> str:
    """The symptom row's meaning (compat/symptoms.toml) as a cause, where it says all there is: as a status row's
    diagnosis is said (answer_tools' devices-busy), a sentence's first capital lowered and its full stop dropped."""
    return clause(next(s.meaning for s in compat.symptoms() if s.id == kind))


def _vgpu_unlicensed(ev: Evidence, compat: Compat) -> Answer:
    return Answer(_symptom_says("vgpu-unlicensed", compat), launch.vgpu_licence_fix())


def _singularity_no_nv(ev: Evidence, compat: Compat) -> Answer:
    return Answer(_symptom_says("singularity-no-nv", compat), launch.singularity_nv_fix())


def _slurm_gres(ev: Evidence, compat: Compat) -> Answer:
    mig = "MIG mode is enabled" in ev.text
    return Answer("Slurm's GPU detection (AutoDetect=nvml) cannot describe the GPUs: %s" % (
        "MIG mode is on and no MIG instances exist" if mig else "this slurmd was built without NVML"),
        launch.slurm_gres_fix(mig))


def _cudagraph_overwritten(ev: Evidence, compat: Compat) -> Answer:
    return Answer("torch.compile's reduce-overhead mode replays a CUDA graph into the same output memory, and an "
                  "output kept from an earlier step was overwritten by the next replay", launch.cudagraph_outputs_fix())


def _cudagraph_skipped(ev: Evidence, compat: Compat) -> Answer:
    return Answer("a warning, not an error: torch.compile ran this graph without CUDA graphs (the reason follows it: "
                  "an input on the CPU, a mutated input, dynamic shapes); it runs correctly, only without that "
                  "speed-up", paste.harmless(), False)


def _xla_older_driver(ev: Evidence, compat: Compat) -> Answer:
    return Answer("a warning, not an error: the driver's CUDA is older than the ptxas XLA compiles with, so XLA "
                  "compiles without parallelism (slower); a newer driver lifts it", paste.harmless(), False)


def _dkms_build(ev: Evidence, compat: Compat) -> Answer:
    return Answer("DKMS could not build the NVIDIA kernel module for this kernel: its headers are missing or of "
                  "another release, the compiler differs from the kernel's, or the kernel is newer than the driver "
                  "branch supports", launch.dkms_build_fix())


def _fabric_manager_idle(ev: Evidence, compat: Compat) -> Answer:
    return Answer(_symptom_says("fabric-manager-nothing-to-do", compat), launch.fabric_manager_off_fix())


def _gpu_thermal(ev: Evidence, compat: Compat) -> Answer:
    return Answer(_symptom_says("gpu-thermal", compat), launch.cooling_fix())


def _nccl_ib(ev: Evidence, compat: Compat) -> Answer:
    return Answer("NCCL's InfiniBand/RoCE connection between the nodes failed: for RoCE the GID index or the route "
                  "between the ports, a firewall, or GPUDirect RDMA on the path", launch.nccl_ib_fix())


def _torch_device_index(ev: Evidence, compat: Compat) -> Answer:
    mig = bool(re.search(r"\bMIG\b", ev.text))
    return Answer("PyTorch was asked for a GPU index it does not have%s" % (
        ": on a GPU split into MIG instances a process sees only one instance, device 0" if mig else ""),
        launch.mig_device_fix())


def _trt_no_tactic(ev: Evidence, compat: Compat) -> Answer:
    return Answer("TensorRT's builder found no tactic for a layer: most often its workspace (memory pool) was too "
                  "small for every one, else this TensorRT does not support the layer on this GPU",
                  launch.trt_workspace_fix())


# Each named condition's answer, by its kind: the id of the symptom the paste matched (compat/symptoms.toml).
_ANSWERS: Dict[str, Callable[[Evidence, Compat], Optional[Answer]]] = {
    "nvml-no-permission": _nvml_permission,
    "trtllm-world-size": _mpi_world,
    "cpu-illegal-instruction": _illegal_instruction,
    "triton-gpu-too-old": _triton_too_old,
    "bf16-gpu-too-old": _bf16_too_old,
    "nccl-not-built": _no_nccl,
    "nccl-collective-timeout": _collective_timeout,
    "peer-access-unsupported": _no_peer_access,
    "vllm-memory-share": _memory_share,
    "kernel-module-refused": _module_refused,
    "gpu-off-the-bus": _off_the_bus,
    "k8s-no-free-gpu": _no_gpu_node,
    "vgpu-unlicensed": _vgpu_unlicensed,
    "singularity-no-nv": _singularity_no_nv,
    "slurm-gres-gpu": _slurm_gres,
    "cudagraph-output-overwritten": _cudagraph_overwritten,
    "cudagraph-skipped": _cudagraph_skipped,
    "xla-driver-older-than-ptxas": _xla_older_driver,
    "dkms-build-failed": _dkms_build,
    "fabric-manager-nothing-to-do": _fabric_manager_idle,
    "gpu-thermal": _gpu_thermal,
    "nccl-ib-connection": _nccl_ib,
    "torch-device-assert": _torch_device_index,
    "trt-no-implementation": _trt_no_tactic,
}


def from_launch(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The answer for one of these named conditions, else None."""
    answer = _ANSWERS.get(kind)
    return answer(ev, compat) if answer is not None else None
