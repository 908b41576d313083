"""The corpus: real framework releases crossed with real cuDNN releases and the ways people set up their machines."""
from __future__ import annotations

from realworld_stacks import Case, Folder

TORCH_CU13 = ("torch", "2.14.1")  # CUDA 13, pins nvidia-cudnn-cu13==9.24.0.43, RPATH into site-packages/nvidia
TORCH_CU12 = ("torch", "2.5.1")  # CUDA 12.4, pins nvidia-cudnn-cu12==9.1.0.70
TF_CUDNN8 = ("tensorflow", "2.15.1")  # build_info cudnn 8, pins ==8.9.4.25 under [and-cuda], RUNPATH
TF_CUDNN9 = ("tensorflow", "2.18.0")  # build_info cudnn 9, pins ==9.3.0.75 under [and-cuda]
JAX_0430 = ("jax-cuda12-pjrt", "0.4.30")
JAX_0430_PLUGIN = ("jax-cuda12-plugin", "0.4.30")  # pins nvidia-cudnn-cu12>=9.0,<10 under [with_cuda]
JAX_0530 = ("jax-cuda12-pjrt", "0.5.3")
JAX_0530_PLUGIN = ("jax-cuda12-plugin", "0.5.3")  # pins >=9.1,<10 under [with-cuda]
JAXLIB_CPU = ("jaxlib", "0.10.2")
ORT_CU11 = ("onnxruntime-gpu", "1.18.0")  # CUDA 11.8 + cuDNN 8 (DT_NEEDED libcudnn.so.8), no extras
ORT_CU12 = ("onnxruntime-gpu", "1.22.0")  # CUDA 12 + cuDNN 9, [cuda,cudnn] extras, preload_dlls(), no RPATH
CUPY = ("cupy-cuda12x", "13.3.0")  # cupy_backends' cudnn module: DT_NEEDED libcudnn.so.8, no RPATH
CUPY_14 = ("cupy-cuda12x", "14.2.0")  # no cuDNN module at all (cupy.cuda.cudnn is gone)
TORCH_CPU = ("torch", "2.13.0+cpu")
TF_CPU = ("tensorflow-cpu", "2.21.0")
ORT_CPU = ("onnxruntime", "1.30.0")

CUDNN_9_1 = ("nvidia-cudnn-cu12", "9.1.0.70")
CUDNN_9_3 = ("nvidia-cudnn-cu12", "9.3.0.75")
CUDNN_9_5 = ("nvidia-cudnn-cu12", "9.5.1.17")
CUDNN_8_9 = ("nvidia-cudnn-cu12", "8.9.7.29")
CUDNN_8_9_CU11 = ("nvidia-cudnn-cu11", "8.9.6.50")
CUDNN_9_24_CU13 = ("nvidia-cudnn-cu13", "9.24.0.43")

TF_2_17 = ("tensorflow", "2.17.1")  # build_info cudnn 8, [and-cuda] pins ==8.9.7.29 and curand, RUNPATH without curand
TORCH_291 = ("torch", "2.9.1")  # pins nvidia-cudnn-cu12==9.10.2.21, compiled against 9.8.0
TF_2_19 = ("tensorflow", "2.19.0")  # build_info cudnn 9, [and-cuda] pins ==9.3.0.75
JAX_0720 = ("jax-cuda12-pjrt", "0.7.2")
JAX_0720_PLUGIN = ("jax-cuda12-plugin", "0.7.2")
PADDLE = ("paddlepaddle-gpu", "2.6.2")  # CUDA 11.8, cuDNN 8.6; dlopens the unversioned libcudnn.so
CUDNN_9_8 = ("nvidia-cudnn-cu12", "9.8.0.87")
CUDNN_9_10 = ("nvidia-cudnn-cu12", "9.10.2.21")
CUDART_12 = ("nvidia-cuda-runtime-cu12", "12.3.101")
TF_AND_CUDA = [("nvidia-cuda-runtime-cu12", "12.3.101"), ("nvidia-cublas-cu12", "12.3.4.1"),
               ("nvidia-cufft-cu12", "11.0.12.1"), ("nvidia-curand-cu12", "10.3.4.107"),
               ("nvidia-cusolver-cu12", "11.5.4.101"), ("nvidia-cusparse-cu12", "12.2.0.103"),
               ("nvidia-nvjitlink-cu12", "12.3.101")]

