"""Fixes for what a pasted text says about the running stack, from the text alone: driver and runtime status
codes, containers, GPU architecture, XLA's tools, TensorRT engines and Windows' loader errors."""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..knowledge import Compat
from ..model import WINDOWS_SHELL, DriverFacts, Facts, Fix, GpuFacts, HostFacts
from ..queries import best_torch_variant
from ..versions import mm_at_least, mm_text, version_key
from .acting import set_variable, target_shell
from .shell import advice, ld_library_path_without, or_else, q, run, said, say, stated, then
from .shells import command_fix
from .node import cdi_generate_fix
from .paste import driver_fix
from .software import before_torch_indexes, torch_install, torch_variant_tag


def cdi_spec_fix() -> Fix:
    """The host has no (current) CDI specification for its GPUs: node's command, said with when to run it again."""
    return say("generate the CDI specification for this driver: `%s` (again after every driver upgrade)",
               cdi_generate_fix())


def container_restart_fix() -> Fix:
    """A running container lost its device cgroup rules (systemctl daemon-reload on the host)."""
    return said("restart the container; to stop it recurring, run containers through CDI (`%s`) or set "
                "\"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] in /etc/docker/daemon.json", "nvidia-ctk cdi generate")


def nccl_fix() -> Fix:
    """NCCL's system/cuda errors: see its own report first; in containers shared memory is the usual cause."""
    return run("NCCL_DEBUG=INFO python your_program.py",
               text="rerun with NCCL_DEBUG=INFO to see the failing call; in Docker give NCCL shared memory "
                    "(`--ipc=host` or `--shm-size=16g`), and make every rank use the same NCCL and driver")


def memory_fix() -> Fix:
    """GPU memory ran out (or a workspace did not fit)."""
    return said("free GPU memory (`%s` lists the processes holding it), lower the batch size, and stop frameworks "
                "preallocating it (TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false)", "nvidia-smi")


def extension_cuda_fix(compat: Compat, toolkit: str, built: Optional[str], platform: str = "linux") -> Fix:
    """An extension's toolkit and PyTorch's CUDA differ: the PyTorch build for the toolkit's CUDA where PyTorch
    makes one for that CUDA major, else the toolkit PyTorch was built with on CUDA_HOME (`built`: None where the
    text does not say which)."""
    cudas = [str(r["cuda"]) for r in compat.framework_rows("pytorch") if str(r["cuda"]).split(".")[0] ==
             toolkit.split(".")[0] and version_key(str(r["cuda"])) <= version_key(toolkit)]
    other = "install CUDA %s's toolkit (PyTorch's) and build with CUDA_HOME=/usr/local/cuda-%s" % (built, built) \
        if built else "install the toolkit of the CUDA PyTorch was built with (torch.version.cuda says which) and " \
        "build with CUDA_HOME pointing at it"
    if not cudas:
        return advice(other)
    cuda = max(cudas, key=version_key)
    return or_else(say("install the PyTorch build for CUDA %s, the toolkit's: %s", cuda,
                       torch_install(compat, None, cuda, platform)), other)


def unsupported_gpu_fix(floor: str, last_release: str) -> Fix:
    """No build of the framework since ``last_release`` runs on this GPU, and no source build helps."""
    return advice("run it on a GPU of compute capability %s or newer, or on the CPU (no PyTorch wheel since %s has "
                  "kernels for this one)" % (floor, last_release))


