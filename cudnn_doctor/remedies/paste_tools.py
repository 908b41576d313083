"""Fixes for what a named tool says of itself in a paste: a TensorRT engine built on another GPU model, JAX's cuSolver
handle and its CUDA plugin, NCCL's NVLink SHARP transport, and a pip that finds no release of a pin for the Python in use."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..knowledge import Compat
from ..model import WINDOWS_SHELL, Fix
from .acting import doctor, on_machine, pip, set_variable
from .frameworks import tensorflow_wheels_fix
from .paste_answers import fabric_manager_for_driver_fix
from .paste_python import supported_python_fix
from .paste_runtime import memory_fix, reinstall_package_fix
from .shell import advice, or_else, q, run, said, say
from .shells import command_fix

_TRTEXEC = "trtexec --onnx=model.onnx --saveEngine=model.engine"


def trt_engine_device_fix() -> Fix:
    """An engine serialized on another GPU model: built again on this one (or for a range of GPU models)."""
    return said("rebuild the engine on this GPU from its ONNX model: %s; an engine meant to run on several GPU models "
                "(Ampere and newer) can be built once with TensorRT's hardware compatibility: %s", _TRTEXEC,
                _TRTEXEC + " --hardwareCompatibilityLevel=ampere+")


def cusolver_handle_fix(cuda_major: int) -> Fix:
    """JAX's CUDA wheels at releases made for each other and the driver, ptxas among them; XLA's preallocation off
    where GPU memory is what is short."""
    nvcc = "nvidia-cuda-nvcc-cu%s" % cuda_major
    return say("install JAX's CUDA wheels at releases made for each other: %s, keeping " + nvcc + " (its ptxas) no "
               "newer than the CUDA the driver runs (the 'CUDA Version' %s prints); if GPU memory is short, let XLA "
               "allocate as it goes: %s", jax_cuda_extra_fix(cuda_major),
               run(on_machine("nvidia-smi", privileged=False)), run("export XLA_PYTHON_CLIENT_PREALLOCATE=false"))


def tf_gpu_fix() -> Fix:
    """TensorFlow's GPU build where the paste names no release: its install page's command on Linux and WSL2."""
    return say("on Linux or WSL2: %s; on native Windows, TensorFlow 2.10 is the last release with a GPU",
               run(pip('install "tensorflow[and-cuda]"')))


def tf_linux_gpu_fix(release: str, with_extra: bool, tested: Optional[Dict[str, Any]]) -> Fix:
    """TensorFlow on Linux with its CUDA and cuDNN: the [and-cuda] wheels from the release that has them, else the
    tested CUDA and cuDNN, which check then judges."""
    if with_extra:
        return tensorflow_wheels_fix(release)
    pair = "CUDA %s and cuDNN %s" % (tested["cuda"], tested["cudnn"]) if tested and {"cuda", "cudnn"} <= set(tested) \
        else "the CUDA and cuDNN it was built with"
    return say("install %s (TensorFlow %s's tested build) where the loader finds them; then %s" % (
        pair, release, "%s"), run(doctor("check")))


def tf_wheels_on_path_fix() -> Fix:
    """TensorFlow 2.16 that does not find its own nvidia-* wheels: their lib folders on LD_LIBRARY_PATH, read from the
    installed nvidia package (or a newer TensorFlow)."""
    folders = ("python -c 'import glob, os, nvidia; print(\":\".join(sorted(glob.glob(os.path.join(nvidia.__path__[0], "
               "\"*\", \"lib\")))))'")
    return say("put the nvidia-* wheels' lib folders on LD_LIBRARY_PATH before starting Python: %s (or install a newer "
               "TensorFlow: %s)", run('export LD_LIBRARY_PATH="$(%s)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"' % folders),
               run(pip('install -U "tensorflow[and-cuda]"')))


def either_platform_fix(windows: Fix, linux: Fix) -> Fix:
    """Where the paste does not say its platform: the native-Windows way, or the Linux way."""
    return or_else(linux, windows, "on Linux or WSL2: %s; on native Windows: %s")


def jax_plugin_at_fix(plugin_wheels: List[str], jaxlib: str) -> Fix:
    """JAX's CUDA plugin wheels at jaxlib's release (PyPI has them): the environment's jax and jaxlib stay."""
    return run(pip("install %s" % " ".join(q("%s==%s" % (w, jaxlib)) for w in plugin_wheels)))


def jax_cuda_extra_fix(cuda_major: int) -> Fix:
    """jax, jaxlib and the CUDA plugin at one release: JAX's CUDA extra."""
    return run(pip('install -U "jax[cuda%s]"' % cuda_major))


