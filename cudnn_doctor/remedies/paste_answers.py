"""Fixes explain's answers build from other fixes and the values a paste states: another way beside a fix (CuPy's
wheel of the CUDA there, a driver or an older CUDA, a Torch7 bindings branch), a library folder before an install,
and Fabric Manager for a driver the paste names or does not."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .acting import on_machine, pip
from .catalogue import fabric_manager_fix
from .containers import container_gpu_fix, visible_devices_fix
from .gpu import unhide_gpus_fix
from .shell import advice, noted, or_else, run, said, say


def cupy_wheel_of_cuda_fix(fix: Fix, have: str, other: str, other_major: int) -> Fix:
    """The runtime CuPy's wheel loads (``fix``), or CuPy's wheel of the CUDA the machine has instead."""
    return say("%s; or install the CuPy wheel of the CUDA you have (%s for CUDA %d): %s", fix, other, other_major,
               run(pip("uninstall -y %s" % have), pip("install %s" % other)))


def folder_then_install_fix(path_fix: Fix, install_fix: Fix) -> Fix:
    """Put the installed cuDNN's folder on the loader's path; install it only where it is not there."""
    return say("%s; if that cuDNN is not installed: %s", path_fix, install_fix)


def torch7_branch_fix(install_fix: Fix, branches: str) -> Fix:
    """The cuDNN the bindings' branch opens, or the cudnn.torch branch of the cuDNN installed (built by luarocks)."""
    return say("%s; or, for the cuDNN installed, the cudnn.torch branch of its major (%s): clone that branch of "
               "https://github.com/soumith/cudnn.torch and build it with luarocks make", install_fix, branches)


def torch7_loaded_branch_fix(major: int) -> Fix:
    """The cudnn.torch branch that binds the cuDNN major the loader found, built by luarocks (the bindings are Lua
    and build in seconds; the cuDNN stays as it is)."""
    line = "git clone -b R%d https://github.com/soumith/cudnn.torch.git && cd cudnn.torch && luarocks make " \
        "cudnn-scm-1.rockspec" % major
    return run(line, text="build the cudnn.torch bindings of branch R%d, which bind the cuDNN %d installed: `%s`; or "
                          "install the cuDNN major your bindings' branch binds" % (major, major, line))


def driver_or_older_cuda_fix(driver_fix: Fix, runs: str) -> Fix:
    """A driver for the CUDA the program's PTX was built with, or a build with the CUDA the driver runs; a program
    that compiles its kernels at run time (hashcat, OpenMM, CuPy) uses the installed toolkit, so that is what to
    change there."""
    return say("%s; or build with CUDA %s or older, which it runs (a program that compiles its kernels at run time "
               "with the installed toolkit: install the CUDA %s toolkit instead)", driver_fix, runs, runs)


# Where each framework names its builds for one CUDA: the way to keep a driver that cannot be upgraded (a cluster's,
# a cloud notebook's) and install the build for the CUDA it runs.
BUILDS_FOR_CUDA = {
    "PyTorch": "the PyTorch wheel for that CUDA or an older one (from https://download.pytorch.org/whl/cuXYZ, cuXYZ "
               "naming that CUDA: cu118 for 11.8)",
    "PaddlePaddle": "the paddlepaddle-gpu build for that CUDA (its release for each CUDA is listed at "
                    "https://www.paddlepaddle.org.cn/install/old)",
    "TensorFlow": "a TensorFlow release built for that CUDA (https://www.tensorflow.org/install/source#gpu lists "
                  "each release's CUDA)",
    "JAX": "JAX with the jax[cudaN] extra of that CUDA major N",
    "ONNX Runtime": "the onnxruntime-gpu build for that CUDA major (https://onnxruntime.ai/docs/execution-providers/"
                    "CUDA-ExecutionProvider.html#requirements)",
    "CuPy": "the cupy-cudaNx wheel of that CUDA major N",
}


