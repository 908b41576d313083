"""CD2xx: the GPUs: architecture support by frameworks, cuDNN and toolkits; compute mode, MIG, memory."""
from __future__ import annotations

from typing import List, Optional

from ..knowledge import Compat
from ..versions import major_of, mm, release3
from ..model import Facts, Finding, Fix
from ..remedies import advice, or_else, run, say, then
from . import archs, rule
from ..queries import (best_torch_variant, cc_below, driver_cuda, framework_kind, gpu_label, gpus_with_cc, jax_choice,
    used_copies, visible_gpus)
from ..remedies import driver_upgrade_fix, toolkit_install_fix, torch_install
from .common import ERROR, INFO, WARNING, compat_of, finding


def _newest_cudnn_for_cc(compat: Compat, cc: str, cuda_major: Optional[int]) -> Optional[str]:
    """The newest cuDNN release whose confirmed minimum compute capability still covers `cc`."""
    best = None
    for b in compat.cudnn_builds():
        if b.min_cc is None or not b.min_cc.known or cc_below(cc, b.min_cc.low):
            continue
        if cuda_major is not None and b.cuda_major != cuda_major:
            continue
        if best is None or release3(b.last) > release3(best.last):
            best = b
    return best.last if best else None


def _newer_of(first: str, driver: Optional[str]) -> str:
    """The CUDA to install for a GPU first supported in `first`: the driver's own CUDA when that is newer."""
    return driver if driver and mm(driver) and mm(first) and mm(driver) > mm(first) else first


@rule("CD201", "gpu-arch-not-in-framework-build", "Framework build has no code for this GPU")
def framework_arch(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    gpus = gpus_with_cc(facts)
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
                    "CD201", INFO, "Cannot tell which GPU architectures torch %s (CUDA %s) was built for" % (
                        fw.version, fw.cuda_version),
                    detail="compat/frameworks.toml has no architecture list for this build, so the 'no kernel "
                           "image is available' check is skipped.",
                    evidence={"framework": fw.name, "version": fw.version, "cuda": fw.cuda_version}))
                continue
            for gpu in gpus:
                if compat.sass_runs(row["arch"], row.get("ptx"), gpu.compute_capability):
                    continue
                better = best_torch_variant(facts, compat, fw.version)
                fix = (torch_install(better["torch"] if better else fw.version, better["cuda"]) if better else
                       advice("Build PyTorch from source with TORCH_CUDA_ARCH_LIST=%s, or use a GPU of compute "
                              "capability %s-%s." % (gpu.compute_capability, row["arch"][0], row["arch"][-1])))
                out.append(finding(
                    "CD201", ERROR, "torch %s has no kernels for %s" % (fw.version, gpu_label(gpu)),
                    detail="The wheel carries code for compute capabilities %s%s only; every CUDA kernel fails with "
                           "'no kernel image is available for execution on the device' [%s, %s]." % (
                               ", ".join(row["arch"]), (" (+PTX %s)" % row["ptx"]) if row.get("ptx") else "",
                               row["source"], row["status"]),
                    fix=fix, evidence={"framework": fw.name, "version": fw.version, "arch_list": row["arch"],
                                       "ptx": row.get("ptx"), "gpu": gpu.name, "cc": gpu.compute_capability},
                    catalogue=["B1"]))
        elif kind == "jax":
            row = next((r for r in compat.framework_rows("jax")
                        if major_of(r.get("built_cuda")) == major_of(fw.cuda_version)), None)
            for gpu in gpus:
                if row and cc_below(gpu.compute_capability, row["min_cc"]):
                    # Another CUDA extra of JAX whose minimum GPU this one meets (compat's JAX table).
                    other, why = jax_choice(facts, compat)
                    if other is not None and other["extra"] != row["extra"] and not any(
                            "compute capability" in w for w in why):
                        fix = or_else(run('pip install -U "jax[%s]"' % other["extra"]), "JAX's %s wheels support "
                                      "SM %s+" % (other["extra"], other["min_cc"]), "%s   (%s)")
                        if why:
                            fix = then(driver_upgrade_fix("the R%s branch or later" % other["driver_linux"]), fix)
                    else:
                        fix = advice("No JAX CUDA build in compat supports compute capability %s: run JAX on CPU "
                                     "(pip install -U jax) or on a GPU of compute capability %s or newer" % (
                                         gpu.compute_capability, row["min_cc"]))
                    out.append(finding(
                        "CD201", ERROR, "%s needs compute capability %s or newer; %s" % (
                            fw.name, row["min_cc"], gpu_label(gpu)),
                        detail="JAX's %s wheels support SM %s+ [%s]." % (row["extra"], row["min_cc"], row["source"]),
                        fix=fix,
                        evidence={"framework": fw.name, "gpu": gpu.name, "cc": gpu.compute_capability},
                        catalogue=["B1", "B2"]))
        elif kind == "tensorflow":
            floor = compat.framework_table("tensorflow_pip").get("min_cc")
            for gpu in gpus:
                if floor and cc_below(gpu.compute_capability, floor):
                    out.append(finding(
                        "CD201", ERROR, "TensorFlow needs compute capability %s or newer; %s" % (floor, gpu_label(gpu)),
                        detail="TensorFlow ignores the GPU ('minimum required Cuda capability is %s') [%s]." % (
                            floor, compat.framework_table("tensorflow_pip").get("source")),
                        fix="Run TensorFlow on CPU or on a GPU of compute capability %s or newer." % floor,
                        evidence={"framework": fw.name, "cc": gpu.compute_capability}, catalogue=["B2"]))
    return out


