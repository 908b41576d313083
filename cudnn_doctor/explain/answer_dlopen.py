"""Answers for libraries a program opens by name at run time (dlopen, LoadLibrary), where the loader's search path
decides and a wheel's or a toolkit's own folder does not count: PaddlePaddle's dynload of cuDNN, cuDNN's own
sub-libraries (libcudnn loads libcudnn_ops_infer.so.8 by name), Windows cuDNN 8's zlibwapi.dll. Pure."""
from __future__ import annotations

import re
from typing import Optional

from ..knowledge import Compat
from ..model import Fix
from ..remedies import paste, paste_launch as launch, paste_runtime as rt
from ..remedies.paste_tools import trt_plugin_fix
from ..remedies.paste_answers import cudnn_wheel_brings_cublas_fix, folder_then_install_fix, torch7_branch_fix
from ..versions import major_of, soname_major
from .answered import Answer
from .evidence import Evidence

# cuDNN's own words when libcudnn cannot open a sub-library it loads by name (8: "Could not load library", 9:
# "Unable to load any of {libcudnn_ops.so.9...}").
_SUBLIBRARY = ("Could not load library libcudnn_", "Unable to load any of {libcudnn_")


# TensorRT's words: "getPluginCreator could not find plugin CHUNK_TRT version 1.0".
_PLUGIN = re.compile(r"could not find plugin:?\s{0,3}(\w{1,80})\s{1,3}version:?\s{0,3}([\w.]{1,20})")


def sublibrary_on_path(ev: Evidence, compat: Compat, cause: str, install_fix: Fix) -> Optional[Answer]:
    """A missing cuDNN sub-library that libcudnn itself asked for: libcudnn loaded, its siblings are opened by name,
    so a cuDNN in a wheel or another environment must be on the loader's path; else installed."""
    if not any(s in ev.text for s in _SUBLIBRARY):
        return None
    cuda = ev.facts.build_cuda() or next(iter(ev.cuda), None)
    wheel = compat.cudnn_wheel(major_of(cuda) or 12) or "nvidia-cudnn-cu12"
    cause += ("; libcudnn itself loaded and opens its sub-libraries by name, so their folder must be on the loader's "
              "path (LD_LIBRARY_PATH): a cuDNN inside a pip wheel's site-packages/nvidia/cudnn/lib or another "
              "environment is not searched")
    fix = folder_then_install_fix(rt.wheel_lib_path_fix("nvidia.cudnn", wheel), install_fix)
    if _CNN_INFER_8 in ev.text and not _LOADER_SAID.search(ev.text):
        # The loader's own error was cut off: cuDNN 8's cnn_infer also fails this way where the unversioned libcuda.so
        # it opens is missing, as on WSL (microsoft/WSL#8587; nougat#105 linked /usr/lib/wsl/lib/libcuda.so.1)
        return Answer(cause + "; or its own load failed on libcuda.so, which it opens by that unversioned name and "
                      "which WSL keeps only in /usr/lib/wsl/lib", paste.or_libcuda_link_fix(fix, ev.platform))
    return Answer(cause, fix)


def cudnn_needs_cublas(ev: Evidence, compat: Compat, name: str, needer: str, cause: str,
                       install_fix: Fix) -> Optional[Answer]:
    """cuDNN's sub-library was found but the cuBLAS it opens was not (jax-16625: "Could not load library
    libcudnn_ops_infer.so.8. Error: libcublas.so.11: cannot open ..."). NVIDIA's cuDNN wheel looks for cuBLAS in the
    nvidia-cublas wheel it requires (its libraries' RUNPATH holds $ORIGIN/../../cublas/lib: nvidia-cudnn-cu11
    8.9.6.50), so installing the cuDNN wheel brings it; a cuDNN from elsewhere needs the CUDA's cuBLAS on the path."""
    cudnn = soname_major(needer) if needer.startswith("libcudnn") else None
    cuda = soname_major(name) if re.match(r"libcublas(?:Lt)?\.so\.\d", name) else None
    if cudnn is None or cuda is None:
        return None
    wheel = paste.cudnn_release_fix(compat, cudnn, cuda="%d.0" % cuda)
    if not wheel.commands:
        return None
    return Answer(cause + "; cuDNN %d's wheel finds cuBLAS in the nvidia-cublas-cu%d wheel it requires (its libraries "
                  "search $ORIGIN/../../cublas/lib), so that wheel is missing, or this cuDNN is not NVIDIA's wheel for "
                  "CUDA %d" % (cudnn, cuda, cuda),
                  cudnn_wheel_brings_cublas_fix(wheel, install_fix))


_CNN_INFER_8 = "libcudnn_cnn_infer.so.8"
_LOADER_SAID = re.compile(r"libcudnn_cnn_infer\.so\.8\. Error: |cannot open shared object file")


# Lua Torch7's cudnn.torch: "libcudnn (R5) not found in library path" - each branch (R5, R6, R7) ffi.loads one major.
_TORCH7_BINDINGS = re.compile(r"libcudnn \(R(\d{1,2})\) not found")


def torch7_bindings(ev: Evidence, cause: str, install_fix: Fix) -> Optional[Answer]:
    """cudnn.torch opens the one cuDNN major its branch binds: that cuDNN, or the branch of the cuDNN installed."""
    m = _TORCH7_BINDINGS.search(ev.text)
    if m is None or not ev.facts.runs("Torch7"):
        return None
    major = int(m.group(1))
    branches = ", ".join("R%d for cuDNN %d" % (n, n) for n in range(major + 1, major + 3))
    return Answer(cause + "; Lua Torch7's cudnn.torch bindings of branch R%d open only libcudnn.so.%d (ffi.load by "
                  "name)" % (major, major),
                  torch7_branch_fix(install_fix, branches))


def from_dlopen(kind: str, ev: Evidence, compat: Compat) -> Optional[Answer]:
    """The named conditions of a library opened by name at run time."""
    if kind == "paddle-cudnn":
        return Answer("PaddlePaddle opens libcudnn.so by name when it starts (dynload/cudnn.cc) and the loader found "
                      "none: cuDNN is not installed, or its folder is not on LD_LIBRARY_PATH (nor in ld.so.conf)",
                      paste.find_library_fix("libcudnn.so"))
    if kind == "trt-plugin-missing":
        m = _PLUGIN.search(ev.text)
        plugin = ("%s (version %s)" % (m.group(1), m.group(2))) if m else "a plugin layer"
        if "importFallbackPluginImporter" in ev.text or "Failed to parse onnx" in ev.text:
            # the ONNX parser looks for a plugin only for an op it does not import itself (onnx-tensorrt#800)
            return Answer("TensorRT's ONNX parser does not import the model's op %s itself, so it looked for a plugin "
                          "of that name and found none: this TensorRT release does not support the op" % (
                              m.group(1) if m else "(the node named above)"), launch.trt_parser_op_fix())
        return Answer("TensorRT has no creator for %s in its plugin registry: the engine uses a plugin whose library "
                      "(the project's own plugin .so, or TensorRT's libnvinfer_plugin) was not loaded before "
                      "deserializing" % plugin, trt_plugin_fix(m.group(1) if m else None))
    if kind == "zlibwapi":
        download = compat.zlibwapi().get("download")
        if not download:
            return None
        return Answer("cuDNN 8.3 to 8.9 on Windows load zlibwapi.dll at run time, and NVIDIA does not ship it with "
                      "cuDNN", rt.zlib_fix(str(download)))
    return None