def arch_fix(compat: Compat, cc: Optional[str], framework: str, driver: Optional[str] = None,
             python: Optional[str] = None, release: Optional[str] = None, platform: str = "linux",
             held: Optional[str] = None) -> Fix:
    """The framework build has no kernels for this GPU: a build for a CUDA that knows it (the newest
    architecture's CUDA when the GPU is not named: that build runs on every GPU before it too). Where the paste
    names its driver or Python, PyTorch's build is the one check would choose on that machine: the newest with
    kernels for the GPU, wheels for that Python and a CUDA that driver runs, else that build with the driver it
    needs first."""
    ccs = [c for a in compat.architectures() for c in a.ccs if c.replace(".", "").isdigit()]
    newest = max(ccs, key=version_key) if ccs else None
    wanted = cc or newest
    first = compat.first_cuda_for_cc(wanted) if wanted else None
    # A GPU PyTorch's binaries dropped (a Tesla K40m, 3.5): the last release compat's rows name for it (the first CUDA
    # that knows the GPU is no guide: cu118 has no sm_35), where the paste names no driver or Python to choose by.
    dropped = next((r for r in compat.dropped_gpus("torch") if cc and version_key(cc) < version_key(r["below_cc"])),
                   None) if framework == "PyTorch" and not (driver or python) else None
    if dropped is not None:
        return unsupported_gpu_fix(dropped["below_cc"], dropped["last_release"]) if not dropped.get("last_cuda") else \
            say("install PyTorch %s, the last release with %s kernels: %s", dropped["last_release"],
                "sm_%s" % (cc or "").replace(".", ""), torch_install(compat, dropped["last_release"],
                                                                      str(dropped["last_cuda"])))
    if framework == "PyTorch" and first and (driver or python):
        found = _torch_for_paste(compat, cc, driver, python, release, platform, held)
        if found is not None:
            return found
    if framework == "PyTorch" and first:
        cuda = first if mm_at_least(first, "11.0") else "11.8"
        kernels = ("sm_%s kernels" % cc.replace(".", "")) if cc else _torch_arch_span(compat, cuda)
        return say("install a PyTorch build for CUDA %s or newer, which has %s: %s", first, kernels,
                   torch_install(compat, None, cuda))
    if cc is None:  # a program built from source with a CUDA older than the GPU (darknet-2836: CUDA 9.0, Turing)
        return said("install a CUDA toolkit new enough for the GPU (CUDA %s or newer knows every GPU up to the newest; "
                    "`%%s` prints its compute capability) and rebuild the program for it (nvcc -gencode "
                    "arch=compute_XY,code=sm_XY for compute capability X.Y; CMAKE_CUDA_ARCHITECTURES; "
                    "TORCH_CUDA_ARCH_LIST for PyTorch extensions), or install a build of it compiled for that compute "
                    "capability" % first, "nvidia-smi --query-gpu=name,compute_cap --format=csv")
    arch = cc.replace(".", "")
    family = compat.arch_for_cc(cc)
    last = family.last_cuda if family is not None and family.last_cuda else ""  # a CUDA major dropped it since
    reach = ("CUDA %s to %s" % (first, last)) if first and last else ("CUDA %s or newer" % first) if first else ""
    return advice("rebuild the program for this GPU's architecture (compute capability %s)%s: nvcc -gencode "
                  "arch=compute_%s,code=sm_%s (CMAKE_CUDA_ARCHITECTURES=%s; TORCH_CUDA_ARCH_LIST for PyTorch "
                  "extensions), install a build of it compiled for sm_%s%s, or run it on another GPU, one the build "
                  "has kernels for" % (cc, (" with %s, whose nvcc knows it" % reach) if reach else "", arch, arch, arch,
                                       arch, (" (%s)" % reach) if reach else ""))


def _torch_arch_span(compat: Compat, cuda: str) -> str:
    """What a PyTorch build for `cuda` has kernels for, the GPU unnamed (compat's [pytorch_arch]): its lowest compute
    capability up to the newest GPUs, and the build an older GPU needs (cu129 starts at 7.5; cu126 at 5.0)."""
    def low(row: Dict[str, Any]) -> str:
        return min((str(a) for a in row.get("arch", [])), key=version_key, default="")
    rows = [r for r in compat.framework_rows("pytorch_arch") if low(r)]
    this = [low(r) for r in rows if r.get("cuda") == mm_text(cuda)]
    if not this:
        return "kernels for the newest GPUs"
    oldest = min(rows, key=lambda r: version_key(low(r)))
    older = "; an older GPU needs the CUDA %s build, from %s" % (oldest["cuda"], low(oldest)) \
        if version_key(low(oldest)) < version_key(min(this, key=version_key)) else ""
    return "kernels from compute capability %s up to the newest GPUs%s" % (min(this, key=version_key), older)


def ptx_jit_or_arch_fix(arch: Fix) -> Fix:
    """No kernels for the GPU, or the driver's PTX JIT library missing: see whether the driver has it first."""
    return or_else(run("ldconfig -p | grep libnvidia-ptxjitcompiler", text="check that the driver's PTX JIT "
                       "compiler is installed (`ldconfig -p | grep libnvidia-ptxjitcompiler`; reinstall the driver's "
                       "compute libraries if not, or start a container with NVIDIA_DRIVER_CAPABILITIES=compute,utility)"),
                   arch, "%s; if it is there, %s")