def nvls_fix(driver: str) -> Fix:
    """NVLink SHARP needs Fabric Manager of the driver's version, with the GPUs reset once it runs; NCCL runs without
    NVLS meanwhile."""
    return say("%s; after Fabric Manager (re)starts, reset the GPUs with no process using them (%s) or reboot; until "
               "then NCCL runs without NVLS: %s", fabric_manager_for_driver_fix(driver or None),
               run(on_machine("nvidia-smi -r", privileged=True)), run("export NCCL_NVLS_ENABLE=0"))


def listed_release_fix(project: str, listed: str) -> Fix:
    """The newest release pip listed as installable here."""
    return run(pip("install %s" % q("%s==%s" % (project, listed))))


def listed_or_other_python_fix(project: str, listed: str, python: str, pinned: str, platform: str) -> Fix:
    """A release pip lists, or the pinned one in an environment with a Python it has wheels for."""
    return say("install a release pip lists here (the newest: %s), or keep %s %s in an environment with Python %s: "
               "%s" % ("%s", project, pinned, python, "%s"), listed_release_fix(project, listed),
               supported_python_fix(python, q("%s==%s" % (project, pinned)), platform))


def older_python_fix(project: str, python: str) -> Fix:
    """No wheel for the Python in use at an index the wheel index does not hold: an environment with an older
    Python, which that index's page for the release names."""
    return advice("%s has no wheels for Python %s there: create an environment with an older Python that the "
                  "release's install page lists, and install it there" % (project, python))


def range_wheels_fix(project: str, spec: str, asker: Optional[str]) -> Fix:
    """No release in the range asked for installs here, and the text does not say which Python they need: their
    files on PyPI say; an environment with such a Python, or a release of the asker that takes what installs here."""
    return said("see which Pythons and platforms the releases of %s in %s have wheels for (https://pypi.org/project/%s/"
                "#files; `%%s` lists those pip can install here), then install in an environment with such a Python%s"
                % (project, spec, project, (", or use a release of %s that accepts one pip lists" % asker) if asker
                   else ""), "pip index versions %s" % project)


def bitness_or_pip_fix(platform: str) -> Fix:
    """pip found no release though the project has wheels for this Python: a 32-bit Python, or a pip too old to read
    the wheels' tags."""
    python = "py" if platform == "windows" else "python3"
    return said("check that the Python is 64-bit (%s prints 64; install the 64-bit build if not) and that pip is "
                "recent (%s)", "%s -c \"import struct; print(struct.calcsize('P') * 8)\"" % python,
                "%s -m pip install -U pip" % python)


def other_python_fix(project: str, python: str, platform: str) -> Fix:
    """No release has a wheel for the paste's Python: an environment with the nearest Python that has one."""
    return say("use Python %s, which %s has wheels for: %s" % (python, project, "%s"),
               supported_python_fix(python, q(project), platform))


def release_python_fix(project: str, release: str, python: str, platform: str,
                       source: Optional[Tuple[str, str]] = None) -> Fix:
    """The pinned release has no wheel for the paste's Python: it in an environment with the nearest Python it has
    one for, from the index or links the paste's own pip command named (``source``: ('-f', URL))."""
    install = q("%s==%s" % (project, release)) + (" %s %s" % (source[0], q(source[1])) if source else "")
    return say("keep %s %s in an environment with Python %s, which it has wheels for: %s" % (
        project, release, python, "%s"), supported_python_fix(python, install, platform))


def uv_floor_fix(project: str, first: str) -> Fix:
    """A release at least the first with a wheel for this Python and platform, as uv adds it."""
    return run('uv add "%s>=%s"' % (project, first))


def driver_or_older_image_fix(driver_fix: Fix, runs: str) -> Fix:
    """A driver for the image's CUDA, or an image of the CUDA the driver runs."""
    return say("%s; or run an image of CUDA " + runs + " or older, which this driver runs", driver_fix)


def llvm_program_fix(torch_build: Optional[Fix]) -> Fix:
    """LLVM inside a program's compiler older than the GPU: where it may be PyTorch's Triton (torch.compile), the
    PyTorch build whose Triton knows the GPU; else the program's own newer release (a toolkit cannot change the LLVM
    a program carries)."""
    other = "upgrade the program whose compiler carries LLVM (Julia's CUDA.jl, TVM, XLA, Numba) to a release that " \
            "knows this GPU; a CUDA toolkit does not change the LLVM it carries"
    if torch_build is None:
        return advice(other)
    return say("where it is PyTorch's torch.compile (Triton carries its own LLVM and ptxas, so no toolkit changes "
               "it): %s; otherwise " + other, torch_build)


