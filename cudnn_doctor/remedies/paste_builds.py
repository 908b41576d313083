"""Fixes for pastes about building or pairing with PyTorch and about a GPU a library or a process cannot use:
torchvision of another CUDA than PyTorch, an extension built against another PyTorch, a CUDA extension built without a
toolkit, a host compiler nvcc refuses, a Windows DLL whose initialisation failed, a GPU older than a library's
kernels, no GPU visible to the process.
Pure: the versions come from the paste, the rest from compat."""
from __future__ import annotations

from typing import Optional

from ..knowledge import Compat
from ..model import Fix
from ..model_fix import WINDOWS_SHELL
from .acting import system, unset_variable
from .shell import advice, or_else, q, run, said, say
from .software import torch_source
from ..versions import reaches

# Microsoft's permanent link to the newest Visual C++ Redistributable for x64 (learn.microsoft.com, "Latest supported
# Visual C++ Redistributable downloads").
VC_REDIST_X64 = "https://aka.ms/vs/17/release/vc_redist.x64.exe"


def torchvision_pair_fix(compat: Compat, cuda: Optional[str], release: Optional[str] = None) -> Fix:
    """torch and torchvision from one index, the one of PyTorch's CUDA: pip picks the torchvision its pin pairs with
    that torch."""
    if not cuda:
        return said("reinstall both from one index: `%s` (with PyTorch's --index-url for a CUDA build)",
                    system("pip install --force-reinstall torch torchvision", privileged=False))
    pin, _, rest = torch_source(compat, release, cuda).partition(" ")
    return run(system("pip install --force-reinstall %s torchvision %s" % (pin, rest), privileged=False))


def cuda_toolkit_for_extension_fix(cuda: Optional[str], platform: str) -> Fix:
    """A CUDA extension build found no toolkit: the toolkit of PyTorch's CUDA, and CUDA_HOME naming it."""
    which = "CUDA %s's toolkit (PyTorch's CUDA)" % cuda if cuda else \
        "the CUDA toolkit of PyTorch's CUDA (torch.version.cuda says which)"
    if platform == "windows":
        if not cuda:
            return advice("install %s from NVIDIA's CUDA downloads (the driver alone has no nvcc), then set CUDA_HOME "
                          "to its folder (C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\vX.Y) and build again"
                          % which)
        home = "$env:CUDA_HOME = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v%s'" % cuda
        return run(home, shell=WINDOWS_SHELL, text="install %s from NVIDIA's CUDA downloads (the driver alone has no "
                                                   "nvcc), then `%s` and build again" % (which, home))
    if cuda:
        return said("install %s (NVIDIA's cuda-toolkit-%s package; the driver alone has no nvcc), then `%%s` and build "
                    "again" % (which, cuda.replace(".", "-")), "export CUDA_HOME=/usr/local/cuda-%s" % cuda)
    return advice("install %s (the driver alone has no nvcc), then set CUDA_HOME to its folder (/usr/local/cuda-X.Y) "
                  "and build again" % which)


def host_compiler_fix(newest: Optional[str], platform: str) -> Fix:
    """nvcc refuses the host compiler: the newest one it accepts, named to the build; or a CUDA that accepts this
    one (its installation guide lists the host compilers)."""
    if platform == "windows":
        return advice("install the Visual Studio release this CUDA's installation guide lists (its Build Tools), or a "
                      "CUDA release that supports yours; nvcc's -allow-unsupported-compiler skips the check at your "
                      "own risk")
    if not newest:
        return advice("install the newest gcc this CUDA's installation guide lists and build with CC, CXX and "
                      "CUDAHOSTCXX naming it, or a CUDA release that supports your gcc")
    return or_else(said("`%s`, then build with `%s`", system("apt install gcc-%s g++-%s" % (newest, newest)),
                        "export CC=gcc-%s CXX=g++-%s CUDAHOSTCXX=g++-%s" % (newest, newest, newest)),
                   "a CUDA release whose nvcc supports your gcc (its installation guide lists the host compilers); "
                   "nvcc's -allow-unsupported-compiler skips the check at your own risk")