@rule("CD202", "gpu-too-old-for-cudnn", "GPU older than the cuDNN build supports")
def cudnn_arch(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for copy in facts.cudnn:
        if not copy.version:
            continue
        floor = compat.cudnn_min_cc(copy.version, copy.cuda_version)
        if floor is None:
            continue
        for gpu in gpus_with_cc(facts):
            cc = gpu.compute_capability
            if cc_below(cc, floor.low):
                cuda_major = int(copy.cuda_version.split(".")[0]) if copy.cuda_version else None
                older = _newest_cudnn_for_cc(compat, cc, cuda_major) or _newest_cudnn_for_cc(compat, cc, None)
                out.append(finding(
                    "CD202", ERROR if copy in used_copies(facts) or not used_copies(facts) else WARNING,
                    "cuDNN %s does not support %s (needs %s or newer)" % (copy.version, gpu_label(gpu), floor.low),
                    detail="cuDNN fails with CUDNN_STATUS_ARCH_MISMATCH or 'DNN library initialization failed' on "
                           "GPUs below its minimum compute capability [%s, %s]." % (floor.source, floor.status),
                    fix=("Install cuDNN %s or older (the newest release in compat that still supports compute "
                         "capability %s), run on CPU, or use a newer GPU." % (older, cc)) if older else
                        "Use a cuDNN release that supports compute capability %s, or a newer GPU." % cc,
                    evidence={"cudnn": copy.version, "path": copy.path, "min_cc": floor.low, "cc": cc},
                    catalogue=["B2"]))
            elif not floor.known and cc_below(cc, floor.high):
                out.append(finding(
                    "CD202", INFO, "Cannot tell whether cuDNN %s supports %s" % (copy.version, gpu_label(gpu)),
                    detail="Its lowest supported compute capability is between %s and %s; the exact value is not "
                           "confirmed [%s]." % (floor.low, floor.high, floor.source),
                    evidence={"cudnn": copy.version, "cc": cc, "range": [floor.low, floor.high]}, catalogue=["B2"]))
    return out


@rule("CD203", "gpu-too-old-for-toolkit", "GPU older than the CUDA toolkit supports")
def toolkit_too_new(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for tk in facts.toolkits:
        if not tk.version or tk.dangling:
            continue
        floor = compat.cuda_min_cc(tk.version)
        if floor is None:
            continue
        for gpu in gpus_with_cc(facts):
            if not cc_below(gpu.compute_capability, floor.low):
                continue
            arch = compat.arch_for_cc(gpu.compute_capability)
            last = arch.last_cuda if arch and arch.last_cuda else None
            out.append(finding(
                "CD203", ERROR, "CUDA %s at %s no longer supports %s" % (tk.version, tk.path, gpu_label(gpu)),
                detail="CUDA %s.x compiles for and ships libraries for compute capability %s and newer only "
                       "[%s]." % (tk.version.split(".")[0], floor.low, floor.source),
                fix=say("Install CUDA %s (the last release for %s GPUs), e.g. `%s`, and point /usr/local/cuda at "
                        "it.", last, arch.name, toolkit_install_fix(facts, compat, last)) if last else
                    "Install an older CUDA toolkit that still supports compute capability %s." % gpu.compute_capability,
                evidence={"toolkit": tk.version, "path": tk.path, "cc": gpu.compute_capability, "min_cc": floor.low},
                catalogue=["B2"]))
    return out


@rule("CD204", "gpu-newer-than-toolkit", "GPU newer than the CUDA toolkit knows")
def toolkit_too_old(facts: Facts, ctx) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for tk in facts.toolkits:
        if not tk.version or tk.dangling or tk.kind == "pip":
            continue
        for gpu in gpus_with_cc(facts):
            first = compat.first_cuda_for_cc(gpu.compute_capability)
            if first and mm(tk.version) and mm(first) and mm(tk.version) < mm(first):
                out.append(finding(
                    "CD204", WARNING, "CUDA %s predates %s (first supported in CUDA %s)" % (
                        tk.version, gpu_label(gpu), first),
                    detail="nvcc from this toolkit cannot generate code for the GPU and its libraries carry no kernels "
                           "for it; programs built with it fail with 'no kernel image is available' unless they "
                           "ship PTX [%s]." % compat.architectures_source(),
                    fix=say("Install CUDA %s or newer (e.g. `%s`).", first,
                            toolkit_install_fix(facts, compat, _newer_of(first, driver_cuda(facts, compat)))),
                    evidence={"toolkit": tk.version, "path": tk.path, "cc": gpu.compute_capability},
                    catalogue=["B1"]))
    return out


@rule("CD205", "gpu-compute-mode", "GPU compute mode refuses new processes")
def compute_mode(facts: Facts, ctx) -> List[Finding]:
    out: List[Finding] = []
    for gpu in visible_gpus(facts):
        mode = (gpu.compute_mode or "").lower()
        busy = (gpu.running_processes or 0) > 0
        if mode == "prohibited" or (mode.startswith("exclusive") and busy):
            out.append(finding(
                "CD205", ERROR if mode == "prohibited" or len(visible_gpus(facts)) == 1 else WARNING,
                "GPU %d is in %s compute mode%s" % (gpu.index, mode.upper(), " and already in use" if busy else ""),
                detail="New CUDA contexts fail with 'all CUDA-capable devices are busy or unavailable' (error 46).",
                fix=_exclusive_fix(facts, gpu),
                evidence={"gpu": gpu.index, "compute_mode": gpu.compute_mode, "processes": gpu.running_processes},
                catalogue=["B3"]))
    return out


def _exclusive_fix(facts: Facts, gpu) -> Fix:
    """Another visible GPU that is free, else stop the holder, else reset the compute mode (as root)."""
    free = [g.index for g in visible_gpus(facts) if g is not gpu and (g.compute_mode or "default").lower() == "default"
            and not g.running_processes]
    reset = "sudo nvidia-smi -i %d -c DEFAULT" % gpu.index
    other = ("Use another GPU (export CUDA_VISIBLE_DEVICES=%d), stop" % free[0]) if free else "Stop"
    return run(reset, text="%s the process holding it (`nvidia-smi` lists it), or, as root: %s" % (other, reset),
               manual="%s the process holding it (`nvidia-smi` lists it)" % other)


@rule("CD206", "mig-misconfigured", "MIG enabled without usable instances")
def mig(facts: Facts, ctx) -> List[Finding]:
    out: List[Finding] = []
    cvd = facts.visibility.cuda_visible_devices
    for gpu in visible_gpus(facts):  # a GPU CUDA_VISIBLE_DEVICES hides cannot fail a CUDA program
        if not gpu.mig_mode:
            continue
        if not gpu.mig_devices:
            out.append(finding(
                "CD206", ERROR, "MIG is enabled on GPU %d but no MIG instances exist" % gpu.index,
                detail="With MIG on, CUDA can only use MIG instances; with none created it reports "
                       "CUDA_ERROR_NO_DEVICE although nvidia-smi lists the GPU.",
                # Profile 0 is the whole-GPU instance on every MIG-capable GPU (7g on A100/H100, 4g on A30).
                fix=or_else(run("sudo nvidia-smi mig -i %d -cgi 0 -C" % gpu.index, text="Create an instance: `sudo "
                                "nvidia-smi mig -i %d -cgi 0 -C` (profile 0 spans the whole GPU; `sudo nvidia-smi mig "
                                "-i %d -lgip` lists the smaller ones)" % (gpu.index, gpu.index)),
                            "sudo nvidia-smi -i %d -mig 0" % gpu.index, "%s, or turn MIG off: %s"),
                evidence={"gpu": gpu.index, "name": gpu.name}, catalogue=["B4"]))
        elif cvd is None or not any(t.strip().startswith("MIG-") for t in cvd.split(",")):
            out.append(finding(
                "CD206", INFO, "GPU %d is split into %d MIG instances; CUDA uses one per process" % (
                    gpu.index, len(gpu.mig_devices)),
                detail="Select the instance a process gets with its MIG UUID.",
                fix=run("export CUDA_VISIBLE_DEVICES=%s" % gpu.mig_devices[0]),
                evidence={"gpu": gpu.index, "mig_devices": gpu.mig_devices, "CUDA_VISIBLE_DEVICES": cvd},
                catalogue=["B4"]))
    return out


@rule("CD207", "gpu-memory-low", "GPU memory nearly full")
def memory(facts: Facts, ctx) -> List[Finding]:
    out: List[Finding] = []
    for gpu in visible_gpus(facts):
        total, free = gpu.memory_total_mib, gpu.memory_free_mib
        if not total or free is None:
            continue
        # cuDNN needs memory for its handle and workspaces; a GPU other processes filled fails at handle creation.
        if free < total * 0.10:
            out.append(finding(
                "CD207", WARNING, "GPU %d has only %d MiB of %d MiB free" % (gpu.index, free, total),
                detail="cuDNN handle creation and convolution workspaces then fail with CUDNN_STATUS_INTERNAL_ERROR, "
                       "CUDNN_STATUS_NOT_INITIALIZED or 'Failed to get convolution algorithm'.",
                fix="Free the GPU (`nvidia-smi` lists the processes holding it) or pick another one; stop frameworks "
                    "from grabbing all memory: export TF_FORCE_GPU_ALLOW_GROWTH=true (TensorFlow), "
                    "export XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX).",
                evidence={"gpu": gpu.index, "free_mib": free, "total_mib": total,
                          "processes": gpu.running_processes},
                catalogue=["B5", "E4"]))
    return out