def or_reinstall_fix(release: str, known: Fix, package: str) -> Fix:
    """A fix for the one release the text may be, else the package reinstalled whole."""
    return say("where it is %s: %%s; otherwise: %%s" % release, known, reinstall_package_fix(package))


def build_or_memory_fix(build: Fix) -> Fix:
    """A kernel that failed on the GPU: the build for its architecture first, then GPU memory."""
    return say("%s; if the build is not it: %s", build, memory_fix())


def memory_or_build_fix(build: Fix) -> Fix:
    """A handle that would not start: GPU memory first, then the build for the GPU's architecture."""
    return say("%s; if memory is not it: %s", memory_fix(), build)


def contiguous_or_build_fix(build: Fix) -> Fix:
    """cuDNN has no engine for PyTorch's convolution: the input's layout first (PyTorch's own hint), then the build
    for the GPU."""
    return say("make the input contiguous before the call (x = x.contiguous()), and try float32 where it was half "
               "precision; if that is not it: %s", build)


def tcnn_arch_fix(cc: str) -> Fix:
    """tiny-cuda-nn's PyTorch bindings rebuilt here for this GPU's architecture (its README's install line)."""
    return said("rebuild tiny-cuda-nn's PyTorch bindings for compute capability %s, with the nvcc and PyTorch you run "
                "it with: `%%s`, then `%%s`" % cc, set_variable("TCNN_CUDA_ARCHITECTURES", cc.replace(".", "")),
                pip("install --force-reinstall --no-build-isolation "
                    "git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch"))


def ctranslate2_release_fix(release: str, cuda: str, cudnn: str) -> Fix:
    """CTranslate2's last release whose wheels load the CUDA major the driver runs. Its wheels carry no CUDA library
    since 2.0 (it dlopens cuBLAS and cuDNN), so that CUDA's cuBLAS and cuDNN come with it, on the loader's path."""
    return say("install CTranslate2 %s, the last release for CUDA %s, with that CUDA's cuBLAS and cuDNN %s, which it "
               "loads at run time: %%s, then put their lib folders (site-packages/nvidia/cublas/lib and "
               "nvidia/cudnn/lib) on LD_LIBRARY_PATH; faster-whisper before 1.0 is the one that accepts it" % (
                   release, cuda, cudnn),
               run(pip('install "ctranslate2==%s" nvidia-cublas-cu%s "nvidia-cudnn-cu%s==%s.*"' % (
                   release, cuda, cuda, cudnn))))


def ctranslate2_cuda_fix(arm: bool) -> Fix:
    """CTranslate2 with CUDA: PyPI's x86_64 wheels have it; on AArch64 (Jetson) it is compiled from source."""
    if arm:
        return advice("compile CTranslate2 from source with CUDA on (cmake -DWITH_CUDA=ON -DWITH_CUDNN=ON; "
                      "https://opennmt.net/CTranslate2/installation.html#install-from-sources), then its Python "
                      "package from the same tree")
    return run(pip("install --force-reinstall ctranslate2"))


def cuda_runtime_headers_fix(compat: Compat, cuda: Optional[str]) -> Fix:
    """The CUDA runtime headers NVRTC includes, from the CUDA runtime wheel of the CUDA release CuPy compiles for
    (its include folder's cuda-12.4), else a CUDA Toolkit CUDA_PATH names."""
    wheel = compat.cuda_wheel("libcudart", cuda.split(".")[0]) if cuda and cuda.split(".")[0] in ("12", "13") else None
    if cuda and wheel is not None:
        return say("install the CUDA runtime headers of that release: %s (or a CUDA Toolkit %s, with CUDA_PATH naming "
                   "it)", run(pip('install "%s==%s.*"' % (wheel["wheel"], cuda))), cuda)
    return advice("install a CUDA Toolkit of the CUDA release the program compiles for and set CUDA_PATH to it, so "
                  "NVRTC finds its include folder")


def gpu_build_fix() -> Fix:
    """A CPU-only build of a package whose CUDA build is not named: its CUDA build."""
    return advice("install the package's CUDA build (its install page names the pip package or index for each CUDA)")


def nvrtc_builtins_link_fix(name: str, release_fix: Fix) -> Fix:
    """NVRTC looks for `name` (libnvrtc-builtins.so.11.3) where a libtorch download holds it under a hashed name: a
    link under the plain name, made in that folder; else the release's own NVRTC (`release_fix`)."""
    link = "ln -s libnvrtc-builtins-*.so.%s %s" % (name.split(".so.", 1)[-1], name)
    return run(link, text="where a hashed copy is there (libtorch's lib folder, or torch/lib of the wheel), link it "
                          "under the plain name in that folder: `%s`; without one: %s" % (link, release_fix.text),
               alternatives=list(release_fix.commands))