def vc_redist_fix() -> Fix:
    """A DLL's initialisation failed on Windows: the Visual C++ runtime it was built against."""
    return advice("install the latest Microsoft Visual C++ Redistributable for x64 (%s), then start a new terminal"
                  % VC_REDIST_X64)


def newer_gpu_fix(floor: Optional[str], library: str, instead: str) -> Fix:
    """The GPU is older than every kernel of a library: another GPU, or what runs on this one."""
    need = "a GPU of compute capability %s or newer" % floor if floor else "a newer GPU"
    return advice("run %s on %s, or use %s on this one" % (library, need, instead))


def visible_devices_fix(platform: str) -> Fix:
    """The process sees no GPU: what CUDA_VISIBLE_DEVICES says against what the machine has."""
    if platform == "windows":
        look, machine, clear = "echo $env:CUDA_VISIBLE_DEVICES", "nvidia-smi -L", "Remove-Item Env:CUDA_VISIBLE_DEVICES"
        return run(look, machine, clear, shell=WINDOWS_SHELL,
                   text="`%s` says what the process is told and `%s` what the machine has: `%s`, or set it to an index "
                        "nvidia-smi lists ($env:CUDA_VISIBLE_DEVICES = '0'); no GPU in nvidia-smi is a driver problem"
                        % (look, machine, clear))
    return said("`%s` says what the process is told and `%s` what the machine has: `%s`, or set it to an index "
                "nvidia-smi lists (CUDA_VISIBLE_DEVICES=0); no GPU in nvidia-smi is a driver problem, and a container "
                "needs --gpus all", 'echo "$CUDA_VISIBLE_DEVICES"', "nvidia-smi -L", "unset CUDA_VISIBLE_DEVICES")


def extension_rebuild_fix(module: str, source: str) -> Fix:
    """A PyTorch extension compiled against another torch: the build of it for the installed torch, or that torch;
    built here from `source` (its PyPI name, or where pip finds it when PyPI has none: compat's extension_sources)."""
    return said("reinstall %s built for the installed torch (a wheel whose name gives that torch and CUDA; or build "
                "it here: `%%s`), or install the torch release it was built for" % module,
                "pip install --force-reinstall --no-build-isolation --no-cache-dir %s" % q(source))


def cuda_torch_first_fix(torch: Fix, rebuild: Fix) -> Fix:
    """A CPU-only torch where an extension was built for that release's CUDA build: that build first."""
    return or_else(say("install the CUDA build of that PyTorch release: %s", torch), rebuild, "%s; or %s")


def source_extension_rebuild_fix(folder: str) -> Fix:
    """A PyTorch extension built in a source tree (not installed from a wheel) against another torch: built again
    there, against the installed torch."""
    return said("rebuild the extension in its source tree against the installed torch (remove the old build first: "
                "its build/ folder and the .so files under %s), e.g. `%%s` where its setup.py is; or reinstall the "
                "torch (and torchvision) release it was built for" % folder, "python setup.py build develop")


def one_process_per_gpu_fix(visible: int) -> Fix:
    """More processes than visible GPUs, each taking the GPU of its rank: one process per visible GPU."""
    return advice("launch one process per visible GPU (--nproc_per_node=%d, torchrun's --nproc-per-node=%d), or make "
                  "more GPUs visible in CUDA_VISIBLE_DEVICES" % (visible, visible))


def rank_per_gpu_fix() -> Fix:
    """Ranks of one NCCL communicator sharing a GPU: each process its own GPU, chosen before NCCL starts."""
    return advice("give each rank its own GPU before the process group starts: torch.cuda.set_device(local_rank) "
                  "with local_rank from the LOCAL_RANK variable torchrun sets (or CUDA_VISIBLE_DEVICES per process), "
                  "remove a GPU index hard-coded in the script, and launch no more processes per node than it has "
                  "GPUs (torchrun --nproc-per-node)")


def device_index_fix() -> Fix:
    """A GPU index the process does not have: what the machine lists against the index asked for."""
    return said("`%s` lists the GPUs (indices from 0; CUDA_VISIBLE_DEVICES renumbers the ones it names from 0): ask "
                "for an index below the number the process sees, or one process per GPU", "nvidia-smi -L")



