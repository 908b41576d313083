"""CD2xx: the GPUs: architecture support by frameworks, cuDNN and toolkits; compute mode, MIG, memory."""
from __future__ import annotations

from typing import List, Optional

from ..knowledge import Compat, CudnnBuild
from ..versions import major_of, mm_before, release3_of
from ..model import Facts, Finding, GpuFacts
from . import RuleContext, archs, rule
from ..queries import (best_torch_variant, cc_below, driver_cuda, framework_kind, gpu_groups, gpu_label, jax_choice,
                       known_cc, platform_of, used_copies, visible_gpus)
from ..remedies import torch_install
from ..remedies.gpu import (create_mig_instance_fix, cuda_visible_devices_fix, exclusive_gpu_fix,
                            jax_build_for_gpu_fix, jax_on_cpu_fix, last_toolkit_for_gpu_fix, newer_toolkit_for_gpu_fix,
                            torch_source_build_fix)
from ..remedies.targets import (free_gpu_memory_fix, older_cudnn_for_gpu_fix, older_toolkit_for_gpu_fix,
                               tensorflow_cpu_or_newer_gpu_fix)
from .common import ERROR, INFO, WARNING, compat_of, finding


def _newest_cudnn_for_cc(compat: Compat, cc: str, cuda_major: Optional[int]) -> Optional[str]:
    """The newest cuDNN release whose confirmed minimum compute capability still covers `cc`."""
    best: Optional[CudnnBuild] = None
    for b in compat.cudnn_builds():
        if b.min_cc is None or not b.min_cc.known or cc_below(cc, b.min_cc.low):
            continue
        if cuda_major is not None and b.cuda_major != cuda_major:
            continue
        if best is None or release3_of(b.last) > release3_of(best.last):
            best = b
    return best.last if best else None


def _newer_of(first: str, driver: Optional[str]) -> str:
    """The CUDA to install for a GPU first supported in `first`: the driver's own CUDA when that is newer."""
    return driver if driver and mm_before(first, driver) else first