def memory_or_compute_cache_fix(platform: str = "linux") -> Fix:
    """A library could not start its handle: GPU memory first; then the CUDA compute cache (~/.nv, CUDA_CACHE_PATH's
    default), which a run as root can leave unwritable and an older driver stale (cutorch#677; deep-rl-tensorflow#43:
    `rm -rf ~/.nv` fixed TensorFlow's CUDNN_STATUS_INTERNAL_ERROR). CUDA rebuilds the cache on the next run; sudo,
    because a cache a root run left is root's. On Windows the cache is %APPDATA%\\NVIDIA\\ComputeCache (CUDA
    Programming Guide, 'Just-in-Time Compilation'), the user's own."""
    if platform == "windows":
        clear = command_fix(['Remove-Item -Recurse -Force "$env:APPDATA\\NVIDIA\\ComputeCache"'], shell=WINDOWS_SHELL)
        return say("%s; if that is not it, clear the CUDA compute cache, which CUDA rebuilds on the next run: `%s`",
                   memory_fix(), clear)
    return say("%s; if that is not it, clear the CUDA compute cache, which CUDA rebuilds on the next run: %s",
               memory_fix(), said("`%s`", "sudo rm -rf ~/.nv/ComputeCache"))


def caffe_grouped_conv_fix() -> Fix:
    """Caffe's cuDNN convolution fails on a layer of many groups: that layer on Caffe's own kernels (the layer's
    engine), then GPU memory. A prototxt edit, no command."""
    return say("set engine: CAFFE in the convolution_param of the grouped (depthwise) convolution layers, so Caffe's "
               "own kernels run them; if no layer is grouped: %s", memory_fix())


def incomplete_wheel_fix(project: str, release: Optional[str], lacks: str, fixed_in: str) -> Fix:
    """A cuDNN wheel broken as built (its `release` lacks `lacks`): a release from `fixed_in` on, which a framework
    built with the older one accepts at run time (same major, newer minor; pip warns of its pin). Where the paste
    does not say the wheel's release, pip show tells first, and check names the copy each sub-library comes from."""
    upgrade = run(pip('install -U "%s>=%s"' % (project, fixed_in)))
    if release:
        return say("%s (pip warns that the framework pins %s; it accepts a newer cuDNN minor at run time)", upgrade,
                   release)
    return say("if %s shows the release that lacks %s: %s; else %s names the copy each sub-library comes from",
               said("`%s`", pip("show %s" % project)), lacks, upgrade, said("`%s`", doctor("check")))


def no_device_fix() -> Fix:
    """CUDA sees no GPU and the paste does not say why: what CUDA_VISIBLE_DEVICES holds decides the first case; where
    nvidia-smi fails too, the kernel module is not loaded, and after a kernel update only a reboot loads the module
    built for the new kernel (deepnet#28)."""
    return said("see what `%s` holds: if it is set, `%s` (or name a GPU index that exists); if `%s` fails too, "
                "no NVIDIA kernel module is loaded: `%s`, and after a kernel update reboot so the module built for "
                "the new kernel loads", "echo $CUDA_VISIBLE_DEVICES", "unset CUDA_VISIBLE_DEVICES", "nvidia-smi",
                "sudo modprobe nvidia")


def nvrtc_builtins_fix(compat: Compat, cuda_major: int) -> Fix:
    """NVRTC could not open its builtins library (it sits beside libnvrtc in the same release, in the same wheel
    where NVIDIA ships one for the CUDA major)."""
    project = compat.pip_project("libnvrtc-builtins", cuda_major)
    if project is None:
        return advice("put the CUDA %d toolkit's lib64, which holds libnvrtc and its libnvrtc-builtins, on "
                      "LD_LIBRARY_PATH" % cuda_major)
    return run('pip install --force-reinstall "%s"' % project,
               text="give NVRTC its libnvrtc-builtins from the same release: `pip install --force-reinstall \"%s\"`, "
                    "or put the toolkit's lib64 (which holds both) on LD_LIBRARY_PATH" % project)


def nvrtc_folder_fix() -> Fix:
    """NVRTC's builtins not found where the paste names no CUDA: the folder of the toolkit its libnvrtc is from."""
    return advice("put the library folder of the CUDA toolkit whose libnvrtc the program loads (lib64 on Linux, lib "
                  "on macOS; it holds libnvrtc-builtins beside libnvrtc) on LD_LIBRARY_PATH (DYLD_LIBRARY_PATH on "
                  "macOS), in the shell that starts the program")



