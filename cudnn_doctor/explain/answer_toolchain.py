"""Answers for pastes about building or pairing with PyTorch and about a GPU a library or a process cannot use:
torchvision's own CUDA check, a CUDA extension built without a toolkit (CUDA_HOME), nvcc refusing the host
compiler, a Windows DLL whose initialisation failed, PTX of a newer ISA than the driver's JIT knows or newer than the
pasted driver runs, FlashAttention on an older GPU, no GPU visible to the process.
Each reads the versions the text states (the build's CUDA, the newest gcc nvcc names, the architecture the library
names, a CUDA_VISIBLE_DEVICES setting) and says nothing it does not. Pure."""
from __future__ import annotations

import re
from typing import Callable, Dict, Optional

from ..knowledge import Compat
from ..remedies import paste, paste_builds as builds, paste_runtime as rt, paste_tools as tools
from ..remedies.paste_answers import driver_or_older_cuda_fix
from ..versions import major_of, tag_cuda, version_key
from .answer_facts import gpu_cc
from .answered import Answer
from .evidence import Evidence

# torchvision/extension.py's own words
_TORCHVISION = re.compile(r"PyTorch has CUDA Version=(\d+\.\d+) and torchvision has CUDA Version=(\d+\.\d+)")
_NEWEST_GCC = re.compile(r"gcc versions later than (\d+) are not supported")
_GCC = re.compile(r"\bgcc(?: \(GCC\)| version:?|-)\s{0,3}(\d+(?:\.\d+){0,2})", re.I)
_FLASH_ARCH = re.compile(r"FlashAttention only supports (\w+) GPUs or newer")
_VISIBLE = re.compile(r"CUDA_VISIBLE_DEVICES\s{0,2}=\s{0,2}['\"]?([\w,-]*)")


def _torch_cuda(ev: Evidence) -> Optional[str]:
    """The CUDA of the PyTorch build the paste names (+cu121), if it names one."""
    torch = ev.facts.program("PyTorch")
    return tag_cuda(torch.tag) if torch is not None and torch.tag else None


def _torchvision(ev: Evidence, compat: Compat) -> Answer:
    m = _TORCHVISION.search(ev.text)
    torch = ev.facts.program("PyTorch")
    release = torch.release if torch is not None else None
    if m is None:
        return Answer("torchvision was built for another CUDA than this PyTorch: the two come from different builds",
                      builds.torchvision_pair_fix(compat, _torch_cuda(ev), release))
    return Answer("PyTorch was built with CUDA %s and torchvision with CUDA %s: they come from different builds (another "
                  "index, or one upgraded without the other), and torchvision's C++ ops need PyTorch's CUDA" % (
                      m.group(1), m.group(2)), builds.torchvision_pair_fix(compat, m.group(1), release))


def _cuda_home(ev: Evidence) -> Answer:
    cuda = _torch_cuda(ev)
    return Answer("building a CUDA extension (torch.utils.cpp_extension) needs a CUDA toolkit with nvcc; CUDA_HOME is "
                  "not set and none was found%s" % (" (this PyTorch is built for CUDA %s)" % cuda if cuda else ""),
                  builds.cuda_toolkit_for_extension_fix(cuda, ev.platform))


def _host_compiler(ev: Evidence) -> Answer:
    newest = _NEWEST_GCC.search(ev.text)
    gcc = _GCC.search(ev.text)
    cuda = next(iter(ev.cuda), None)
    if ev.platform == "windows" or newest is None:
        return Answer("nvcc%s refuses the host C++ compiler: it is newer than this CUDA release supports" % (
            " (CUDA %s)" % cuda if cuda else ""), builds.host_compiler_fix(None, ev.platform))
    return Answer("nvcc%s supports gcc up to %s, and the host compiler is gcc %s" % (
        " of CUDA %s" % cuda if cuda else "", newest.group(1), gcc.group(1) if gcc else "newer than that"),
        builds.host_compiler_fix(newest.group(1), ev.platform))


def _flash_attn(ev: Evidence, compat: Compat) -> Answer:
    m = _FLASH_ARCH.search(ev.text)
    arch = next((a for a in compat.gpus.architectures() if m and a.name.lower() == m.group(1).lower()), None)
    floor = min(arch.ccs, key=lambda cc: tuple(int(p) for p in cc.split("."))) if arch and arch.ccs else None
    cc = gpu_cc(ev, compat)
    gpu = (" (compute capability %s)" % cc) if cc else ""
    return Answer("FlashAttention 2's kernels run on %s GPUs%s or newer, and this GPU%s is older" % (
        m.group(1) if m else "newer", " (compute capability %s)" % floor if floor else "", gpu),
        builds.newer_gpu_fix(floor, "FlashAttention 2",
                             "flash-attn 1.x (it supports Turing) or PyTorch's own scaled_dot_product_attention "
                             "(attn_implementation=\"sdpa\" in transformers)"))