def _torch_for_paste(compat: Compat, cc: Optional[str], driver: Optional[str], python: Optional[str],
                     release: Optional[str], platform: str, held: Optional[str] = None) -> Optional[Fix]:
    """check's choice of a PyTorch build on the machine the paste describes (its driver, GPU and Python), never the
    build the paste already runs; `held` is the newest release pip installs on that Python (a row's minor, made
    whole)."""
    gpus = [GpuFacts(index=0, compute_capability=cc)] if cc else []
    machine = Facts(driver=DriverFacts(version=driver), gpus=gpus, host=HostFacts(platform=platform))
    for_python = (" and Python %s" % python) if python else ""
    kernels = "sm_%s kernels" % cc.replace(".", "") if cc else "kernels for this GPU"
    drives = compat.driver_drives_gpu(driver, cc)[0] if driver and cc else None
    best = best_torch_variant(machine, compat, release, python=python) if drives is not False else None
    if best is not None and release and "+cu" in release and mm_text(release) == best["torch"] and \
            torch_variant_tag(best["cuda"]) == release.split("+")[1]:
        best = best_torch_variant(machine, compat, None, python=python)  # the build that failed: another one

    def pin(row: Dict[str, Any]) -> str:
        # The newest release pip installs there is PyPI's build; before PyTorch's per-CUDA indexes, another CUDA's
        # build is attested for X.Y.0 (the rows' source, PyTorch's previous-versions page), so that one is named.
        if held and mm_text(held) == row["torch"] and (row.get("channel") == "stable" or
                                                        not before_torch_indexes(compat, held)):
            return held
        return str(row["torch"])

    if best is not None:
        return say("install the PyTorch %s build for CUDA %s, the newest with %s%s%s: %s",
                   best["torch"], best["cuda"], kernels, for_python, (" that driver %s runs" % driver) if driver else "",
                   torch_install(compat, pin(best), best["cuda"]))
    best = best_torch_variant(Facts(gpus=gpus, host=HostFacts(platform=platform)), compat, release, python=python)
    floor = compat.min_driver(best["cuda"], platform) if best is not None else None
    if best is None or floor is None or not (floor.version or floor.branch):
        return None
    return then(driver_fix(floor.version or "the R%s branch or later" % floor.branch, platform), say(
        "the PyTorch %s build for CUDA %s (%s%s; driver %s runs no CUDA that has them): %s",
        best["torch"], best["cuda"], kernels, for_python, driver, torch_install(compat, pin(best), best["cuda"])))


def xla_cuda_tools_fix(compat: Compat, cuda_major: int) -> Fix:
    """XLA could not find ptxas or libdevice: the nvcc wheel of the CUDA major brings both (where NVIDIA ships
    one); or point XLA at a toolkit."""
    toolkit = "export XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda"
    project = compat.pip_project("ptxas", cuda_major)
    if project is None:
        return run(toolkit, text="point XLA at a CUDA %d toolkit (it holds ptxas and libdevice): %s"
                   % (cuda_major, toolkit))
    return run('pip install -U "%s"' % project, alternatives=[toolkit],
               text='pip install -U "%s" (it ships ptxas and libdevice where JAX and TensorFlow look), or point XLA '
                    'at a CUDA toolkit: %s' % (project, toolkit))


def trt_rebuild_fix() -> Fix:
    """A TensorRT engine serialized by another TensorRT version (or GPU)."""
    return run("trtexec --onnx=model.onnx --saveEngine=model.engine", alternatives=["pip uninstall tensorrt"], text=(
               "rebuild the engine with the TensorRT that runs it (`trtexec --onnx=model.onnx --saveEngine=model.engine`)"
               " or install the TensorRT release that built it; where two are installed (a tarball's trtexec, a pip "
               "tensorrt wheel), keep one: `pip uninstall tensorrt`, or remove the libnvinfer packages"))