def supported_gpu_or_release_fix(newer: bool) -> Fix:
    """A container release that refuses the GPU: a release that supports it (a newer one for a GPU it does not yet
    know, an older one for a GPU it dropped; each release's notes list its GPUs), or a supported GPU."""
    return advice("use %s release of the container, one whose notes list this GPU, or run it on a supported GPU, or "
                  "install the framework's own build for this GPU outside the container" % (
                      "a newer" if newer else "an older"))


def kv_cache_fix(fits: Optional[str]) -> Fix:
    """vLLM's KV cache holds fewer tokens than the model's context: a shorter context (``fits`` tokens, where vLLM
    said), or more GPU memory for it."""
    tokens = fits or "the number of tokens vLLM says its KV cache holds"
    return advice("start vLLM with a context that fits the KV cache: --max-model-len %s or less (max_model_len in "
                  "the Python API), or give the cache more GPU memory with a higher --gpu-memory-utilization (closer to "
                  "1.0 risks running out of memory), or use a GPU with more memory" % tokens)


def nvrtc_stub_fix() -> Fix:
    """The toolkit's NVRTC stub loaded: the real libnvrtc first, and a program built against one toolkit."""
    return advice("take the toolkit's lib64/stubs folder off LD_LIBRARY_PATH, so the real libnvrtc of the toolkit is "
                  "found; a program built from source (CuPy) links the stub when nvcc on PATH and CUDA_PATH name "
                  "different toolkits: rebuild it with both naming one, or reinstall CuPy from its prebuilt wheel "
                  "for your CUDA major (the cupy-cuda12x or cupy-cuda11x package) in place of the source build")


def xla_old_ptxas_fix(first_cuda: Optional[str], folder: Optional[str]) -> Fix:
    """XLA ran a ptxas older than the GPU. Outside Google it tries the first ptxas on PATH before any CUDA root or pip
    wheel (tsl::PreferPtxasFromPath() is true); newer releases try --xla_gpu_cuda_data_dir's first
    (https://github.com/openxla/xla/blob/main/xla/stream_executor/cuda/subprocess_compilation.cc). A bare `ptxas`
    was PATH's: the old one goes off PATH. A whole path may also be a CUDA root XLA found (older releases): XLA is
    pointed at a toolkit new enough, keeping the flags the user has."""
    toolkit = "/usr/local/cuda-%s" % (first_cuda or "12")
    flags = 'export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_gpu_cuda_data_dir=%s"' % toolkit
    newer = "put a CUDA %s or newer toolkit's bin folder first on PATH" % (first_cuda or "new enough")
    if folder:
        return said("with a CUDA %s or newer toolkit installed (as %s), point XLA at it: `%%s`; and remove %s from PATH "
                    "or %s, where XLA took it from PATH" % (first_cuda or "new enough", toolkit, folder, newer), flags)
    return said("remove the older CUDA toolkit's bin folder from PATH (`%%s` lists each ptxas, and each one's --version "
                "says its CUDA), or %s: XLA runs the first ptxas on PATH before the one in the nvidia-cuda-nvcc wheel; "
                "with a newer toolkit installed, newer XLA releases also take it from `%%s`" % newer,
                "which -a ptxas", flags)


def opencv_cuda_build_fix(cc: Optional[str]) -> Fix:
    """OpenCV without its CUDA DNN backend: a source build with CUDA, cuDNN and this GPU's architecture."""
    arch = cc or "<this GPU's compute capability>"
    return said("rebuild OpenCV with CUDA_ARCH_BIN=%s and its CUDA DNN backend (cmake -D WITH_CUDA=ON -D "
                "WITH_CUDNN=ON -D OPENCV_DNN_CUDA=ON, with opencv_contrib), and `%%s` so the pip wheel (built without "
                "CUDA) does not shadow it" % arch, "pip uninstall -y opencv-python")


def trt_plugin_fix(plugin: Optional[str]) -> Fix:
    """A TensorRT plugin creator not registered: load the library that implements it before deserializing."""
    return advice("build the plugin library that implements %s and load it before deserializing the engine (Python: "
                  "ctypes.CDLL of its .so, then trt.init_libnvinfer_plugins(logger, ''); C++: link it or "
                  "initLibNvInferPlugins for TensorRT's own plugins; trtexec --plugins=<its .so>)" % (
                      plugin or "the plugin layer"))