def driver_or_framework_build_fix(driver_fix: Fix, program: Optional[str]) -> Fix:
    """A driver for the build's CUDA, or, where the paste names the framework, its build for the CUDA the driver runs
    (what users of a driver they cannot change did: Paddle's post101 build on AI Studio)."""
    build = BUILDS_FOR_CUDA.get(program or "")
    if build is None:
        return driver_fix
    return say("%s; or keep this driver: find the CUDA it runs (the 'CUDA Version' in the header %s prints) and "
               "install " + build.replace("%", "%%"), driver_fix, run(on_machine("nvidia-smi", privileged=False)))


def driver_or_container_fix(driver_fix: Fix, container_first: bool) -> Fix:
    """A driver too old, or none in the process's view (a container started without the GPUs): both ways, the
    container's first where the paste is a container's."""
    if container_first:
        return or_else(container_gpu_fix(), driver_fix, "%s; else: %s")
    return or_else(driver_fix, container_gpu_fix(), "%s; in a container: %s")


def framework_build_for_cuda_fix(program: str, cuda: str) -> Fix:
    """A named framework's build for a CUDA from ``cuda`` on (the first with kernels for the GPU)."""
    build = BUILDS_FOR_CUDA.get(program, "its build for that CUDA (its install page names it)")
    return advice("install %s's build for CUDA %s or newer, which has kernels for this GPU: %s" % (
        program, cuda, build.replace("that CUDA", "it")))


def library_or_framework_build_fix(fix: Fix, program: str, library: str) -> Fix:
    """The library a framework's build asks for by name (``fix``), or that framework's build for the CUDA installed,
    which asks for that CUDA's names (Paddle-50588: a CUDA 10.2 paddlepaddle-gpu asking for cudnn64_7.dll on a CUDA
    11.6 machine)."""
    build = BUILDS_FOR_CUDA.get(program, "its build for that CUDA (its install page names it)")
    return or_else(fix, advice("where another CUDA is installed, keep it and install %s (this build asks for %s, "
                               "the name of the release it was built with)" % (build, library)), "%s. Or: %s")


def framework_build_for_gpu_fix(program: str) -> Fix:
    """A named framework's build whose kernels cover a GPU the paste does not name: its build for an older CUDA for an
    older GPU (newer CUDA builds drop old architectures), the newest CUDA's for a new one."""
    build = BUILDS_FOR_CUDA.get(program, "its build for that CUDA (its install page names it)")
    return said("install %s's build for a CUDA whose kernels cover this GPU (`%%s` prints its compute capability): "
                "for an older GPU an older CUDA's build, which still has its kernels, for a new one the newest "
                "CUDA's: %s" % (program, build.replace("%", "%%")), "nvidia-smi --query-gpu=name,compute_cap --format=csv")


def visible_devices_or_unhide_fix() -> Fix:
    """Start the container with the GPUs, or stop hiding them (CUDA_VISIBLE_DEVICES)."""
    return or_else(visible_devices_fix(), unhide_gpus_fix())


def fabric_manager_for_driver_fix(driver: Optional[str]) -> Fix:
    """nvidia-fabricmanager of exactly the driver's version: the paste's driver, else the one nvidia-smi names."""
    if driver:
        return fabric_manager_fix(driver.split(".")[0], driver, installed=False)
    return said("find the driver's version with %s, then install nvidia-fabricmanager of exactly that version and "
                "enable its service", on_machine("nvidia-smi", privileged=False))


def with_python_note(fix: Fix, note: str) -> Fix:
    """The fix, with what the paste's Python holds back said after it (the release that still installs there)."""
    return noted(fix, note)


def cudnn_wheel_brings_cublas_fix(wheel_fix: Fix, install_fix: Fix) -> Fix:
    """cuDNN's wheel, which requires the nvidia-cublas wheel its libraries look for, or the cuBLAS itself."""
    return or_else(wheel_fix, install_fix, "%s, which brings the nvidia-cublas wheel it requires; or %s")


def needs_release_fix(fix: Fix, named: str, release: str) -> Fix:
    """``fix``, with the release the copy found first must reach (the first that defines the missing function)."""
    return noted(fix, "; the copy the program needs is %s %s's or newer" % (named, release))