def paging_file_fix() -> Fix:
    """Windows' commit limit was reached loading the CUDA DLLs."""
    return command_fix(["Get-CimInstance Win32_ComputerSystem | Set-CimInstance -Property "
                        "@{AutomaticManagedPagefile=$true}"], shell=WINDOWS_SHELL, root=True,
                       text="let Windows manage a larger paging file (administrator PowerShell: `Get-CimInstance "
                            "Win32_ComputerSystem | Set-CimInstance -Property @{AutomaticManagedPagefile=$true}`, "
                            "then restart), and use fewer DataLoader workers (num_workers)")


def windows_32bit_fix(dll: str) -> Fix:
    """A 32-bit DLL in a 64-bit process (193)."""
    return stated("replace the 32-bit %s with the 64-bit one (x64 download) and take the 32-bit copy's folder off "
                  "PATH" % (dll or "DLL"))


def status_words_fix(words: str) -> Fix:
    """A status code without a builder of its own: NVIDIA's meaning and cudnn-doctor's reading of it."""
    return advice(words)


def no_gpu_fix() -> Fix:
    """The driver is there but no GPU is visible to programs."""
    return run("nvidia-smi -L", text="check `nvidia-smi -L` lists the GPU; unset CUDA_VISIBLE_DEVICES (or set it to "
                                     "the GPU's index); start containers with `--gpus all`")


def nvrtc_link_fix() -> Fix:
    """cuDNN 8's runtime-compiled kernels open libnvrtc.so, which only development packages link."""
    folder = "$(python -c 'import nvidia.cuda_nvrtc, os; print(os.path.dirname(nvidia.cuda_nvrtc.__file__))')/lib"
    return run("cd %s" % folder, "ln -sf libnvrtc.so.* libnvrtc.so",
               text="link libnvrtc.so to the versioned NVRTC the program has: for pip's NVRTC `cd %s && ln -sf "
                    "libnvrtc.so.* libnvrtc.so`; for a toolkit install its cuda-nvrtc-dev package" % folder)


def reinstall_package_fix(package: str, windows: bool = True) -> Fix:
    """A Python package's own library (a DLL, or one it imports) will not load: reinstall the package whole; on
    Windows with the Visual C++ runtime its DLLs import."""
    return run("pip install --force-reinstall %s" % package,
               text="reinstall %s whole (`pip install --force-reinstall %s`, the CUDA variant you use)%s" % (
                   package, package, ", and install the latest Microsoft Visual C++ Redistributable (x64) its DLLs "
                   "import" if windows else ""))


def zlib_fix(download: str) -> Fix:
    """cuDNN 8.3-8.9 on Windows load zlibwapi.dll at run time."""
    return advice("put zlibwapi.dll (the x64 one from %s) next to the cuDNN DLLs or in a folder on PATH" % download)


def ptx_driver_fix(platform: str) -> Fix:
    """PTX from a newer toolkit than the driver can JIT."""
    return say("%s; or build with the CUDA toolkit the driver supports (`%s` shows its CUDA version)",
               driver_fix(None, platform), run("nvidia-smi"))


def cudnn_startup_fix() -> Fix:
    """cuDNN could not start: driver, memory, or a cuDNN that does not fit the CUDA it runs with."""
    return said("check `%s` works (else repair the driver), free GPU memory, and reinstall the cuDNN build made for "
                "the program's CUDA (the nvidia-cudnn-cuXX wheel of its CUDA major, or the framework's own "
                "[and-cuda]/bundled build); where another cuDNN is found first, take its folder off LD_LIBRARY_PATH "
                "or put the right one's first", "nvidia-smi")


def engine_fix(compat: Compat, cc: Optional[str], python: Optional[str] = None, memory_first: bool = False) -> Fix:
    """No cuDNN engine: the framework build for this GPU (with wheels for the paste's Python), then memory; memory
    first where the framework drops every algorithm whose workspace it cannot allocate (PyTorch's Conv_v7.cpp)."""
    build = arch_fix(compat, cc, "PyTorch", python=python)
    if memory_first:
        return say("%s; if memory is not it: upgrade cuDNN with the framework's build, whose wheels bring their own: %s",
                   memory_fix(), build)
    return say("upgrade cuDNN with the framework's build, whose wheels bring their own: %s; and if memory is tight: %s",
               build, memory_fix())