def _no_gpus(ev: Evidence) -> Answer:
    m = _VISIBLE.search(ev.text)
    said = " (the paste sets CUDA_VISIBLE_DEVICES=%s)" % m.group(1) if m else ""
    return Answer("the CUDA runtime sees no GPU in this process%s: CUDA_VISIBLE_DEVICES hides them (empty, or an index "
                  "this machine does not have), or the driver gives none (none in nvidia-smi, or a container started "
                  "without its GPUs)" % said, builds.visible_devices_fix(ev.platform))


def _nvrtc_builtins(ev: Evidence, compat: Compat) -> Answer:
    cuda = major_of(next(iter(ev.cuda), None))
    cause = ("NVRTC could not load its libnvrtc-builtins library, which it opens at run time from the loader's "
             "search path, beside its own libnvrtc; the CUDA library folder is not on that path")
    return Answer(cause, tools.nvrtc_builtins_fix(compat, cuda) if cuda else tools.nvrtc_folder_fix())


_PTX_ISA = re.compile(r"Unsupported \.version (\d+\.\d+); current version is '?(\d+\.\d+)")


def _ptx_isa(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """ptxas's two ISA versions read as the CUDA releases that wrote them: the program's toolkit and the driver's."""
    m = _PTX_ISA.search(ev.text)
    written, known = (compat.ptx_isa_cuda(m.group(1)), compat.ptx_isa_cuda(m.group(2))) if m else (None, None)
    if m is None or written is None or known is None:
        return None
    ptx, driver = written[0], known[1]  # the oldest toolkit that writes the PTX; the newest driver the JIT can be
    floor = compat.min_driver(ptx, ev.driver_floor_platform)
    return Answer("the program's PTX is ISA %s, which CUDA %s writes, and the driver's JIT knows ISA %s at most (a "
                  "CUDA %s driver): the driver is older than the toolkit that built the program%s" % (
                      m.group(1), ptx, m.group(2), driver, (" (CUDA %s needs driver %s or newer)" % (
                          ptx, floor.version)) if floor else ""),
                  driver_or_older_cuda_fix(paste.driver_fix(floor.version if floor else None, ev.driver_platform), driver))


# a build's own floor: "PyTorch requires CUDA 10.2 or above." (cmake/public/cuda.cmake), "requires CUDA 11.0 or higher"
_REQUIRES_CUDA = re.compile(r"(?:(\w[\w.+-]{0,40}) )?requires CUDA (\d{1,2}\.\d) or (?:above|higher|newer|later)", re.I)


def _requires_cuda(ev: Evidence) -> Optional[Answer]:
    m = _REQUIRES_CUDA.search(ev.text)
    if m is None:
        return None
    who, floor = m.group(1) or "the build", m.group(2)
    return Answer("the CUDA toolkit this build found (its nvcc, from CUDA_HOME or PATH) is older than CUDA %s, which "
                  "%s requires" % (floor, who), builds.newer_toolkit_fix(floor, ev.platform))


def _dll_init(ev: Evidence, compat: Compat) -> Answer:
    dll = re.search(r"([\w.-]+\.dll)", ev.text)
    return Answer("Windows loaded %s but its initialisation failed (WinError 1114): most often the Microsoft Visual C++ "
                  "Redistributable it was built against is missing or older" % (dll.group(1) if dll else "a DLL"),
                  builds.vc_redist_fix())


# ggml-cuda's own words: "... has no device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520"
# (its arch numbers are compute capability times 100)
_GGML_ARCH = re.compile(r"compatible with CUDA arch (\d{3,4})\.?\s{0,3}(?:ggml-cuda\.cu was compiled for:\s{0,3}"
                        r"([\d, ]{3,80}))?")


def _ggml_arch(ev: Evidence, compat: Compat) -> Optional[Answer]:
    m = _GGML_ARCH.search(ev.text)
    if m is None:
        return None
    built = [a for a in re.split(r"[,\s]+", m.group(2) or m.group(1)) if a]
    said = ", ".join("%s (compute capability %s.%s)" % (a, a[:-2], a[-2]) for a in built)
    cc = gpu_cc(ev, compat)
    gpu = next((g.value for g in ev.facts.gpus), None)
    here = (" and this GPU%s is compute capability %s" % ((" (%s)" % gpu) if gpu else "", cc)) if cc else ""
    return Answer("this llama.cpp build's ggml-cuda was compiled for CUDA arch %s only%s: the GPU runs that older "
                  "architecture's code, which lacks the kernel; its build has to include the GPU's own architecture" % (
                      said, here), builds.ggml_rebuild_fix(cc))


def _mmcv_ops(ev: Evidence, compat: Compat) -> Answer:
    return Answer("mmcv has no compiled ops (mmcv._ext): the installed package is the lite one, which OpenMMLab builds "
                  "without its CUDA/C++ ops (plain mmcv before 2.0, whose full package is mmcv-full; mmcv-lite from "
                  "2.0)", builds.mmcv_full_fix())


def _nvrtc_stub(ev: Evidence, compat: Compat) -> Answer:
    return Answer("the libnvrtc that loaded is the CUDA toolkit's link-time stub (lib64/stubs), not the library: the "
                  "program was built against the stubs folder (nvcc and CUDA_PATH naming different toolkits) or that "
                  "folder is on the loader's path", tools.nvrtc_stub_fix())


def _spconv_cpu(ev: Evidence, compat: Compat) -> Answer:
    cuda = ev.facts.build_cuda()
    return Answer("spconv's tensors were built without CUDA: the CPU-only spconv or cumm package is installed, not "
                  "spconv's build for a CUDA release (spconv-cuXYZ, with its cumm-cuXYZ)%s" % (
                      "; PyTorch here is built for CUDA %s" % cuda if cuda else ""),
                  builds.spconv_cuda_build_fix(compat, cuda))


def _spconv_arch(ev: Evidence, compat: Compat) -> Answer:
    cc = gpu_cc(ev, compat)
    return Answer("libspconv has no kernels for this GPU's architecture%s and no NVRTC path to build them: it was "
                  "built with an architecture list (CUMM_CUDA_ARCH_LIST) that leaves the GPU out" % (
                      " (compute capability %s)" % cc if cc else ""), builds.spconv_arch_fix(compat, cc))


def _cuequivariance(ev: Evidence, compat: Compat) -> Answer:
    floor = compat.library_min_cc("cuequivariance") or "7.0"
    cc, gpu = gpu_cc(ev, compat), next((g.value for g in ev.facts.gpus), None)
    here = " and this GPU%s is compute capability %s" % ((" (%s)" % gpu) if gpu else "", cc) if cc else ""
    return Answer("cuEquivariance's CUDA kernels run from compute capability %s (Volta) up%s" % (floor, here),
                  builds.supported_gpu_fix("cuEquivariance", floor))


# Each named condition (compat/symptoms.toml) these answer, and its answer.
_ANSWERS: Dict[str, Callable[[Evidence, Compat], Optional[Answer]]] = {
    "torchvision-cuda-mismatch": _torchvision,
    "cuda-home-unset": lambda ev, compat: _cuda_home(ev),
    "nvcc-host-compiler": lambda ev, compat: _host_compiler(ev),
    "windows-dll-init-failed": _dll_init,
    "flash-attn-arch": _flash_attn,
    "no-cuda-gpus": lambda ev, compat: _no_gpus(ev),
    "build-requires-newer-cuda": lambda ev, compat: _requires_cuda(ev),
    "ptx-isa-newer": _ptx_isa,
    "nvrtc-stub": _nvrtc_stub,
    "ggml-arch": _ggml_arch,
    "mmcv-no-ops": _mmcv_ops,
    "spconv-cpu-only": _spconv_cpu,
    "spconv-arch": _spconv_arch,
    "cuequivariance-arch": _cuequivariance,
    "nvrtc-builtins-missing": _nvrtc_builtins,  # NVRTC's own words, naming no file (a named one is answered before)
    "xla-ptxas": lambda ev, compat: _xla_ptxas_cc(ev, compat),  # defined below, with the words it reads
}


def from_toolchain(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The answer for one of these named conditions, else None."""
    answer = _ANSWERS.get(kind)
    return answer(ev, compat) if answer is not None else None


# nvcc's own line: "nvcc fatal   : Unsupported gpu architecture 'compute_86'" (quotes as the terminal prints them),
# and ptxas's: "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'" (Triton's own ptxas, triton#8539).
_NVCC_ARCH = re.compile(r"Unsupported gpu architecture\W{0,6}compute_(\d{2,3})|"
                        r"Value\W{1,3}sm_(\d{2,3})[af]?\W{1,3}is not defined for option\W{1,3}gpu-name", re.I)
# Triton compiles with the ptxas its wheel carries (triton/backends/nvidia/bin/ptxas) unless TRITON_PTXAS_PATH names
# another (https://github.com/triton-lang/triton/blob/main/python/triton/knobs.py)
_TRITON = re.compile(r"triton[\\/]backends[\\/]nvidia|\btriton\.|\bTriton\b")


def nvcc_arch(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """nvcc was asked for an architecture newer than it knows: the first CUDA that compiles for it; an arch list cut
    to what the old nvcc knows ("TORCH_CUDA_ARCH_LIST=7.5") builds no kernels for this GPU."""
    m = _NVCC_ARCH.search(ev.text)
    if m is None:
        return None
    digits, tool = (m.group(1), "nvcc") if m.group(1) else (m.group(2), "ptxas")
    cc = "%s.%s" % (digits[:-1], digits[-1])
    first = compat.first_cuda_for_cc(cc)
    arch = compat.arch_for_cc(cc)
    listed = re.search(r"TORCH_CUDA_ARCH_LIST\W{0,3}([\d.;+ PTX]{1,40})", ev.text)
    cut = ("; building for TORCH_CUDA_ARCH_LIST=%s instead leaves no kernels for this GPU" %
           listed.group(1).strip(" ;")) if listed else ""
    triton = tool == "ptxas" and _TRITON.search(ev.text) is not None
    return Answer("%s%s is older than CUDA %s, the first that compiles for compute capability %s (%s_%s%s)%s" % (
        "Triton's own " if triton else "", tool, first or "?", cc, "compute" if tool == "nvcc" else "sm", digits,
        (", %s" % arch.name) if arch else "", cut),
        rt.triton_ptxas_fix(first) if triton else rt.nvcc_arch_fix(first, cc, ev.platform))


# XLA's warning where the ptxas it found cannot compile for the GPU (xla/stream_executor/gpu/asm_compiler.cc): "ptxas
# does not support CC 8.9", then "Used ptxas at ptxas" (a bare name: the first on PATH). It then hands the PTX to the
# driver, whose failure (CUDA_ERROR_INVALID_IMAGE) is the error the user sees (jax#17976).
_XLA_PTXAS_CC = re.compile(r"ptxas does not support CC (\d{1,2})\.(\d)")
_XLA_PTXAS_USED = re.compile(r"Used ptxas at (\S+)")


def _xla_ptxas_cc(ev: Evidence, compat: Compat) -> Optional[Answer]:
    m = _XLA_PTXAS_CC.search(ev.text)
    if m is None:
        return None
    cc = "%s.%s" % m.groups()
    first = compat.first_cuda_for_cc(cc)
    arch = compat.arch_for_cc(cc)
    used = _XLA_PTXAS_USED.search(ev.text)
    where = used.group(1) if used else "ptxas"
    return Answer("the ptxas XLA ran (%s%s) is older than CUDA %s, the first that compiles for compute capability %s%s;"
                  " XLA then leaves the PTX to the driver, and what fails after it is that fallback" % (
                      where, ", the first on PATH" if "/" not in where else "", first or "?", cc,
                      " (%s)" % arch.name if arch else ""),
                  tools.xla_old_ptxas_fix(first, where.rsplit("/", 1)[0] if "/" in where else None))


def ptx_floor(ev: Evidence, compat: Compat) -> Optional[Answer]:
    """PTX newer than the pasted driver JITs: the newest CUDA that driver runs, and the floor of the CUDA the paste
    builds with (else of the next release): compat/cuda_driver.toml."""
    driver = ev.facts.driver.value if ev.facts.driver else ev.drivers[0]
    has = compat.max_cuda_for_driver(driver, ev.platform)
    if has is None:
        return None
    newer = [c for c in compat.cuda_releases() if version_key(c) > version_key(has)]
    said = [c for c in ev.cuda if c in newer]
    cuda = said[0] if said else (newer[0] if newer else None)
    floor = compat.min_driver(cuda, ev.driver_floor_platform) if cuda else None
    if cuda is None or floor is None:
        return None
    return Answer("the PTX was compiled by a CUDA toolkit newer than driver %s can JIT (cudaError 222): that driver "
                  "runs CUDA %s at most, and CUDA %s%s needs driver %s or newer" % (
                      driver, has, cuda, "" if said else " (the next release)", floor.version),
                  driver_or_older_cuda_fix(paste.driver_fix(floor.version, ev.driver_platform), has))