def cpu_build_or_driver_fix(gpu_build: Fix, driver: Fix) -> Fix:
    """PyTorch sees no CUDA: torch.version.cuda tells a CPU-only build (None) from a CUDA build the driver cannot
    run; the fix for each."""
    look = run('python -c "import torch; print(torch.version.cuda)"')
    return or_else(say("see which: %s prints None for a CPU-only build, then %s", look, gpu_build), driver,
                   "%s; else the driver is older than that build's CUDA: %s")


def newer_toolkit_fix(floor: str, platform: str) -> Fix:
    """A build that needs a newer CUDA toolkit than the one it found: that toolkit (or newer), named to the build."""
    if platform == "windows":
        return advice("install the CUDA %s toolkit or newer from NVIDIA's CUDA downloads, set CUDA_HOME (and CUDA_PATH) "
                      "to its folder and build again in a new shell" % floor)
    home = "export CUDA_HOME=/usr/local/cuda-%s PATH=/usr/local/cuda-%s/bin:$PATH" % (floor, floor)
    return said("install the CUDA %s toolkit or newer (NVIDIA's cuda-toolkit-%s package; a conda build's own "
                "cudatoolkit/cuda-nvcc pin instead, where conda or Nix provides it), then `%%s` and build again" % (
                    floor, floor.replace(".", "-")), home)


def bitsandbytes_fix(forced: bool = False, checkout: Optional[str] = None) -> Fix:
    """bitsandbytes' native library did not load: its newest release that accepts the installed PyTorch, whose wheels
    carry the library for every CUDA it supports (from 0.43 on, one wheel per platform). `forced`: BNB_CUDA_VERSION
    asks for one of another CUDA, so it goes first (bitsandbytes' own advice: set it empty). `checkout`: it runs from
    a source folder, whose library is built there (its CMake build) unless the wheel is installed instead."""
    # The installed PyTorch named as a requirement: pip then picks the newest bitsandbytes that accepts it, where a
    # plain upgrade would replace an older PyTorch with PyPI's default build (its newest releases require torch>=2.3).
    install = 'pip install -U bitsandbytes "torch==$(python -c \'import torch; print(torch.__version__)\')"'
    first = [unset_variable("BNB_CUDA_VERSION")] if forced else []
    cmake = "cd %s && cmake -DCOMPUTE_BACKEND=cuda -S . && cmake --build ." % q(checkout) if checkout else ""
    built = ("; run that from another folder than the checkout %s (Python started inside it imports the checkout "
             "first), or keep the checkout and build its library there: `%s`" % (checkout, cmake)) if checkout else ""
    return run(*first, install, "python -m bitsandbytes", alternatives=[cmake] if cmake else [],
               text="%sreinstall bitsandbytes at the newest release that accepts the PyTorch you have (its wheels carry "
                    "the native library for the CUDA releases they support): `%s`; then `python -m bitsandbytes` "
                    "says which library it loads, and where it says PyTorch sees no CUDA, the torch installed is a "
                    "CPU-only build: install PyTorch's CUDA build first%s" % (
                        "`%s` (and remove it where it is set for good: ~/.bashrc, the notebook's or container's "
                        "environment), then " % first[0] if first else "", install, built))


def conda_channel_fix(channel: str, package: str, release: str) -> Fix:
    """conda's higher-priority channel replaced the CUDA build: ask for it from its own channel, and give that
    channel priority so the next update keeps it."""
    return run('conda install -c %s "%s=%s=*cuda*"' % (channel, package, release),
               "conda config --prepend channels %s" % channel,
               text="install the CUDA build again from its own channel: `conda install -c %s \"%s=%s=*cuda*\"`, and "
                    "give that channel priority so the next update keeps it: `conda config --prepend channels %s`" % (
                        channel, package, release, channel))


def cuda_feature_rebuild_fix(program: str) -> Fix:
    """A program compiled without its CUDA feature: its build with the feature on, or its release built that way."""
    return advice("rebuild %s with its CUDA feature on (a Rust program: cargo build --release --features cuda, as its "
                  "project's GPU Dockerfile or build notes do), with the CUDA toolkit on PATH, or install its release "
                  "built for CUDA" % program)