@rule("CD201", "gpu-arch-not-in-framework-build", "Framework build has no code for this GPU", section="gpus")
def framework_arch(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    gpus = gpu_groups(facts)  # one finding per group of identical GPUs, not one per GPU
    if not gpus:
        return out
    for fw in facts.python.frameworks:
        kind = framework_kind(fw)
        if fw.cuda_build is not False and any(e.get("sass") or e.get("ptx") for e in fw.gpu_code):
            out += archs.judge(facts, compat, fw, gpus)  # the binaries themselves beat any table
            continue
        if not fw.cuda_build or not fw.cuda_version:
            continue
        if kind == "torch":
            row = compat.pytorch_arch(fw.version, fw.cuda_version)
            if row is None:
                out.append(finding(
                    INFO, "Cannot tell which GPU architectures torch %s (CUDA %s) was built for" % (
                        fw.version, fw.cuda_version),
                    detail="compat/frameworks.toml has no architecture list for this build, so the 'no kernel "
                           "image is available' check is skipped.",
                    evidence={"framework": fw.name, "version": fw.version, "cuda": fw.cuda_version}))
                continue
            for gpu in gpus:
                if compat.sass_runs(row["arch"], row.get("ptx"), known_cc(gpu)):
                    continue
                better = best_torch_variant(facts, compat, fw.version, site=fw.location)
                fix = (torch_install(compat, better["torch"] if better else fw.version, better["cuda"]) if better else
                       torch_source_build_fix(known_cc(gpu), row["arch"][0], row["arch"][-1]))
                out.append(finding(
                    ERROR, "torch %s has no kernels for %s" % (fw.version, gpu_label(gpu)),
                    detail="The wheel carries code for compute capabilities %s%s only; every CUDA kernel fails with "
                           "'no kernel image is available for execution on the device' [%s, %s]." % (
                               ", ".join(row["arch"]), (" (+PTX %s)" % row["ptx"]) if row.get("ptx") else "",
                               row["source"], row["status"]),
                    remedy=fix, evidence={"framework": fw.name, "version": fw.version, "arch_list": row["arch"],
                                       "ptx": row.get("ptx"), "gpu": gpu.name, "cc": known_cc(gpu)},
                    catalogue=["B1"]))
        elif kind == "jax":
            row = next((r for r in compat.framework_rows("jax")
                        if major_of(r.get("built_cuda")) == major_of(fw.cuda_version)), None)
            for gpu in gpus:
                if row and cc_below(known_cc(gpu), row["min_cc"]):
                    # Another CUDA extra of JAX whose minimum GPU this one meets (compat's JAX table).
                    other, why = jax_choice(facts, compat)
                    if other is not None and other["extra"] != row["extra"] and not any(
                            "compute capability" in w for w in why):
                        fix = jax_build_for_gpu_fix(other, bool(why), platform_of(facts))
                    else:
                        fix = jax_on_cpu_fix(known_cc(gpu), row["min_cc"])
                    out.append(finding(
                        ERROR, "%s needs compute capability %s or newer; %s" % (
                            fw.name, row["min_cc"], gpu_label(gpu)),
                        detail="JAX's %s wheels support SM %s+ [%s]." % (row["extra"], row["min_cc"], row["source"]),
                        remedy=fix,
                        evidence={"framework": fw.name, "gpu": gpu.name, "cc": known_cc(gpu)},
                        catalogue=["B1", "B2"]))
        elif kind == "tensorflow":
            floor = compat.tensorflow_min_cc()
            for gpu in gpus:
                if floor and cc_below(known_cc(gpu), floor):
                    out.append(finding(
                        ERROR, "TensorFlow needs compute capability %s or newer; %s" % (floor, gpu_label(gpu)),
                        detail="TensorFlow ignores the GPU ('minimum required Cuda capability is %s') [%s]." % (
                            floor, compat.framework_source("tensorflow_pip")),
                        remedy=tensorflow_cpu_or_newer_gpu_fix(floor),
                        evidence={"framework": fw.name, "cc": known_cc(gpu)}, catalogue=["B2"]))
    return out


@rule("CD202", "gpu-too-old-for-cudnn", "GPU older than the cuDNN build supports", section="gpus")
def cudnn_arch(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for copy in facts.cudnn:
        if not copy.version:
            continue
        floor = compat.cudnn_min_cc(copy.version, copy.cuda_version)
        if floor is None:
            continue
        for gpu in gpu_groups(facts):
            cc = known_cc(gpu)
            if cc_below(cc, floor.low):
                cuda_major = int(copy.cuda_version.split(".")[0]) if copy.cuda_version else None
                older = _newest_cudnn_for_cc(compat, cc, cuda_major) or _newest_cudnn_for_cc(compat, cc, None)
                out.append(finding(
                    ERROR if copy in used_copies(facts) or not used_copies(facts) else WARNING,
                    "cuDNN %s does not support %s (needs %s or newer)" % (copy.version, gpu_label(gpu), floor.low),
                    detail="cuDNN fails with CUDNN_STATUS_ARCH_MISMATCH or 'DNN library initialization failed' on "
                           "GPUs below its minimum compute capability [%s, %s]." % (floor.source, floor.status),
                    remedy=older_cudnn_for_gpu_fix(older, cc),
                    evidence={"cudnn": copy.version, "path": copy.path, "min_cc": floor.low, "cc": cc},
                    catalogue=["B2"]))
            elif not floor.known and cc_below(cc, floor.high):
                out.append(finding(
                    INFO, "Cannot tell whether cuDNN %s supports %s" % (copy.version, gpu_label(gpu)),
                    detail="Its lowest supported compute capability is between %s and %s; the exact value is not "
                           "confirmed [%s]." % (floor.low, floor.high, floor.source),
                    evidence={"cudnn": copy.version, "cc": cc, "range": [floor.low, floor.high]}, catalogue=["B2"]))
    return out


@rule("CD203", "gpu-too-old-for-toolkit", "GPU older than the CUDA toolkit supports", section="gpus")
def toolkit_too_new(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for tk in facts.toolkits:
        if not tk.version or tk.dangling:
            continue
        floor = compat.cuda_min_cc(tk.version)
        if floor is None:
            continue
        for gpu in gpu_groups(facts):
            if not cc_below(known_cc(gpu), floor.low):
                continue
            arch = compat.arch_for_cc(known_cc(gpu))
            out.append(finding(
                ERROR, "CUDA %s at %s no longer supports %s" % (tk.version, tk.path, gpu_label(gpu)),
                detail="CUDA %s.x compiles for and ships libraries for compute capability %s and newer only "
                       "[%s]." % (tk.version.split(".")[0], floor.low, floor.source),
                remedy=last_toolkit_for_gpu_fix(facts, compat, arch.last_cuda, arch.name) if arch and arch.last_cuda
                else older_toolkit_for_gpu_fix(known_cc(gpu)),
                evidence={"toolkit": tk.version, "path": tk.path, "cc": known_cc(gpu), "min_cc": floor.low},
                catalogue=["B2"]))
    return out


@rule("CD204", "gpu-newer-than-toolkit", "GPU newer than the CUDA toolkit knows", section="gpus")
def toolkit_too_old(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for tk in facts.toolkits:
        if not tk.version or tk.dangling or tk.kind == "pip":
            continue
        for gpu in gpu_groups(facts):
            first = compat.first_cuda_for_cc(known_cc(gpu))
            if first and mm_before(tk.version, first):
                out.append(finding(
                    WARNING, "CUDA %s predates %s (first supported in CUDA %s)" % (
                        tk.version, gpu_label(gpu), first),
                    detail="nvcc from this toolkit cannot generate code for the GPU and its libraries carry no kernels "
                           "for it; programs built with it fail with 'no kernel image is available' unless they "
                           "ship PTX [%s]." % compat.architectures_source(),
                    remedy=newer_toolkit_for_gpu_fix(facts, compat, first,
                                                     _newer_of(first, driver_cuda(facts, compat))),
                    evidence={"toolkit": tk.version, "path": tk.path, "cc": known_cc(gpu)},
                    catalogue=["B1"]))
    return out


@rule("CD205", "gpu-compute-mode", "GPU compute mode refuses new processes", section="gpus")
def compute_mode(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for gpu in visible_gpus(facts):
        mode = (gpu.compute_mode or "").lower()
        busy = (gpu.running_processes or 0) > 0
        if mode == "prohibited" or (mode.startswith("exclusive") and busy):
            out.append(finding(
                ERROR if mode == "prohibited" or len(visible_gpus(facts)) == 1 else WARNING,
                "GPU %d is in %s compute mode%s" % (gpu.index, mode.upper(), " and already in use" if busy else ""),
                detail="New CUDA contexts fail with 'all CUDA-capable devices are busy or unavailable' (error 46).",
                remedy=exclusive_gpu_fix(gpu.index, _free_gpu(facts, gpu)),
                evidence={"gpu": gpu.index, "compute_mode": gpu.compute_mode, "processes": gpu.running_processes},
                catalogue=["B3"]))
    return out


def _free_gpu(facts: Facts, gpu: GpuFacts) -> Optional[int]:
    """The index of another visible GPU in default compute mode that runs nothing (where the busy one's work can go)."""
    free = [g.index for g in visible_gpus(facts) if g is not gpu and (g.compute_mode or "default").lower() == "default"
            and not g.running_processes]
    return free[0] if free else None


@rule("CD206", "mig-misconfigured", "MIG enabled without usable instances", section="gpus")
def mig(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    cvd = facts.visibility.cuda_visible_devices
    for gpu in visible_gpus(facts):  # a GPU CUDA_VISIBLE_DEVICES hides cannot fail a CUDA program
        if not gpu.mig_mode:
            continue
        if not gpu.mig_devices:
            out.append(finding(
                ERROR, "MIG is enabled on GPU %d but no MIG instances exist" % gpu.index,
                detail="With MIG on, CUDA can only use MIG instances; with none created it reports "
                       "CUDA_ERROR_NO_DEVICE although nvidia-smi lists the GPU.",
                remedy=create_mig_instance_fix(gpu.index),
                evidence={"gpu": gpu.index, "name": gpu.name}, catalogue=["B4"]))
        elif cvd is None or not any(t.strip().startswith("MIG-") for t in cvd.split(",")):
            out.append(finding(
                INFO, "GPU %d is split into %d MIG instances; CUDA uses one per process" % (
                    gpu.index, len(gpu.mig_devices)),
                detail="Select the instance a process gets with its MIG UUID.",
                remedy=cuda_visible_devices_fix(gpu.mig_devices[0]),
                evidence={"gpu": gpu.index, "mig_devices": gpu.mig_devices, "CUDA_VISIBLE_DEVICES": cvd},
                catalogue=["B4"]))
    return out


@rule("CD207", "gpu-memory-low", "GPU memory nearly full", section="gpus")
def memory(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for gpu in visible_gpus(facts):
        total, free = gpu.memory_total_mib, gpu.memory_free_mib
        if not total or free is None:
            continue
        # cuDNN needs memory for its handle and workspaces; a GPU other processes filled fails at handle creation.
        if free < total * 0.10:
            out.append(finding(
                WARNING, "GPU %d has only %d MiB of %d MiB free" % (gpu.index, free, total),
                detail="cuDNN handle creation and convolution workspaces then fail with CUDNN_STATUS_INTERNAL_ERROR, "
                       "CUDNN_STATUS_NOT_INITIALIZED or 'Failed to get convolution algorithm'.",
                remedy=free_gpu_memory_fix(),
                evidence={"gpu": gpu.index, "free_mib": free, "total_mib": total,
                          "processes": gpu.running_processes},
                catalogue=["B5", "E4"]))
    return out