def driver_library_fix(platform: str) -> Fix:
    """libcuda.so.1 is not found: put WSL's driver folder on the path; in a container, start it with the GPUs (the
    runtime mounts the host driver's libraries); else install the driver."""
    if platform == "windows":
        return driver_fix(None, platform)
    wsl = said("on WSL: `%s` (for good: add that folder to /etc/ld.so.conf.d and run `%s`)",
               "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH", "sudo ldconfig")
    container = said("in a container: start it with the GPUs, `%s` (the NVIDIA Container Toolkit on the host)",
                     "docker run --gpus all ...")
    return or_else(or_else(wsl, container, "%s; %s"), driver_fix(None, platform), "%s; elsewhere: %s")


# Fixes read from the machine a paste describes (explain.paste_facts): its folders, wheels, releases and GPU.

def drop_folder_fix(folder: str, what: str) -> Fix:
    """`folder` (named in the paste) holds the copy that shadows the right one: take it off LD_LIBRARY_PATH."""
    return say("take %s (%s) off LD_LIBRARY_PATH: %%s; and out of /etc/ld.so.conf.d if it is listed there" % (
        folder, what), ld_library_path_without(Facts(), [folder]))


def wheel_lib_path_fix(module: str, project: str) -> Fix:
    """A framework that searches only the plain path (ONNX Runtime) does not find the installed `project` wheel's
    libraries: put its lib folder first (the wheel stays as it is)."""
    folder = "$(python -c 'import %s, os; print(os.path.dirname(%s.__file__))')/lib" % (module, module)
    line = 'export LD_LIBRARY_PATH="%s:$LD_LIBRARY_PATH"' % folder
    return run(line, text="%s is installed but not on the loader's path: `%s` (in the program's environment; or "
                          "import torch first, which loads it)" % (project, line))


def duplicate_wheel_fix(extra: str, kept: str) -> Fix:
    """Two CUDA builds of one library are installed as two wheels: remove the one of the other CUDA."""
    return run("pip uninstall -y %s" % extra, "pip install --force-reinstall --no-deps %s" % kept,
               text="two builds of one library are installed; keep the one of the program's CUDA: `pip uninstall -y "
                    "%s && pip install --force-reinstall --no-deps %s` (the uninstall removes files the two share)"
                    % (extra, kept))


def secure_boot_fix() -> Fix:
    """The kernel refuses the unsigned nvidia module under Secure Boot: enrol the signing key, or turn Secure Boot off."""
    return run("mokutil --sb-state", "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der", "sudo reboot",
               text="Secure Boot rejects the unsigned nvidia module: enrol the key DKMS signs it with (`sudo mokutil "
                    "--import /var/lib/shim-signed/mok/MOK.der`, choose a password, reboot and pick 'Enroll MOK' in "
                    "the blue screen), or disable Secure Boot in the firmware settings; `mokutil --sb-state` shows it")


def wsl_symlink_fix() -> Fix:
    """ldconfig on WSL warns that the Windows driver's libcuda copies are not symbolic links: harmless."""
    return stated("nothing to fix: the Windows driver ships libcuda.so and libcuda.so.1 as copies in "
                  "C:\\Windows\\System32\\lxss\\lib (mounted at /usr/lib/wsl/lib); to silence the warning, make them "
                  "symbolic links to libcuda.so.1.1 there (mklink in an administrator prompt)")


def module_not_loaded_fix(platform: str) -> Fix:
    """The nvidia module is not loaded: modprobe says why (Secure Boot, no module for this kernel), else the driver."""
    return say("`%s` says why: 'Key was rejected by service' is Secure Boot (%s); 'Module nvidia not found' is no "
               "module for the running kernel (reinstall the driver's DKMS or akmod package for it); with no driver at "
               "all: %s", run("sudo modprobe nvidia"), secure_boot_fix(), driver_fix(None, platform))


def image_driver_files_fix(path: str) -> Fix:
    """The image carries a driver library the NVIDIA runtime mounts from the host."""
    name = path.rpartition("/")[2] or "libnvidia-*.so*"
    return advice("the image itself holds %s, which the NVIDIA container runtime mounts from the host: remove the "
                  "driver files from the image (no NVIDIA driver or libnvidia-* package in the Dockerfile; base it on an "
                  "nvidia/cuda image), then run it again" % q(name))


