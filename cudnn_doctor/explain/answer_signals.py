"""Answers from the named conditions a paste shows (containers, architecture, suspend, XLA, TensorRT, harmless
lines) and from the status codes it names, when no loader failure or version check decides it."""
from __future__ import annotations

import re
from typing import Dict, Optional

from ..knowledge import Compat
from ..model import Fix
from ..remedies import paste, paste_runtime as rt
from ..remedies.catalogue import platform_row, table_fix
from ..remedies.driver import mismatched_driver_fix, uvm_reload_fix
from ..remedies.containers import (container_driver_files_fix, container_gpu_fix, container_toolkit_fix,
                                   container_toolkit_upgrade_fix, wsl_adapters_fix)
from ..remedies.paste_tools import (build_or_memory_fix, llvm_program_fix, memory_or_compute_cache_fix,
                                    nvrtc_builtins_fix, nvrtc_builtins_link_fix)
from ..remedies.paste_answers import (BUILDS_FOR_CUDA, driver_or_container_fix, driver_or_framework_build_fix,
                                      framework_build_for_cuda_fix, framework_build_for_gpu_fix, with_python_note)
from ..versions import major_of
from .answer_driver import driver_too_old
from .answer_facts import (build_reach, cudnn_arch_floor, forward_compat, gpu_cc, no_kernel_image,
                           torch_cudnn_status, torch_for_python, torch_held_by_python)
from .answer_builds import from_builds, replaced_framework
from .answer_dlopen import from_dlopen
from .answer_states import DRIVER_REACHED, GPU_FLAGS, from_states
from .answer_arch import arch_words, first_cuda_serving
from .answer_launch import from_launch
from .answer_toolchain import from_toolchain, nvcc_arch, ptx_floor
from .answer_tools import from_tools
from .answered import Answer, clause
from .evidence import Evidence

# Status names whose cause is one of the named conditions below.
_STATUS_SIGNAL: Dict[str, str] = {
    "cudaErrorInsufficientDriver": "driver-too-old", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": "system-driver-mismatch",
    "cudaErrorSystemDriverMismatch": "system-driver-mismatch", "cudaErrorLaunchFailure": "launch-failure",
    "CUDA_ERROR_LAUNCH_FAILED": "launch-failure", "cudaErrorNoKernelImageForDevice": "no-kernel-image",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "no-kernel-image", "cudaErrorMemoryAllocation": "out-of-memory",
    "CUDA_ERROR_OUT_OF_MEMORY": "out-of-memory", "CUDNN_STATUS_ALLOC_FAILED": "out-of-memory",
    "cudaErrorUnknown": "launch-failure", "CUDA_ERROR_UNKNOWN": "launch-failure",
    "cudaErrorInvalidDevice": "invalid-device", "CUDA_ERROR_INVALID_DEVICE": "invalid-device",
    "cudaErrorNoDevice": "no-device", "CUDA_ERROR_NO_DEVICE": "no-device",
    "cudaErrorUnsupportedPtxVersion": "ptx-toolchain", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "ptx-toolchain",
    "CUBLAS_STATUS_NOT_INITIALIZED": "cublas-handle", "CUBLAS_STATUS_ALLOC_FAILED": "cublas-handle",
    "CUDNN_STATUS_EXECUTION_FAILED": "execution-failed", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE": "nvrtc-builtins",
    "CUDNN_STATUS_NOT_INITIALIZED": "cudnn-not-initialized", "CUDNN_STATUS_NOT_SUPPORTED": "cudnn-not-supported",
}