def ggml_rebuild_fix(cc: Optional[str]) -> Fix:
    """llama.cpp rebuilt with CUDA for this GPU's architecture (its build guide: GGML_CUDA, CMAKE_CUDA_ARCHITECTURES;
    "native" asks nvcc for the GPUs of the machine that builds)."""
    arch = cc.replace(".", "") if cc else "native"
    configure = "cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=%s" % arch
    build = "cmake --build build --config Release"
    return run(configure, build, text="rebuild llama.cpp for this GPU's architecture, from a clean build folder: `%s` "
               "then `%s` (%s; https://github.com/ggml-org/llama.cpp/blob/master/docs/build.md)" % (
                   configure, build, "compute capability %s" % cc if cc else "native: the GPUs of the machine that "
                   "builds"))


def mmcv_full_fix() -> Fix:
    """mmcv with its ops: mmcv-full for the 1.x line (mmdetection 2.x), the full mmcv from 2.0 on, each built for the
    installed PyTorch and CUDA (OpenMMLab's mim picks the prebuilt wheel for them)."""
    drop, old = "pip uninstall -y mmcv mmcv-lite mmcv-full", 'mim install "mmcv-full<1.8"'
    return run(drop, "pip install -U openmim", "mim install mmcv", alternatives=[old], text="`%s`, then the full "
               "package built for the installed PyTorch and CUDA: `pip install -U openmim` and `mim install mmcv` (mmcv "
               "2.x, for mmdetection 3.x), or `%s` for the 1.x line that mmdetection 2.x needs" % (drop, old))


def spconv_cuda_build_fix(compat: Compat, cuda: Optional[str]) -> Fix:
    """spconv's CUDA build in place of the CPU-only spconv and cumm: the spconv-cuXYZ of the CUDA PyTorch uses (the
    newest build of that major not newer than it), which brings its cumm-cuXYZ. The CPU and CUDA packages install
    the same folders, so the build is removed too before it goes in again (else pip finds it installed, its files
    gone with the CPU package's: spconv#423)."""
    builds = compat.spconv_cuda_builds()
    look = "pip list 2>/dev/null | grep -iE '^(spconv|cumm)'"
    fitting = [b for b in builds if cuda and b.split(".")[0] == cuda.split(".")[0] and reaches(cuda, b)]
    if fitting:
        tag = fitting[-1].replace(".", "")
        drop = "pip uninstall -y spconv cumm spconv-cu%s cumm-cu%s" % (tag, tag)
        install = "pip install spconv-cu%s" % tag
        return run(look, drop, install, text="see which spconv and cumm packages there are (`%s`; uninstall any "
                   "spconv-cuXYZ or cumm-cuXYZ of another CUDA too), then `%s` and spconv's build for CUDA %s: `%s` "
                   "(it brings cumm's)" % (look, drop, fitting[-1], install))
    drop = "pip uninstall -y spconv cumm"
    ask = "python -c \"import torch; print(torch.version.cuda)\""
    return run(look, drop, ask, text="see which spconv and cumm packages there are (`%s`), uninstall them all (`%s`, "
               "and every spconv-cuXYZ and cumm-cuXYZ it lists), then install the spconv-cuXYZ build of the CUDA "
               "PyTorch uses (`%s` says it): %s" % (look, drop, ask, ", ".join(
                   "spconv-cu%s" % b.replace(".", "") for b in builds[-5:])))


def spconv_arch_fix(compat: Compat, cc: Optional[str]) -> Fix:
    """libspconv rebuilt with the GPU's architecture in cumm's architecture list."""
    variable = compat.spconv_arch_variable()
    if cc:
        line = "export %s=%s" % (variable, q(cc))
        return run(line, text="rebuild libspconv with this GPU's architecture: `%s` before its C++ build" % line)
    look = "nvidia-smi --query-gpu=compute_cap --format=csv,noheader"
    return run(look, text="rebuild libspconv with the GPU's architecture in %s (`%s` says it, as 8.6) before its C++ "
               "build" % (variable, look))


def supported_gpu_fix(program: str, floor: str) -> Fix:
    return advice("run %s on a GPU of compute capability %s or newer" % (program, floor))