def torch7_rebuild_fix(cc: Optional[str]) -> Fix:
    """Lua Torch7's cutorch/cunn have no kernels for this GPU: rebuild them (there is no binary to install)."""
    arch = cc or "<cc>"
    line = "TORCH_CUDA_ARCH_LIST=%s luarocks install cutorch && TORCH_CUDA_ARCH_LIST=%s luarocks install cunn" % (
        arch, arch)
    return run(line, text="rebuild Torch7's cutorch and cunn for this GPU with a CUDA toolkit that knows compute "
                          "capability %s: `%s` (Torch7 is no longer maintained; PyTorch is its successor)" % (arch, line))


def nvcc_arch_fix(first_cuda: Optional[str], cc: str, platform: str = "linux") -> Fix:
    """nvcc predates the GPU: a toolkit that knows it, then a build for its architecture. An older toolkit first on
    PATH (apt's nvidia-cuda-toolkit in /usr/bin) shadows a newer one as often as none is installed: PATH first, since
    removing a packaged toolkit can break what else uses it."""
    arch = cc.replace(".", "")
    words = ("install CUDA %s or newer (its nvcc compiles for compute capability %s), then rebuild for this GPU: "
             "TORCH_CUDA_ARCH_LIST=\"%s\" for PyTorch extensions, nvcc -gencode arch=compute_%s,code=sm_%s "
             "(CMAKE_CUDA_ARCHITECTURES=%s) otherwise; where a newer toolkit is installed already, an older nvcc comes "
             "first: put the newer one's bin first on PATH%s, or drop the older one's bin from PATH (`%%s` lists each)" % (
                 first_cuda or "a release", cc, cc, arch, arch, arch,
                 " and CUDA_PATH at it" if platform == "windows" else ""))
    if platform == "windows":
        return command_fix(["Get-Command nvcc -All"], shell=WINDOWS_SHELL, text=words % "Get-Command nvcc -All")
    return said(words, "which -a nvcc")


def triton_ptxas_fix(first_cuda: Optional[str]) -> Fix:
    """Triton's bundled ptxas predates the GPU: point it at a toolkit's ptxas that knows the GPU (TRITON_PTXAS_PATH),
    or a Triton release whose ptxas does."""
    line = set_variable("TRITON_PTXAS_PATH", "/usr/local/cuda/bin/ptxas")
    return run(line, shell=target_shell(), text="with a CUDA %s or newer toolkit installed, point Triton at its ptxas: "
               "`%s` (or upgrade torch with its pytorch-triton to a release whose bundled ptxas knows this GPU)" % (
                   first_cuda or "new enough", line))


def supported_gpu_fix(floor: str) -> Fix:
    """The GPU is below the lowest compute capability cuDNN supports: another GPU, or the framework without cuDNN."""
    return advice("run on a GPU of compute capability %s or higher; on this GPU, run without cuDNN (the framework's "
                  "own kernels: Caffe's engine: CAFFE, Torch7's cunn instead of cudnn, PyTorch's "
                  "torch.backends.cudnn.enabled = False)" % floor)


def harmless_warning(why: str) -> Fix:
    """A warning the paste shows that needs no change; `why` says when it goes away."""
    return stated("nothing to fix: %s" % why)


def driver_or_build_fix(build: Fix, platform: str) -> Fix:
    """A framework build for the CUDA the driver runs, or a driver for the build's CUDA."""
    return or_else(build, driver_fix(None, platform), "%s. Or: %s")


def remove_compat_fix() -> Fix:
    """The cuda-compat package's libcuda serves data-center GPUs only: remove it (or its folder from the path)."""
    return run("sudo apt-get remove --purge 'cuda-compat-*'", "sudo ldconfig",
               text="remove CUDA's forward-compatibility package (`sudo apt-get remove --purge 'cuda-compat-*' && sudo "
                    "ldconfig`), or take its .../compat folder off LD_LIBRARY_PATH: it serves data-center GPUs only")


def newer_driver_or_no_compat_fix(floor: Optional[str], platform: str) -> Fix:
    """Error 804 where the paste names neither the GPU nor the compat folder: the driver the image's CUDA needs (the
    usual way out, on any GPU), else the forward-compatibility package off the machine."""
    return or_else(driver_fix(floor, platform), remove_compat_fix())