def _signal(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    platform = ev.platform
    cuda = next(iter(ev.cuda), None)
    if kind == "tf-duplicate-factory":
        return Answer("TensorFlow's 'Unable to register ... factory' line is harmless", paste.harmless(), False)
    if kind == "tf-trt-missing":
        return Answer("TensorFlow's 'Could not find TensorRT' warning is harmless: only its TF-TRT converter uses "
                      "TensorRT, and the GPU runs without it", paste.harmless(), False)
    if kind == "tf-numa-node":
        return Answer("TensorFlow's 'NUMA node read from SysFS had negative value (-1)' line is harmless: the GPU's PCI "
                      "device reports no NUMA node (a firmware or virtual-machine matter) and TensorFlow uses node 0",
                      paste.harmless(), False)
    if kind == "cuda-gdb-api-report":
        return _debugger_report(ev, compat)
    if kind == "docker-no-gpu-runtime":
        return Answer("Docker has no GPU runtime: the NVIDIA Container Toolkit is missing or not registered",
                      container_toolkit_fix())
    if kind == "shm-exhausted":
        check = compat.declared_check("container-shm-small")  # check's CD807: the same words and fix
        if check is not None:
            return Answer("%s: %s" % (clause(check.title), check.detail), table_fix(check.fix))
    if kind == "cdi-unresolved":
        return Answer("the container asks for a CDI device that has no specification on the host", rt.cdi_spec_fix())
    if kind == "cannot-talk-to-driver" and platform == "linux" and \
            not any(s.value in ("container", "wsl") for s in ev.facts.os):
        return Answer("nvidia-smi cannot reach the NVIDIA kernel module: it is not loaded (Secure Boot refusing the "
                      "unsigned module, no module built for the running kernel after a kernel update, nouveau holding "
                      "the GPU) or no driver is installed", rt.module_not_loaded_fix(platform))
    if kind == "wsl-no-adapters":
        return Answer("the NVIDIA Container Toolkit runs under WSL and finds no GPU adapter (/dev/dxg): the distro runs "
                      "under WSL 1, which has no GPU support, or the Windows NVIDIA driver does not reach WSL 2",
                      wsl_adapters_fix())
    if kind in ("container-cli-no-driver", "cannot-talk-to-driver"):
        return Answer("the host's NVIDIA driver is not loaded (or not installed)", paste.driver_fix(None, ev.driver_platform))
    if kind == "nvml-unknown-error-container":
        return Answer("the running container lost its GPU device permissions", rt.container_restart_fix())
    if kind == "container-requirement" and re.search(r"driver 0\.0\b", ev.text):
        return Answer("the container runtime reads driver 0.0: it cannot reach the host's NVIDIA driver (not loaded, "
                      "or libraries and module out of step after an upgrade)", paste.driver_fix(None, ev.driver_platform))
    if kind == "driver-library-missing" and any(s.value == "container" for s in ev.facts.os):
        return Answer("the driver library libcuda.so.1 is not found in the container: it was started without the "
                      "GPUs, so the NVIDIA runtime mounted none of the host driver's libraries", container_gpu_fix())
    if kind == "driver-library-missing" and "nvcuda.dll" in ev.text.lower():
        return Answer("the driver's nvcuda.dll is not found: no NVIDIA driver for Windows is installed (it puts "
                      "nvcuda.dll in System32), or this machine has no NVIDIA GPU", rt.driver_library_fix("windows"))
    if kind == "driver-library-missing":
        return Answer("the driver library libcuda.so.1 is not found: no NVIDIA driver here, (WSL) /usr/lib/wsl/lib "
                      "is not on the loader path, or (a container) it was started without the GPUs",
                      rt.driver_library_fix(platform))
    if kind == "container-requirement" and cuda:
        floor = compat.min_driver(cuda, ev.driver_floor_platform)
        return Answer("the image needs CUDA %s, newer than the host driver runs" % cuda,
                      paste.driver_fix(floor.version if floor else None, ev.driver_platform))
    if kind == "driver-too-old" and (ev.facts.build_cuda() or ev.facts.cuda_driver):
        return driver_too_old(ev, compat)
    if kind == "driver-too-old":
        floor = compat.min_driver(cuda, ev.driver_floor_platform) if cuda else None
        program = next((p.name for p in ev.facts.programs if p.name in BUILDS_FOR_CUDA), None)
        cause = "the NVIDIA driver%s is older than %sCUDA runtime%s needs%s" % (
            (" " + ev.drivers[0]) if ev.drivers else "", ("%s's " % program) if program else "the ",
            (" " + cuda) if cuda else "", (" (driver %s or newer)" % floor.version) if floor else "")
        fix = driver_or_framework_build_fix(paste.driver_fix(floor.version if floor else None, ev.driver_platform), program)
        # ... unless the paste shows the GPUs given to its container, or a driver reached
        if ev.drivers or cuda or platform == "windows" or GPU_FLAGS.search(ev.text) or DRIVER_REACHED.search(ev.text):
            return Answer(cause, fix)
        # No version said on either side: the CUDA runtime says the same where it finds no driver at all, as in a
        # container started without the GPUs (plain `docker run`; nvidia-docker#400, fixed by `--gpus all`).
        in_container = any(s.value == "container" for s in ev.facts.os)
        none = ("no driver reaches the process: a container started without the GPUs (plain `docker run`, not "
                "`--gpus all` or nvidia-docker) has no libcuda, and the CUDA runtime then says this too")
        return Answer(("%s; else %s" % (none, cause)) if in_container else "%s, or %s" % (cause, none),
                      driver_or_container_fix(fix, in_container))
    if kind == "ptx-toolchain" and (ev.facts.driver or ev.drivers):
        found = ptx_floor(ev, compat)
        if found is not None:
            return found
    if kind == "ptx-toolchain":
        return Answer("the PTX was compiled by a CUDA toolkit newer than the driver%s can JIT (cudaError 222)" % (
            (" " + ev.drivers[0]) if ev.drivers else ""), rt.ptx_driver_fix(ev.driver_platform))
    if kind == "cublas-handle":
        return Answer("cuBLAS could not create its handle (CUBLAS_STATUS_NOT_INITIALIZED): almost always GPU "
                      "memory ran out; else the CUDA compute cache (~/.nv) is not writable by this user (owned by "
                      "root after a run under sudo)", memory_or_compute_cache_fix(ev.platform))
    if kind == "execution-failed":
        return Answer("a cuDNN kernel failed on the GPU (execution failed): most often the framework's CUDA/cuDNN "
                      "build predates this GPU's architecture (compute capability), else memory or the driver%s%s"
                      % (_stated(ev), "" if gpu_cc(ev, compat) else build_reach(ev, compat)),
                      build_or_memory_fix(_arch_fix(ev, compat, ev.gpu_cc, replaced_framework(ev, usual=True), True)))
    if kind == "nvrtc-builtins":
        return Answer("NVRTC could not load its libnvrtc-builtins library", nvrtc_builtins_fix(
            compat, major_of(next((s.high for s in ev.libraries if s.product == "CUDA"), None) or cuda) or 12))
    if kind == "nvrtc-builtins-missing":
        shipped = next((s for s in ev.libraries if s.name.startswith("libnvrtc-builtins.so.")), None)
        if shipped is not None:
            return Answer("NVRTC could not open %s (%s's), which it loads at run time by that exact name: that "
                          "release's NVRTC builtins are not on the loader's path, or PyTorch's libtorch download (or "
                          "its CUDA 11 wheel) holds them under a hashed name (libnvrtc-builtins-<hash>.so.X.Y), which "
                          "NVRTC does not look for" % (shipped.name, shipped.label),
                          nvrtc_builtins_link_fix(shipped.name, paste.toolkit_library_fix(compat, shipped,
                                                                                          "libnvrtc-builtins")))
    if kind in ("cudnn-not-initialized", "cudnn-not-supported"):  # PyTorch's own cuDNN, else the table's words
        torch = torch_cudnn_status(ev, compat, kind, lambda: _arch_fix(ev, compat, gpu_cc(ev, compat), "PyTorch"))
        if torch is not None or kind == "cudnn-not-supported":
            return torch
        return Answer(
            "cuDNN could not initialise (CUDNN_STATUS_NOT_INITIALIZED): no usable driver or GPU, GPU memory exhausted, "
            "or a cuDNN that does not fit the CUDA runtime and driver%s" % _stated(ev), rt.cudnn_startup_fix())
    if kind == "not-a-symlink" and "/usr/lib/wsl" in " ".join(s.detail for s in ev.signals):
        return Answer("ldconfig's warning that WSL's driver files are copies, not symbolic links, is harmless",
                      rt.wsl_symlink_fix(), False)
    if kind in ("system-driver-mismatch", "nvml-mismatch"):
        api, dso = _API_MISMATCH.search(ev.text), _DSO_MISMATCH.search(ev.text)
        pair = api.groups() if api else dso.groups()[::-1] if dso else None  # (libraries, module)
        said = ": the libraries are %s, the loaded kernel module %s" % pair if pair else ""
        if (any(s.value == "container" for s in ev.facts.os) or re.search(r"\bDockerfile\b", ev.text)) and \
                "nvidia-container-cli" not in ev.text:  # the runtime's own NVML reads the host's driver
            return Answer("inside a container the driver's libraries must be the host's, which the NVIDIA runtime "
                          "mounts: ones installed in the image or the container (a driver or CUDA installer run "
                          "there) are another release than the host's kernel module%s" % said,
                          container_driver_files_fix())
        return Answer("the driver's libraries and its loaded kernel module are different releases%s (or the loader's "
                      "cache, which ldconfig writes, still names another release's libraries)" % said,
                      mismatched_driver_fix(ev.driver_platform))
    if kind == "container-cli-proc-driver":
        return Answer("nvidia-container-cli's mount operation failed on the driver's own /proc/driver/nvidia "
                      "entries: the loaded nvidia kernel module is not the one the installed driver belongs to "
                      "(upgraded or reinstalled without a reboot) or is not loaded", mismatched_driver_fix(ev.driver_platform))
    if kind in ("launch-failure", "cuda-unknown-error"):
        return Answer("a GPU fault: after a suspend/resume the nvidia_uvm module is broken", uvm_reload_fix(ev.driver_platform))
    if kind == "arch-mismatch":
        found = cudnn_arch_floor(ev, compat)
        if found is not None:
            return found
    if kind in ("no-kernel-image", "arch-mismatch") and (ev.facts.runs("Torch7") or ev.facts.python):
        found = no_kernel_image(ev, compat)
        if found is not None:
            return found
    if kind == "nvcc-unsupported-arch":
        return nvcc_arch(ev, compat)
    if kind in ("no-kernel-image", "arch-mismatch", "nvrtc-arch", "llvm-unknown-processor", "cufft-internal-error"):
        cc = gpu_cc(ev, compat)
        python = torch_for_python(ev)
        # NVRTC and Triton's LLVM are PyTorch's where nothing else is named; LLVM's words come from Julia, TVM and
        # XLA too, so only a text naming Triton or PyTorch gets PyTorch's build
        named = bool(_TRITON_OR_TORCH.search(ev.text))
        usual = kind == "nvrtc-arch" or (kind != "no-kernel-image" and named)
        fix = _arch_fix(ev, compat, cc, replaced_framework(ev, usual=usual))
        wording = kind
        if kind == "llvm-unknown-processor" and not named:  # Triton is the likeliest unless another is named
            wording = "llvm-unknown-processor-unnamed"
            fix = llvm_program_fix(None if _OTHER_LLVM.search(ev.text) else _arch_fix(ev, compat, cc, "PyTorch"))
        # a framework other than PyTorch named, with the CUDA its build is for: its build for a CUDA that knows the GPU
        other = next((p.name for p in ev.facts.programs if p.name in BUILDS_FOR_CUDA and p.name != "PyTorch"), None)
        first = first_cuda_serving(compat, cc)[1] if cc else None
        if other and not replaced_framework(ev):
            fix = framework_build_for_cuda_fix(other, first) if first else framework_build_for_gpu_fix(other)
        built = ev.facts.build_cuda()
        # the driver's own status, GPU unnamed: a PTX-only binary whose JIT library is missing read the same before
        # CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221) existed (libgpuarray-289: libnvidia-ptxjitcompiler.so was missing)
        jit = not cc and ev.platform != "windows" and bool(re.search(r"NO_BINARY_FOR_GPU|NoBinaryForGpu", ev.text))
        # NVRTC compiles at run time for the GPU it finds; one older than the GPU refuses its architecture
        said = _COMPILERS.get(wording, "the build%s has no kernels for this GPU%s%s%s")
        return Answer(said % (
            (" (%s's, for CUDA %s)" % (other, built)) if other and built else "",
            arch_words(ev, compat, cc) or ("" if jit else build_reach(ev, compat)),
            python or "", "; or, where it carries only PTX, the driver's PTX JIT compiler library "
            "(libnvidia-ptxjitcompiler.so.1) is missing, which older drivers report the same way" if jit else ""),
            rt.ptx_jit_or_arch_fix(fix) if jit else with_python_note(fix, python) if python else fix)
    if kind in ("xla-libdevice", "xla-ptxas"):
        older = from_toolchain(kind, ev, compat)  # a ptxas found, too old for the GPU: which one, and what knows it
        if older is not None:
            return older
        said = next((s.detail for s in ev.signals if s.kind == kind), "")
        return Answer("XLA cannot find or use the CUDA compiler tools (ptxas, libdevice) it needs: %s" % said,
                      rt.xla_cuda_tools_fix(compat, major_of(cuda) or 12))
    if kind == "cudnn-no-engine":
        return Answer("cuDNN found no engine for this convolution: the framework's CUDA/cuDNN build does not fit "
                      "this GPU or driver, or GPU memory ran out", rt.engine_fix(compat, ev.gpu_cc, ev.python,
                                                                            bool(_NO_ALGORITHM.search(ev.text))))
    if kind in ("out-of-memory", "cudnn-workspace-oom"):
        # XLA's words: under JAX, 75% of the GPU's memory is taken at start
        # (https://docs.jax.dev/en/latest/gpu_memory_allocation.html)
        xla = "RESOURCE_EXHAUSTED" in ev.text and not ev.facts.runs("TensorFlow")
        return Answer("GPU memory ran out%s" % (
            " in XLA: JAX preallocates 75% of the GPU's memory when it starts (XLA_PYTHON_CLIENT_MEM_FRACTION sets the "
            "share), so another process or framework on the GPU, or a model too large for the rest, leaves an "
            "allocation short" if xla else ""), rt.memory_fix())
    if kind == "dl4j-cudnn" and cuda:
        return Answer("DL4J's cuDNN helper cannot load: the cuDNN built for its CUDA %s is missing (or a DLL it "
                      "depends on)" % cuda, paste.cudnn_for_cuda_fix(compat, cuda, ev.platform))
    if kind == "libcuda-unversioned":
        return Answer("the unversioned libcuda.so link (which cuDNN opens) is missing beside the driver's "
                      "libcuda.so.1", paste.libcuda_link_fix(platform))
    if kind == "nvrtc-unversioned":
        return Answer("cuDNN 8 opens the unversioned libnvrtc.so, which only a CUDA toolkit's development "
                      "files provide", rt.nvrtc_link_fix())
    if kind == "secure-boot-rejected":
        return Answer("Secure Boot is on and the kernel rejects the unsigned nvidia module (%s)" % _said(ev, kind),
                      rt.secure_boot_fix())
    if kind == "container-cli-file-exists":
        path = _said_path(ev, kind)
        if path and "/aarch64-linux-gnu/" in path:  # nvidia-container-toolkit#295: an L4T image on a Jetson host
            return Answer("the image already holds %s, a driver file the NVIDIA runtime mounts from the host: on a "
                          "Jetson, an image of another L4T release or an older container toolkit; on other Arm hosts, "
                          "the driver installed into the image" % path,
                          paste.arm_image_files_fix(path.rpartition("/")[2], rt.image_driver_files_fix(path)))
        return Answer("the image already holds %s, a driver file nvidia-container-cli mounts from the host (the "
                      "driver was installed into the image)" % (path or "a driver library"),
                      rt.image_driver_files_fix(path))
    if kind == "container-cli-stat-failed":
        path = _said_path(ev, kind)
        return Answer("nvidia-container-cli cannot find %s, a driver file it mounts: an older NVIDIA Container "
                      "Toolkit (on WSL 2 its driver folder layout), or a driver changed under a running Docker" % (
                          path or "a driver file"), container_toolkit_upgrade_fix())
    if kind == "forward-compat-unsupported":
        return forward_compat(ev, compat)
    if kind == "windows-paging-file":
        return Answer("Windows' paging file is too small for the CUDA libraries", rt.paging_file_fix())
    return from_states(kind, ev, compat) or from_builds(kind, ev, compat) or from_dlopen(kind, ev, compat) or \
        from_toolchain(kind, ev, compat) or from_tools(kind, ev, compat) or from_launch(kind, ev, compat)


# The kernel module's own line: "NVRM: API mismatch: the client has the version 550.90.07, but\n NVRM: this kernel
# module has the version 550.54.14." (dmesg wraps it, each line prefixed again).
# TensorFlow's and JAX's stream executor: "kernel version 515.48.7 does not match DSO version 510.73.5".
_DSO_MISMATCH = re.compile(r"kernel version (\d+\.\d+(?:\.\d+)?) does not match DSO version (\d+\.\d+(?:\.\d+)?)")
_API_MISMATCH = re.compile(r"client has the version (\d+\.\d+(?:\.\d+)?), but[ \t\r\n]{1,80}(?:NVRM:[ \t]{1,8})?"
                           r"this kernel module has the version (\d+\.\d+(?:\.\d+)?)")


def _stated(ev: Evidence) -> str:
    """What the paste states of the stack, for a cause the text does not pin on one part: ' (the text says:
    PaddlePaddle, CUDA runtime 10.2, cuDNN 8.1 loaded, compute capability 7.5)'; '' where it states none."""
    facts = ev.facts
    fw = next((p for p in facts.programs if p.name in BUILDS_FOR_CUDA and p.release), None) or \
        next((p for p in facts.programs if p.name in BUILDS_FOR_CUDA), None)
    built = facts.build_cuda() or next(iter(ev.cuda), None)
    parts = [" ".join(x for x in (fw.name, fw.release, ("+" + fw.tag) if fw.tag else "") if x) if fw else "",
             "CUDA %s" % built if built else "",
             "the driver's CUDA %s" % facts.cuda_driver.value if facts.cuda_driver else "",
             "cuDNN %s loaded" % facts.cudnn_loaded.value if facts.cudnn_loaded else "",
             "compute capability %s" % ev.gpu_cc if ev.gpu_cc else ""]
    said = ", ".join(p for p in parts if p)
    return " (the text says: %s)" % said if said else ""


_TRITON_OR_TORCH = re.compile(r"triton|torch", re.I)
# The other programs whose compilers carry an LLVM that names GPUs by sm_XX: Julia's CUDA.jl, TVM, XLA, Numba
_OTHER_LLVM = re.compile(r"\bjulia\b|CUDA\.jl|\btvm\b|\bxla\b|\bjax\b|\bnumba\b", re.I)
# PyTorch's words once every cuDNN algorithm failed, most often for want of workspace memory (Conv_v7.cpp)
_NO_ALGORITHM = re.compile(r"Unable to find a valid cuDNN algorithm|no valid convolution algorithms available")
# Compilers a build carries that refuse a GPU newer than they are: what the cause says of each
_COMPILERS = {
    "nvrtc-arch": "NVRTC, the run-time compiler of the build's CUDA%s, does not know this GPU's architecture: the "
                  "build is older than the GPU%s%s%s",
    "llvm-unknown-processor": "the LLVM inside the build's Triton%s does not know this GPU's architecture: the build "
                              "is older than the GPU%s%s%s",
    # LLVM's words come from Julia, TVM and XLA too: a text naming neither Triton nor PyTorch blames neither
    "llvm-unknown-processor-unnamed": "the LLVM inside the program's compiler%s does not know this GPU's "
                                      "architecture: the build is older than the GPU%s%s%s",
    "cufft-internal-error": "cuFFT failed inside (CUFFT_INTERNAL_ERROR): most often the cuFFT of the build's CUDA%s is "
                            "older than the GPU%s%s%s, else GPU memory ran out",
}


def _arch_fix(ev: Evidence, compat: Compat, cc: Optional[str], framework: str, tagged_only: bool = False) -> Fix:
    """A build with kernels for the GPU, for the machine the paste describes: its driver, its Python (fresh paste
    Dual-DMP-2: a python3.7 environment had been told to install a cu129 wheel, which has none for 3.7) and the
    PyTorch release it runs. ``tagged_only``: that release is tried only where its CUDA build is named (`+cu100`),
    so the build that failed is never the one proposed (deep-code-search-65: torch 1.2.0 on cudatoolkit 10.0 had
    been told to install torch 1.2 for CUDA 10.0)."""
    torch = ev.facts.program("PyTorch")
    known = torch is not None and bool(torch.release) and (bool(torch.tag) or not tagged_only)
    return rt.arch_fix(compat, cc, framework, driver=ev.facts.driver.value if ev.facts.driver else None,
                       python=ev.python,
                       release=("%s+%s" % (torch.release, torch.tag) if torch.tag else torch.release)
                       if known and torch is not None else None, platform=ev.platform,
                       held=torch_held_by_python(ev))


def _said(ev: Evidence, kind: str) -> str:
    return next((s.detail for s in ev.signals if s.kind == kind), "")


def _said_path(ev: Evidence, kind: str) -> str:
    """The file a container runtime line names (the path after 'failed: ')."""
    m = re.search(r"failed: (/[\w.+/-]+)", _said(ev, kind))
    # Docker's overlay root (.../overlay2/<id>/merged/usr/bin/nvidia-smi): the path inside the image is what to remove.
    return m.group(1).rpartition("/merged")[2] or m.group(1) if m else ""


# Start-up lines that are no failure: answered only where the paste shows nothing else.
_HARMLESS_LINES = ("tf-duplicate-factory", "tf-trt-missing", "tf-numa-node", "cuda-gdb-api-report", "ct2-float16-fallback",
                   "cuda-lazy-loading")
# cuda-gdb's words for an API call that returned an error: "Cuda API error detected: cudaMalloc returned (0x2)"
_GDB_REPORT = re.compile(r"Cuda API error detected: (\w+) returned \((0x[0-9a-fA-F]{1,4}|\d{1,4})\)")


def _debugger_report(ev: Evidence, compat: Compat) -> Answer:
    """cuda-gdb's API error reports, each call with the status its header names for the number."""
    calls = []
    for name, number in dict.fromkeys(_GDB_REPORT.findall(ev.text)):
        code = compat.status_by_number("cuda_runtime" if name.startswith("cuda") else "cuda_driver", int(number, 0))
        calls.append("%s returned %d%s" % (name, int(number, 0), " (%s)" % code.name if code else ""))
    said = ": %s" % "; ".join(calls[:3]) if calls else ""
    return Answer("cuda-gdb reports every CUDA API call that returns an error%s. A program may expect that return and "
                  "carry on (NCCL asks for peer-to-peer access between GPUs and falls back to shared memory where "
                  "there is none): these lines are harmless unless the program itself stops" % said,
                  paste.harmless(), False)


def from_signals(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The first named condition with an answer; a harmless line only when nothing else is there."""
    kinds = [k for k in ev.kinds() if k not in _HARMLESS_LINES]
    for kind in kinds:
        found = _signal(kind, ev, compat)
        if found is not None:
            return found
    harmless = [k for k in ev.kinds() if k in _HARMLESS_LINES]
    if harmless and not ev.statuses and not ev.loader:
        return _signal(harmless[0], ev, compat)
    return None


def from_statuses(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The first status code with an answer: through its named condition, else NVIDIA's meaning and the
    doctor's reading of it (compat/status_codes.toml)."""
    for seen in ev.statuses:
        kind = _STATUS_SIGNAL.get(seen.code.name)
        found = _signal(kind, ev, compat) if kind else None
        if found is not None:
            return found
        if seen.code.api == "nccl":
            return Answer("NCCL %s (%d): %s; NCCL_DEBUG=INFO names the failing call, in containers usually too "
                          "little shared memory" % (seen.code.name, seen.code.number, seen.code.words), rt.nccl_fix())
        entry = platform_row(compat.status_words(seen.code.name, seen.code.number), ev.platform) \
            if seen.code.name in compat.status_entries() else {}
        return Answer("%s: %s" % (seen.code.name, entry.get("diagnosis") or seen.code.meaning or seen.code.words),
                      table_fix(entry) if entry.get("words") else rt.status_words_fix(seen.code.words))
    return None