GRAPH = ("libcudnn_graph.so.9",)
# What the printed fixes install (pip, offline, from the wheel cache): TensorFlow 2.15's exact pin besides the above.
FIX_WHEELS = (("nvidia-cudnn-cu12", "8.9.4.25"), CUDNN_8_9, CUDNN_8_9_CU11, CUDNN_9_5, CUDNN_9_24_CU13)

CASES = [
    # --- PyTorch: cuDNN found through its RPATH into site-packages/nvidia -----------------------------------
    Case("torch214-cu13-plain", TORCH_CU13, site=[CUDNN_9_24_CU13]),
    Case("torch214-no-cudnn", TORCH_CU13, note="no cuDNN wheel at all"),
    Case("torch214-ld-cudnn8", TORCH_CU13, site=[CUDNN_9_24_CU13], ld_path=["c89"], folders=[Folder("c89", CUDNN_8_9)],
         note="another major on LD_LIBRARY_PATH does not matter"),
    Case("torch214-mixed-graph95", TORCH_CU13, site=[CUDNN_9_24_CU13], ld_path=["g95"],
         folders=[Folder("g95", CUDNN_9_5, GRAPH)], note="9.24 shim, 9.5's graph library through LD_LIBRARY_PATH"),
    Case("torch251-cu12-plain", TORCH_CU12, site=[CUDNN_9_1]),
    Case("torch251-newer-minor", TORCH_CU12, site=[CUDNN_9_3], note="a newer 9.x than the pin still loads"),
    Case("torch251-mixed-graph93", TORCH_CU12, site=[CUDNN_9_1], ld_path=["g93"],
         folders=[Folder("g93", CUDNN_9_3, GRAPH)],
         was_wrong="mixed copy through a sub-library load", note="9.1 shim, 9.3's graph library via LD_LIBRARY_PATH"),
    Case("torch251-ld-after-site", TORCH_CU12, site=[CUDNN_9_1], ld_path=["@site-cudnn", "g93"],
         folders=[Folder("g93", CUDNN_9_3, GRAPH)], note="the wheel's own folder first on LD_LIBRARY_PATH"),
    Case("torch251-system-93", TORCH_CU12, system=Folder("sys", CUDNN_9_3), note="no wheel: ld.so.cache finds 9.3"),
    Case("torch251-system-89", TORCH_CU12, system=Folder("sys", CUDNN_8_9), note="only cuDNN 8 in the cache"),
    Case("torch251-conda-95", TORCH_CU12, site=[CUDNN_9_1], conda=Folder("conda", CUDNN_9_5),
         note="an active conda prefix's lib on LD_LIBRARY_PATH"),
    Case("torch251-graph-missing", TORCH_CU12, site=[CUDNN_9_1], drop_from_site=["libcudnn_graph.so.9"],
         note="the wheel's graph library deleted"),
    # --- TensorFlow: dlopen from libtensorflow_framework (RUNPATH), the soname from its build -----------------
    Case("tf215-cudnn89", TF_CUDNN8, site=[CUDNN_8_9]),
    Case("tf215-with-cudnn9", TF_CUDNN8, site=[CUDNN_9_1], was_wrong="pinned major read from a mangled requirement",
         note="built for cuDNN 8, only a cuDNN 9 wheel"),
    Case("tf215-ld-cudnn89", TF_CUDNN8, site=[CUDNN_9_1], ld_path=["c89"], folders=[Folder("c89", CUDNN_8_9)]),
    Case("tf215-system-89", TF_CUDNN8, system=Folder("sys", CUDNN_8_9)),
    Case("tf215-conda-89", TF_CUDNN8, conda=Folder("conda", CUDNN_8_9), note="only an active conda prefix has cuDNN"),
    Case("tf218-cudnn93", TF_CUDNN9, site=[CUDNN_9_3]),
    Case("tf218-older-minor", TF_CUDNN9, site=[CUDNN_9_1], note="built with 9.3, finds 9.1"),
    Case("tf218-newer-minor", TF_CUDNN9, site=[CUDNN_9_5]),
    Case("tf218-cudnn8-only", TF_CUDNN9, site=[CUDNN_8_9]),
    Case("tf218-wheel-and-system-91", TF_CUDNN9, site=[CUDNN_9_3], system=Folder("sys", CUDNN_9_1),
         note="RUNPATH is searched before ld.so.cache: the wheel wins"),
    Case("tf218-ld-older-first", TF_CUDNN9, site=[CUDNN_9_3], ld_path=["c91"], folders=[Folder("c91", CUDNN_9_1)],
         note="RUNPATH: LD_LIBRARY_PATH's 9.1 wins over the wheel"),
    # --- JAX: the PJRT plugin dlopens cuDNN; the plugin wheel carries the pin --------------------------------
    Case("jax0430-cudnn93", JAX_0430, site=[JAX_0430_PLUGIN, CUDNN_9_3]),
    Case("jax0430-with-cudnn8", JAX_0430, site=[JAX_0430_PLUGIN, CUDNN_8_9],
         was_wrong="pinned major read from a mangled requirement", note="plugin needs cuDNN 9, a cuDNN 8 wheel"),
    Case("jax0430-system-95", JAX_0430, site=[JAX_0430_PLUGIN], system=Folder("sys", CUDNN_9_5)),
    Case("jax0530-cudnn95", JAX_0530, site=[JAX_0530_PLUGIN, CUDNN_9_5]),
    Case("jax0530-mixed-graph93", JAX_0530, site=[JAX_0530_PLUGIN, CUDNN_9_5], ld_path=["g93"],
         folders=[Folder("g93", CUDNN_9_3, GRAPH)]),
    Case("jax0530-conda-93", JAX_0530, site=[JAX_0530_PLUGIN, CUDNN_9_5], conda=Folder("conda", CUDNN_9_3),
         note="9.5 shim through RPATH, every sub-library from the conda prefix's 9.3"),
    Case("jaxlib-cpu", JAXLIB_CPU, site=[CUDNN_9_5], note="no CUDA plugin"),
    Case("jax-plugin-without-pjrt", JAX_0430_PLUGIN, site=[JAXLIB_CPU, CUDNN_9_5], was_wrong="CPU-only jaxlib",
         note="the plugin wheel without its PJRT wheel: JAX has no CUDA backend"),
    # --- ONNX Runtime: DT_NEEDED libcudnn.so.N of its CUDA provider -----------------------------------------
    Case("ort118-cu11-wheel", ORT_CU11, site=[CUDNN_8_9_CU11], note="its RPATH does not reach site-packages/nvidia"),
    Case("ort118-cu11-ld", ORT_CU11, site=[CUDNN_8_9_CU11], ld_path=["@site-cudnn"]),
    Case("ort118-with-cudnn9", ORT_CU11, ld_path=["c91"], folders=[Folder("c91", CUDNN_9_1)]),
    Case("ort122-wheel-only", ORT_CU12, site=[CUDNN_9_3], note="no RPATH: needs preload_dlls() or the path"),
    Case("ort122-ld", ORT_CU12, site=[CUDNN_9_3], ld_path=["@site-cudnn"]),
    Case("ort122-cuda-cudnn-extras", ORT_CU12, site=[CUDNN_9_3] + TF_AND_CUDA[:4] + [("nvidia-cuda-nvrtc-cu12", "12.3.107")],
         note="every wheel of its [cuda,cudnn] extras beside it, none on its path: the fix installs nothing again",
         was_wrong="CD704/CD706 told it to pip install the wheels it had (a new user's trial, round 17)"),
    Case("ort122-cu13-wheel", ORT_CU12, site=[CUDNN_9_24_CU13], note="cuDNN for CUDA 13 beside a CUDA 12 build"),
    Case("ort122-cu13-wheel-ld", ORT_CU12, site=[CUDNN_9_24_CU13], ld_path=["@site-cudnn"],
         note="cuDNN for CUDA 13 beside a CUDA 12 build, its folder on the path"),
    Case("ort122-system-95", ORT_CU12, system=Folder("sys", CUDNN_9_5)),
    Case("ort122-wheel-and-system-91", ORT_CU12, site=[CUDNN_9_3], system=Folder("sys", CUDNN_9_1),
         note="no RPATH: the cache's 9.1 is loaded, not the wheel's 9.3"),
    # --- CPU-only builds beside a cuDNN wheel: nothing loads it -------------------------------------------------
    Case("torch-cpu", TORCH_CPU, site=[CUDNN_9_5]),
    Case("tensorflow-cpu", TF_CPU, site=[CUDNN_9_5], was_wrong="CPU-only TensorFlow (build info as OrderedDict)"),
    Case("onnxruntime-cpu", ORT_CPU, site=[CUDNN_9_5]),
    # --- CuPy 13: cupy_backends' cudnn module (no RPATH) ------------------------------------------------------
    Case("cupy13-ld-cudnn89", CUPY, ld_path=["c89"], folders=[Folder("c89", CUDNN_8_9)]),
    Case("cupy13-ld-cudnn91", CUPY, ld_path=["c91"], folders=[Folder("c91", CUDNN_9_1)]),
    Case("cupy14-beside-cudnn9", CUPY_14, site=[CUDNN_9_5], was_wrong="CuPy 14 said to load cuDNN (GPU record)",
         note="CuPy 14 has no cuDNN module: loads none"),
    # --- issue 34: the five families the drawn environments found -------------------------------------------------
    Case("tf217-and-cuda", TF_2_17, site=[CUDNN_8_9, *TF_AND_CUDA], was_wrong="TensorFlow's start-up list assumed",
         note="tensorflow[and-cuda] 2.17: cuRAND installed, not on its RUNPATH, never loaded at start-up"),
    Case("torch291-cu13-cudnn-over-cu12", TORCH_291, site=[CUDNN_9_24_CU13, CUDNN_9_10, CUDART_12],
         note="cuDNN for CUDA 13 installed after torch's cu12 one (jax[cuda13], say): the same files, cu13's now",
         was_wrong="the printed fix uninstalled cu13, which took the files, and left cu12 counted installed "
                   "(round 17's trial, E2)"),
    Case("torch291-cudnn98", TORCH_291, site=[CUDNN_9_8, CUDART_12], was_wrong="the pin taken for the build",
         note="compiled against 9.8.0, pins 9.10.2.21: 9.8 works"),
    Case("torch291-pip-target", TORCH_291, target=[CUDNN_9_10, CUDART_12], was_wrong="libraries found through sys.path",
         note="NVIDIA's wheels by pip --target on PYTHONPATH: torch's _preload_cuda_deps finds them"),
    Case("jax0720-pip-target", JAX_0720, site=[JAX_0720_PLUGIN], target=[CUDNN_9_10],
         was_wrong="libraries found through sys.path", note="the plugin loads nvidia.cudnn's library by full path"),
    Case("paddle26-ld-wheel", PADDLE, site=[CUDNN_8_9_CU11], ld_path=["@site-cudnn"],
         was_wrong="PaddlePaddle's unversioned libcudnn.so", note="the wheel's folder on the path has no libcudnn.so"),
    Case("tf217-beside-torch291", TF_2_17, site=[TORCH_291, CUDNN_9_10, *TF_AND_CUDA], judged=[TORCH_291],
         was_wrong="a fix for one framework that breaks another",
         note="cuDNN 8 for TensorFlow, 9 for torch, one nvidia/cudnn folder"),
    # --- issue 43: shared environments judged by what each framework accepts at run time, not by its pin ---------
    Case("tf219-beside-torch291-tf-last", TF_2_19, site=[TORCH_291, CUDNN_9_3, *TF_AND_CUDA], judged=[TORCH_291],
         was_wrong="frameworks sent to separate environments by their pins",
         note="TensorFlow's 9.3 pin installed last: torch (built with 9.8) refuses it; 9.10 serves both"),
    Case("cupy13-beside-torch291", CUPY, site=[TORCH_291, CUDNN_9_10], judged=[TORCH_291],
         was_wrong="frameworks sent to separate environments by their pins",
         note="CuPy 13 asks for libcudnn.so.8 on the plain path: cuDNN 8 beside the environment"),
    Case("ort118-beside-torch291", ORT_CU11, site=[TORCH_291, CUDNN_9_10], judged=[TORCH_291],
         was_wrong="frameworks sent to separate environments by their pins",
         note="ONNX Runtime 1.18 asks for cuDNN 8 (CUDA 11), torch 2.9.1 for 9: nvidia-cudnn-cu11 8.9.6 beside it"),
    Case("cupy136-beside-torch291", ("cupy-cuda12x", "13.6.0"), site=[TORCH_291, CUDNN_9_10], judged=[TORCH_291],
         was_wrong="frameworks sent to separate environments by their pins", note="the issue's CuPy 13.6"),
    Case("ort119-beside-torch231", ("onnxruntime-gpu", "1.19.0"), site=[("torch", "2.3.1"),
                                                                     ("nvidia-cudnn-cu12", "8.9.2.26")],
         judged=[("torch", "2.3.1")], was_wrong="frameworks sent to separate environments by their pins",
         note="ONNX Runtime 1.19 asks for cuDNN 9, torch 2.3.1 pins 8.9.2.26: cuDNN 9 beside the environment"),
    # --- issue 43: every place a process draws from ------------------------------------------------------------------
    Case("torch291-ld-preload-cudnn95", TORCH_291, site=[CUDNN_9_10, CUDART_12], folders=[Folder("c95", CUDNN_9_5)],
         preload=["c95/libcudnn.so.9"], was_wrong="an LD_PRELOAD of another libcudnn said to be harmless",
         note="ld.so answers torch's own libcudnn.so.9 with the preloaded 9.5: torch (built with 9.8) refuses it"),
    Case("torch291-user-site", TORCH_291, site=[CUDNN_9_10, CUDART_12], user_site=True,
         was_wrong="a user site's frameworks unseen", note="pip install --user: torch and its cuDNN under ~/.local"),
    Case("torch291-user-site-cudnn95", TORCH_291, site=[CUDNN_9_5, CUDART_12], user_site=True,
         was_wrong="a user site's frameworks unseen", note="pip install --user with cuDNN 9.5: torch refuses it"),
    Case("torch291-pth-folder", TORCH_291, pth=[CUDNN_9_10, CUDART_12], was_wrong="a .pth folder's libraries unseen",
         note="cuDNN in a folder a .pth file adds to sys.path: torch's own preload finds it there"),
    Case("torch291-pth-folder-cudnn95", TORCH_291, pth=[CUDNN_9_5, CUDART_12],
         was_wrong="a .pth folder's libraries unseen", note="the .pth folder's cuDNN 9.5: torch refuses it"),
    Case("torch291-venv-on-path-cudnn95", TORCH_291, site=[CUDNN_9_5, CUDART_12], activated=False,
         was_wrong="an environment on PATH unseen", note="the venv's bin/ on PATH, not activated: its torch and 9.5"),
]
