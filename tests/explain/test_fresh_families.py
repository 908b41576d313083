"""Issue 44: families four samples of 40 real pastes from threads in no corpus here found explain missing (2026-11-30:
28, 25, 24 and 22 right of 40 before; 35, 35, 26 and 32 after; then three more samples). Each text is the thread's, trimmed; the thread is named beside it, and the test
asks what its confirmed resolution rests on. Answered with --no-check (the same on any machine)."""
from __future__ import annotations

import pytest
from explain_grading import assert_answer

from cudnn_doctor.explain import explain
from cudnn_doctor.explain.bounded import plain_punctuation

# https://github.com/alievk/avatarify-python/issues/58: no PyTorch wheel since 0.3.0 has kernels for compute
# capability 3.0; the answer had been a cu118 build "for CUDA 6.0 or newer"
GTX660 = ("    Found GPU0 GeForce GTX 660 Ti which is of cuda capability 3.0.\n"
          "    PyTorch no longer supports this GPU because it is too old.\n"
          "    The minimum cuda capability that we support is 3.5.\n\n"
          "RuntimeError: CUDA error: no kernel image is available for execution on the device")
# PyTorch 2.x's wording of the same check, for a K80 (the last wheels with sm_37: 1.13.1)
K80 = ("Found GPU0 Tesla K80 which is of cuda capability 3.7.\nPyTorch no longer supports this GPU because it is too "
       "old.\nThe minimum cuda capability supported by this library is 5.0.")
# https://github.com/NVIDIA/nvidia-docker/issues/838
UNKNOWN_RUNTIME = "docker: Error response from daemon: Unknown runtime specified nvidia."
# https://github.com/Totoro97/f2-nerf/issues/59: nvcc's words without its "nvcc fatal :" prefix
COMPUTE_89 = "Unsupported gpu architecture 'compute_89'"
# https://github.com/vllm-project/vllm/issues/1453
EXTENSION = ("The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.1). "
             "Please make sure to use the same CUDA versions")
# https://github.com/nianticlabs/simplerecon/issues/3
SHM = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."
# https://github.com/EvilPort2/Sign-Language/issues/16
NVCUDA = ("ImportError: Could not find 'nvcuda.dll'. TensorFlow requires that this DLL be installed in a directory "
          "that is named in your %PATH% environment variable. Typically it is installed in 'C:\\Windows\\System32'. "
          "If it is not present, ensure that you have a CUDA-capable GPU with the correct driver installed.")
# https://github.com/hiyouga/LlamaFactory/issues/3673
TF_TRT = ("2024-05-10 11:33:15.185131: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could "
          "not find TensorRT\nRunning on local URL:  http://0.0.0.0:7860")
# https://github.com/danielgatis/rembg/issues/798: no CUDA and no release in the text
ORT_NO_CUDA = ("[E:onnxruntime:Default, provider_bridge_ort.cc:2251 TryGetProviderInfo_CUDA] [ONNXRuntimeError] : 1 : "
               "FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open "
               "shared object file: No such file or directory")

# The second sample (tests/data/explain_corpus/fresh2.json)
# https://github.com/NVIDIA/nccl/issues/342: NCCL's own words for a full /dev/shm
NCCL_SHM = ("include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device\n"
            "include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-250a7cc850ba9298-0-1-3 "
            "(size 9637888)")
# DeepSpeed's op builder (https://github.com/JIA-Lab-research/MGM/issues/91)
DEEPSPEED = ("deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version "
             "12.2 does not match the version torch was compiled with 11.7, unable to compile cuda/cpp extensions "
             "without a matching cuda version.")
# TensorFlow 1's out of memory (https://github.com/zhengyang-wang/Deeplab-v2--ResNet-101--Tensorflow/issues/22)
TF_OOM = "ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[5760,4,4,2048]"
# nvidia-container-cli's requirement written with spaces (https://github.com/NVIDIA/nvidia-docker/issues/753)
CUDA_92 = ("requirement error: unsatisfied condition: cuda >= 9.2\n\n"
           "ii  xserver-xorg-video-nvidi 390.48-0ubuntu3   amd64             NVIDIA binary Xorg driver")
# PyTorch's warning that cuDNN 8 wanted the unversioned libnvrtc.so (https://github.com/3dem/model-angelo/issues/104)
NVRTC_WARNING = ("site-packages/torch/nn/modules/conv.py:605: UserWarning: Applied workaround for CuDNN issue, install "
                 "nvrtc.so (Triggered internally at /opt/conda/conda-bld/pytorch_1711403388920/work/aten/src/ATen/native/"
                 "cudnn/Conv_v8.cpp:80.)")
# ollama's own words on Windows (https://github.com/ollama/ollama/issues/6604)
OLLAMA = ('level=DEBUG source=gpu.go:537 msg="Unable to load cudart" library=C:\\Users\\u\\AppData\\Local\\Programs'
          '\\Ollama\\lib\\ollama\\cudart64_12.dll error="your nvidia driver is too old or missing.  If you have a CUDA GPU '
          'please upgrade to run ollama"')
# a CUDA written "cuda ver 12.8" beside a missing cuDNN 9 DLL (https://github.com/jhj0517/Whisper-WebUI/issues/485)
CUDA_VER = ("[Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!]\n\nrtx3080\n"
            "cuda ver 12.8\ncudnn ver 9.70\npython 3.12.8\ntorch 2.5.0")

# Error 804 in a container, the GPU written "RTX3090", the driver "525"
# (https://github.com/AIR-DISCOVER/ICRA2024-Sim2Real-AXS/issues/5)
ERROR_804 = ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
             "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on "
             "non supported HW\n\nI use the RTX3090 whose version of the driver is 525 and the cuda version is 12.1 "
             "both in my PC and in the docker environment.")

# CUDNN_STATUS_EXECUTION_FAILED in a Python 3.7 environment (https://github.com/astaka-pe/Dual-DMP/issues/2) and on
# torch 1.2.0 with cudatoolkit 10.0 under Python 3.6 (https://github.com/guxd/deep-code-search/issues/65)
EXEC_PY37 = ('  File "/opt/conda/envs/ddmp/lib/python3.7/site-packages/torch/nn/functional.py", line 2058, in batch_norm\n'
             "    training, momentum, eps, torch.backends.cudnn.enabled\n"
             "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")
EXEC_TORCH12 = ("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n\ncudatoolkit               10.0.130,\n"
                "cudnn                     7.6.5,\npython                    3.6.12,\ntorch                     1.2.0")

# The third sample (fresh3.json, kept as a measure): two pastes answered with nothing
# https://github.com/pyg-team/pytorch_geometric/issues/506 and https://github.com/NVIDIA/TensorRT/issues/2218
CXX_SYMBOL = "undefined symbol: _ZNSt13runtime_errorC2EPKc"
TRT_LIBRARY = ("6: [libLoader.h::DynamicLibrary::50] Error Code 6: Internal Error (Unable to load library: "
               "libnvinfer_builder_resource.so.8.4.2)")

# The fourth sample (fresh4.json, round 18: 22 of 40 right before): each family's thread is named beside its text
# https://github.com/hanhanhan-1/EmbodiedOcc2/issues/6: PyTorch's message wraps onto an indented line
EXTENSION_WRAPPED = ("RuntimeError:\n    The detected CUDA version (12.2) mismatches the version that was used to compile\n"
                     "    PyTorch (11.3). Please make sure to use the same CUDA versions.")
# https://github.com/Linaqruf/kohya-trainer/issues/164
TORCHVISION = ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch "
               "has CUDA Version=11.7 and torchvision has CUDA Version=11.6. Please reinstall the torchvision that "
               "matches your PyTorch install.")
# https://github.com/test-time-training/ttt-video-dit/issues/14 (Windows)
CUDA_HOME = ('  File "C:\\Users\\u\\AppData\\Roaming\\Python\\Python313\\site-packages\\torch\\utils\\'
             'cpp_extension.py", line 2525, in _join_cuda_home\nOSError: CUDA_HOME environment variable is not set. '
             'Please set it to your CUDA install root.')
# https://github.com/NVlabs/tiny-cuda-nn/issues/109
GCC_12 = ("error: #error -- unsupported GNU version! gcc versions later than 11 are not supported! The nvcc flag "
          "'-allow-unsupported-compiler'\ngcc version: 12.1.0\ncuda version: 11.7")
# https://github.com/nagadomi/nunif/issues/701
WINERROR_1114 = ('[WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading '
                 '"...\\c10.dll" or one of its dependencies.')
# https://github.com/Dao-AILab/flash-attention/issues/762
FLASH_TURING = "RuntimeError: FlashAttention only supports Ampere GPUs or newer."
# https://github.com/Jiawei-Yao0812/CoR-GS/issues/23
NO_GPUS = ('  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init\n'
           "    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available")
# https://github.com/triple-Mu/YOLOv8-TensorRT/issues/142
TRT_MAGIC = ("[TRT] [E] 1: [stdArchiveReader.cpp::nvinfer1::rt::StdArchiveReader::StdArchiveReader::30] Error Code 1: "
             "Serialization (Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match)")

# https://github.com/NVIDIA/nccl/issues/258: cuda-gdb's reports, where NCCL falls back without peer access
CUDA_GDB = ("[New Thread 0x7fffe4a23700 (LWP 12428)]\nwarning: Cuda API error detected: cudaDeviceEnablePeerAccess "
            "returned (0x2c0)\nwarning: Cuda API error detected: cudaGetLastError returned (0x2c0)")

# https://github.com/HKUST-Aerial-Robotics/Stereo-RCNN/issues/36: an extension built in its source tree, a caffe2 symbol
SOURCE_EXTENSION = ('  File "/Stereo-RCNN/lib/model/roi_layers/nms.py", line 3, in <module>\n    from model import _C\n'
                    "ImportError: /Stereo-RCNN/lib/model/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: "
                    "_ZN6caffe26detail37_typeMetaDataInstance_preallocated_30E")

# https://github.com/jhj0517/Whisper-WebUI/issues/279 and https://github.com/YanWenKun/ComfyUI-Docker/issues/74 (both
# mended by updating Docker Desktop): PyTorch counting GPUs in a container under Docker Desktop
DEVICE_COUNT_500 = ("Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
                    "NumCudaDevices() that might have already set an error? Error 500: named symbol not found")

# https://github.com/googlecolab/colabtools/issues/3187 (FFmpeg names the floor) and a build that prints "(unknown)"
# (https://github.com/GyanD/codexffmpeg/issues/161, Windows): the floor comes from compat's NVENC table
NVENC_FLOOR = ("[hevc_nvenc @ 0x55defbb87c00] Driver does not support the required nvenc API version. Required: 11.1 "
               "Found: 11.0\n[hevc_nvenc @ 0x55defbb87c00] The minimum required Nvidia driver for nvenc is 470.57.02 "
               "or newer")
NVENC_UNKNOWN = ("[h264_nvenc @ 000002faa5950d40] Driver does not support the required nvenc API version. Required: "
                 "12.1 Found: 12.0\n[h264_nvenc @ 000002faa5950d40] The minimum required Nvidia driver for nvenc is "
                 "(unknown) or newer")

# https://github.com/tensorflow/tensorflow/issues/58428
TF_NUMA = ("I tensorflow/stream_executor/cuda/cuda_gpu_executor.cc:980] successful NUMA node read from SysFS had "
           "negative value (-1), but there must be at least one NUMA node, so returning NUMA node zero")

# https://github.com/deepspeedai/DeepSpeed-MII/issues/277: DeepSpeed's words cut short (the title), no torch CUDA
DEEPSPEED_SHORT = "Installed CUDA version 11.7 does not match torch version"

# https://github.com/wenwenyu/PICK-pytorch/issues/14: more processes than the GPUs CUDA_VISIBLE_DEVICES leaves
ORDINAL = ("CUDA_VISIBLE_DEVICES=1,2 python -m torch.distributed.launch --nnode=1 --node_rank=0 --nproc_per_node=4 \\\n"
           "train.py -c config.json --local_world_size 2\nRuntimeError: cuda runtime error (101) : invalid device "
           "ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59")


# (test id, paste, what the cause says, what the fix says, what the fix must not say)
# https://github.com/modelscope/FunASR/issues/2973: PyTorch's words alone, which name the driver's CUDA (12.8)
TORCH_FOUND_12080 = "The NVIDIA driver on your system is too old (found version 12080)"
# https://github.com/PaddlePaddle/Paddle/issues/30933: a driver fixed by the platform; Paddle's build for its CUDA
PADDLE_ERROR_35 = ('  File "/opt/conda/envs/python35-paddle120-env/lib/python3.7/site-packages/paddle/device.py", line '
                   '134, in set_device\nOSError: (External)  Cuda error(35), CUDA driver version is insufficient for '
                   'CUDA runtime version.')

# The fifth sample (fresh5.json, round 20: 23 of 40 right before any work on it)
# https://github.com/NVIDIA/TensorRT/issues/564: an engine built on a compute 7.5 GPU, loaded on a GTX 1060 (6.1)
TRT_DEVICE = ("[TensorRT] ERROR: INVALID_CONFIG: The engine plan file is generated on an incompatible device, "
              "expecting compute 6.1 got compute 7.5, please rebuild.")
# https://github.com/TaterTotterson/microWakeWord-Trainer-Nvidia-Docker/issues/1: the CPU-only onnxruntime over -gpu
ORT_CPU = ("ONNX Runtime Providers:\n   ['AzureExecutionProvider', 'CPUExecutionProvider']\n"
           "CUDAExecutionProvider not available - ONNX will fall back to CPU.")
# https://github.com/Purfview/whisper-standalone-win/issues/37: CTranslate2's informational float16 warning
CT2_FP16 = ("[ctranslate2] [thread 6280] [warning] The compute type inferred from the saved model is float16, but the "
            "target device or backend do not support efficient float16 computation. The model weights have been "
            "automatically converted to use the float32 compute type instead.")
# https://github.com/jax-ml/jax/issues/21950: a pip nvidia-cuda-nvcc newer than the driver runs
CUSOLVER = ("RuntimeError: jaxlib/gpu/solver_kernels.cc:45: operation gpusolverDnCreate(&handle) failed: cuSolver "
            "internal error")
# https://github.com/NVIDIA/nccl-tests/issues/276: Fabric Manager restarted without a GPU reset on an NVSwitch node
NVLS = "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'"
# https://github.com/jgravelle/GroqCasters/issues/1: torch 1.13.1 has no Windows wheel for Python 3.11
PIP_PIN = ("ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.0.0, 2.0.1, "
           "2.1.0, 2.4.1)\nERROR: No matching distribution found for torch==1.13.1\n\nI am running windows 11, "
           "python 3.11.")
PIP_NONE = ("ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
            "C:\\Users\\me> python --version\nPython 3.12.4")

# https://github.com/PaddlePaddle/PaddleFleetX/issues/577: Paddle's start-up NOTE names the GPU, both CUDAs and cuDNN
PADDLE_NOTE = ("Please NOTE: device: 0, GPU Compute Capability: 8.6, Driver API Version: 11.5, Runtime API Version: "
               "10.2\ndevice: 0, cuDNN Version: 8.0.\n:parallel_for failed: cudaErrorNoKernelImageForDevice: no kernel "
               "image is available for execution on the device. (at /paddle/paddle/fluid/imperative/tracer.cc:221)")
# https://github.com/PaddlePaddle/PaddleOCR/issues/8626: cuDNN 8.1 with Paddle's CUDA 10.2 build
PADDLE_INIT = ("Please NOTE: device: 0, GPU Compute Capability: 7.5, Driver API Version: 10.2, Runtime API Version: "
               "10.2\ndevice: 0, cuDNN Version: 8.1.\nExternalError: CUDNN error(1), CUDNN_STATUS_NOT_INITIALIZED. "
               "(at /paddle/paddle/phi/backends/gpu/gpu_context.cc:571)")
# https://github.com/iffiX/machin/issues/25: GPUs in Exclusive_Process mode
BUSY = "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"
BUSY_WINDOWS = ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable\n"
                "File \"C:\\stable-diffusion-webui\\venv\\lib\\site-packages\\torch\\cuda\\__init__.py\"")
# https://github.com/loicland/superpoint_graph/issues/250: CuPy's PTX newer than the driver JITs
INVALID_PTX = "cupy.cuda.driver.CUDADriverError: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed"

# https://github.com/Djdefrag/QualityScaler/issues/9: a DLL in torch's own folder, its VC++ runtime missing
TORCH_DLL = ('The specified module could not be found. Error loading "torch\\lib\\caffe2_detectron_ops.dll" or one '
             'of its dependencies.')
# https://github.com/zengxianyu/crfill/issues/26: PyTorch's own library missing from its install
CAFFE2_NVRTC = ("RuntimeError: Error in dlopen or dlsym: libcaffe2_nvrtc.so: cannot open shared object file: No such "
                "file or directory")

# https://github.com/astral-sh/uv/issues/10236: uv on Windows with Python 3.13, before torch had wheels for it
UV_NO_WHEEL = ("When I  use  python 3.13  on  windows ,   and run  `uv add torch `\nhappened `@ registry+https://pypi.org/"
               "simple` can't be installed because it doesn't have a source distribution or wheel for the current "
               "platform`")

# The sixth sample (fresh6.json, round 20: 18 of 40 right before any work on it)
# https://github.com/tensorflow/tensorflow/issues/5986: the older words of TensorFlow's NUMA line
TF_NUMA_OLD = ("E c:\\tf_jenkins\\home\\workspace\\release-win\\device\\gpu\\os\\windows\\tensorflow\\core\\common_runtime\\gpu"
               "\\gpu_device.cc:586] Could not identify NUMA node of /job:localhost/replica:0/task:0/gpu:0, defaulting "
               "to 0.  Your kernel may not have been built with NUMA support.")
# https://github.com/cyrusbehr/YOLOv8-TensorRT-CPP/issues/33
LAZY = ("CUDA lazy loading is not enabled. Enabling it can significantly reduce device memory usage and speed up "
        "TensorRT initialization.")
# https://github.com/NVIDIA/nvidia-docker/issues/1071: an NGC container started without --gpus
NGC_NO_DRIVER = ("WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n   Use "
                 "'nvidia-docker run' to start this container; see")
# https://github.com/NVIDIA/nvidia-docker/issues/177
DOCKER_CUDA = "nvidia-docker | 2016/08/22 12:54:02 Error: unsupported CUDA version: driver 7.5 < image 8.0"
# https://github.com/mattshma/bigdata/issues/133
PROBE = ("NVRM: The NVIDIA probe routine was not called for 3 device(s).\nNVRM: This can occur when a driver such as: "
         "\nNVRM: nouveau, rivafb, nvidiafb or rivatv")
# https://github.com/OpenNMT/CTranslate2/issues/1306
CT2_ARM = ("when i use ctranlate2 on AArch64, it throws an error: This CTranslate2 package was not compiled with CUDA "
           "support")
# https://github.com/PaddlePaddle/Paddle/issues/56908
PADDLE_ARCH = ("The GPU architecture in your current machine is Ampere, which is not compatible with Paddle installation "
               "with arch: 52 60 61 70 75")

# https://github.com/ostris/ai-toolkit/issues/133: PyTorch's words cut short, no WinError named (libomp140 missing)
TORCH_DLL_CUT = ('  File "D:\\AI\\ai-toolkit\\venv\\Lib\\site-packages\\torch\\__init__.py", line 148, in <module>\n    raise '
                 'err\nError loading "D:\\AI\\ai-toolkit\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll')


# The sixth sample (fresh6.json), later families
# https://github.com/ml-struct-bio/recovar/issues/64: a loose jax[cuda12] brought a newer CUDA plugin than jaxlib
JAX_PLUGIN = ("RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed, \n"
              "but it is not compatible with the installed jaxlib version 0.9.0.1")
# https://github.com/tensorflow/tensorflow/issues/60237: TensorFlow 2.12 on native Windows (the text says no platform)
TF_NO_GPU = "2.12.0\nTensor Flow Version: 2.12.0\nKeras Version: 2.12.0\n\nGPU is NOT AVAILABLE"
# the same check on a Linux whose TensorFlow came without its [and-cuda] extra
TF_NO_GPU_LINUX = "Ubuntu 22.04\nTensorFlow version: 2.15.0\nNum GPUs Available:  0"

# The seventh sample (fresh7.json)
# https://github.com/filecoin-project/rust-gpu-tools/issues/79: Rust's name for CUDA_ERROR_NO_BINARY_FOR_GPU
NO_BINARY_RUST = ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', "
                  "examples/add.rs:10:76\nI use Tesla K80 GPU and how can I solve it.")
# https://github.com/Theano/libgpuarray/issues/289: the driver's status alone; its PTX JIT library was missing
NO_BINARY = "CUDA_ERROR_NO_BINARY_FOR_GPU"
# https://github.com/google-deepmind/jax_privacy/issues/10: XLA's out of memory under JAX
XLA_OOM = ("Original error: RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device "
           "ordinal 0")
# https://github.com/pytorch/pytorch/issues/31243: torch 1.3.0's default build (CUDA 10.1) on driver 410
TORCH13_FALSE = ("$ pip install torch===1.3.0 torchvision===0.4.1 -f https://download.pytorch.org/whl/torch_stable.html\n"
                 ">>> import torch\n>>> torch.cuda.is_available()\nFalse")
# https://github.com/NixOS/nixpkgs/issues/166403: PyTorch's CMake floor
REQUIRES_CUDA = "CMake Error at cmake/public/cuda.cmake:42 (message):\n  PyTorch requires CUDA 10.2 or above."
# https://github.com/tensorflow/tensorflow/issues/63362 (dev2's text): [and-cuda] installed, no GPU listed, no release
TF_AND_CUDA_EMPTY = ("python3 -m pip install tensorflow[and-cuda]\n\n tf.config.list_physical_devices('GPU') \n\n"
                     "I also get an empty list.")
# https://github.com/PaddlePaddle/Paddle/issues/57872: the pinned release has no wheel for Python 3.12
PADDLE_PY312 = ("PS C:\\> python -m pip install paddlepaddle-gpu==2.5.1.post120 -f https://www.paddlepaddle.org.cn/whl/"
                "windows/mkl/avx/stable.html\nERROR: Could not find a version that satisfies the requirement "
                "paddlepaddle-gpu==2.5.1.post120 (from versions: none)\nERROR: No matching distribution found for "
                "paddlepaddle-gpu==2.5.1.post120\n\nPython: 3.12")

# https://github.com/tensorflow/tensorflow/issues/117538: TensorFlow 2.21 under WSL, its release only in the REPL's echo
TF_DLOPEN_WHEELS = (">>> tf.__version__\n'2.21.0'\n$ pip install tensorflow[and-cuda]\nW0000 00:00:1777802014.562474 "
                    "11318 gpu_device.cc:2365] Cannot dlopen some GPU libraries. Please make sure the missing libraries "
                    "mentioned above are installed properly ...")
# the same words from a TensorFlow installed without its extra: the tested build's CUDA and cuDNN, then its extra
TF_DLOPEN_PLAIN = ("tensorflow==2.15.1\nW tensorflow/core/common_runtime/gpu/gpu_device.cc:2256] Cannot dlopen some "
                   "GPU libraries.")
# https://github.com/chelsea0x3b/cudarc/issues/451: a loader whose list of runtime names stops at CUDA 12
CUDARC = ('Unable to dynamically load the "cudart" shared library - searched for library names: ["cudart.dll", '
          '"cudart64.dll", "cudart64_12.dll", "cudart64_126.dll", "cudart64_120_6.dll", "cudart64_110.dll", '
          '"cudart64_90.dll"].')  # cudart64_90.dll is CUDA 9's, not a 90th major (the review's case)
ORT_126 = ('[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] '
           'onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" '
           'when trying to load "C:\\app\\venv\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"')
XLA_PTXAS = ("W external/xla/xla/stream_executor/gpu/asm_compiler.cc:232] Falling back to the CUDA driver for PTX "
             "compilation; ptxas does not support CC 8.9\nW external/xla/xla/stream_executor/gpu/asm_compiler.cc:235] "
             "Used ptxas at ptxas\nE cuda_driver.cc:864] failed to load PTX text as a module: CUDA_ERROR_INVALID_IMAGE: "
             "device kernel image is invalid")
FAMILIES = [
    ("names-searched-stop-at-12", CUDARC, ["cudart64_13.dll", "bin\\x64", "stop at CUDA 12"], [], []),
    ("tf-dlopen-wheels", TF_DLOPEN_WHEELS, ["CUDA 12.5", "cuDNN 9.3", "did not find them"], ["LD_LIBRARY_PATH"], []),
    ("tf-dlopen-plain", TF_DLOPEN_PLAIN, ["CUDA 12.2", "cuDNN 8.9"], ['tensorflow[and-cuda]==2.15.1'], []),
    ("gtx660-dropped", GTX660, ["minimum is compute capability 3.5", "0.3.1"], ["compute capability 3.5 or newer"],
     ["pip install"]),
    ("k80-last-release", K80, ["minimum is compute capability 5.0"], ["torch==1.13.1", "cu117"], []),
    ("docker-unknown-runtime", UNKNOWN_RUNTIME, ["Container Toolkit"], ["nvidia-ctk runtime configure"], []),
    ("nvcc-words-unprefixed", COMPUTE_89, ["CUDA 11.8", "8.9"], [], []),
    ("extension-toolkit", EXTENSION, ["11.8", "12.1"], ["whl/cu118", "CUDA_HOME=/usr/local/cuda-12.1"], []),
    ("dataloader-shm", SHM, ["/dev/shm"], ["--shm-size", "--ipc=host"], []),
    ("nvcuda-dll", NVCUDA, ["nvcuda.dll", "driver"], ["driver"], []),
    ("tf-trt-warning", TF_TRT, ["harmless"], [], []),
    ("ort-cuda-unsaid", ORT_NO_CUDA, [], ["nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "the installed build's CUDA decides"],
     []),
    ("nccl-shm", NCCL_SHM, ["/dev/shm"], ["--shm-size"], []),
    ("deepspeed-cuda", DEEPSPEED, ["12.2", "11.7"], ["CUDA_HOME=/usr/local/cuda-11.7"], []),
    ("tensorflow-oom", TF_OOM, ["memory"], ["batch size"], []),
    ("image-cuda-spaced", CUDA_92, ["9.2"], ["396"], []),
    ("nvrtc-warning", NVRTC_WARNING, ["libnvrtc.so"], [], []),
    # the program's own "driver too old" outranks the DLL it then missed
    ("ollama-driver", OLLAMA, ["driver"], ["driver"], ["pip install"]),
    ("cuda-ver-written", CUDA_VER, [], ["nvidia-cudnn-cu12"], ["cu13"]),
    ("error-804-unnamed", ERROR_804, ["CUDA 12.1", "forward"], ["driver", "cuda-compat"], []),
    ("exec-failed-python", EXEC_PY37, [], ["Python 3.7"], ["cu129"]),
    ("exec-failed-not-the-failed-build", EXEC_TORCH12, [], ["Python 3.6"], ["torch==1.2"]),
    ("cxx-std-symbol", CXX_SYMBOL, ["libstdc++"], ["libstdcxx-ng"], []),
    ("trt-unable-to-load", TRT_LIBRARY, ["libnvinfer_builder_resource.so.8.4.2"], [], []),
    ("undefined-symbol-unknown", "ImportError: /v/lib/python3.10/site-packages/foo/_C.so: undefined symbol: fooBarBaz",
     ["fooBarBaz"], ["foo"], []),
    ("extension-wrapped", EXTENSION_WRAPPED, ["12.2", "11.3"], ["CUDA_HOME=/usr/local/cuda-11.3"], []),
    ("torchvision-cuda", TORCHVISION, ["11.7", "11.6"], ["torch torchvision --index-url https://download.pytorch.org/whl/cu117"],
     []),
    ("cuda-home-windows", CUDA_HOME, ["CUDA_HOME is not set", "nvcc"], ["CUDA toolkit", "CUDA_HOME"], ["export "]),
    ("nvcc-gcc", GCC_12, ["gcc up to 11", "gcc 12.1.0", "CUDA 11.7"], ["apt install gcc-11 g++-11", "CUDAHOSTCXX=g++-11"],
     []),
    ("winerror-1114", WINERROR_1114, ["c10.dll", "Visual C++"], ["vc_redist.x64.exe"], []),
    ("flash-attn-turing", FLASH_TURING, ["Ampere", "compute capability 8.0"], ["compute capability 8.0 or newer"],
     ["pip install"]),
    ("no-cuda-gpus", NO_GPUS, ["CUDA_VISIBLE_DEVICES"], ["nvidia-smi -L", "unset CUDA_VISIBLE_DEVICES"], []),
    ("cuda-gdb-reports", CUDA_GDB, ["harmless", "704 (cudaErrorPeerAccessAlreadyEnabled)", "falls back"],
     ["nothing to fix"], []),
    # the same report beside a real failure: the failure is answered
    ("cuda-gdb-beside-a-failure", CUDA_GDB + "\n" + FLASH_TURING, ["Ampere"], [], ["nothing to fix"]),
    ("extension-in-source-tree", SOURCE_EXTENSION, ["another PyTorch release", "_typeMetaDataInstance"],
     ["/Stereo-RCNN/lib/model", "python setup.py build develop", "reinstall the torch"], ["pip install"]),
    ("device-count-500", DEVICE_COUNT_500, ["500", "entry point", "Docker Desktop"],
     ["update Docker Desktop", "nvidia-container-toolkit"], ["pip install"]),
    ("nvenc-floor-said", NVENC_FLOOR, ["NVENC API 11.1", "470.57.02"], ["driver to 470.57.02"], ["pip install"]),
    ("nvenc-floor-unknown", NVENC_UNKNOWN, ["NVENC API 12.1", "531.61 on Windows", "530.41.03 on Linux"],
     ["531.61", "530.41.03"], []),
    ("tf-numa-line", TF_NUMA, ["harmless", "NUMA"], ["nothing to fix"], []),
    ("tf-numa-beside-a-failure", TF_NUMA + "\n" + FLASH_TURING, ["Ampere"], [], ["nothing to fix"]),
    ("deepspeed-cuda-cut-short", DEEPSPEED_SHORT, ["11.7", "PyTorch was built with another CUDA"],
     ["whl/cu117", "torch.version.cuda"], []),
    ("ordinal-past-visible", ORDINAL, ["4 processes", "only 2 GPUs are visible", "rank 2 and up"],
     ["--nproc_per_node=2"], []),
    ("ordinal-unsaid", "RuntimeError: CUDA error: invalid device ordinal", ["GPU index"], ["nvidia-smi -L"], []),
    ("torch-found-version-alone", TORCH_FOUND_12080, ["CUDA 12.8"], ["whl/cu12", "driver"], []),
    ("driver-too-old-framework-build", PADDLE_ERROR_35, ["PaddlePaddle's CUDA runtime"],
     ["driver", "paddlepaddle-gpu build for that CUDA", "nvidia-smi"], []),
    ("driver-too-old-program-unsaid", "CUDA driver version is insufficient for CUDA runtime version", ["driver"],
     ["driver"], ["keep this driver"]),
    ("trt-engine-other-gpu", TRT_DEVICE, ["compute capability 7.5", "this GPU is 6.1"], ["trtexec --onnx"],
     ["install the TensorRT release"]),
    ("ort-cpu-providers", ORT_CPU, ["CPU-only onnxruntime"], ["pip uninstall -y onnxruntime onnxruntime-gpu"], []),
    ("ct2-float16-harmless", CT2_FP16, ["harmless", "float32"], ["nothing to fix"], []),
    ("jax-cusolver-handle", CUSOLVER, ["cuSolver", "ptxas"], ['jax[cuda12]', "nvidia-cuda-nvcc-cu12"], []),
    ("nccl-nvls", NVLS, ["NVLS", "Fabric Manager"], ["nvidia-fabricmanager", "nvidia-smi -r", "NCCL_NVLS_ENABLE=0"], []),
    # the wheel index judges the pin for the paste's Python and platform
    ("pip-pin-without-wheel", PIP_PIN, ["no wheel for Python 3.11", "2.0.0 to 2.4.1"],
     ["torch==2.4.1", "py -3.10 -m venv"], []),
    ("pip-finds-no-release", PIP_NONE, ["32-bit", "Python 3.12 on Windows"], ["calcsize", "-m pip install -U pip"], []),
    ("paddle-note-no-kernels", PADDLE_NOTE, ["PaddlePaddle's, for CUDA 10.2", "compute capability 8.6"],
     ["paddlepaddle-gpu", "CUDA 11.0 or newer"], ["nvcc -gencode"]),
    ("paddle-note-cudnn-init", PADDLE_INIT, ["CUDA 10.2", "cuDNN 8.1 loaded", "compute capability 7.5"], [], []),
    ("devices-busy", BUSY, ["Exclusive_Process"], ["compute_mode", "nvidia-smi -i 0 -c DEFAULT"], []),
    # a WDDM GPU has only the Default mode (NVML's nvmlDeviceSetComputeMode): the driver install, and no sudo
    ("devices-busy-windows", BUSY_WINDOWS, ["WDDM", "driver install is broken"],
     ["clean installation", "driver_model.current", "Administrator PowerShell"], ["sudo"]),
    ("invalid-ptx", INVALID_PTX, ["newer than the driver"], ["cupy-cuda", "driver"], []),
    ("dll-in-torch-folder", TORCH_DLL, ["caffe2_detectron_ops.dll"],
     ["pip install --force-reinstall torch", "Visual C++ Redistributable"], []),
    ("torch-own-library-missing", CAFFE2_NVRTC, ["PyTorch's own library libcaffe2_nvrtc.so"],
     ["pip install --force-reinstall torch"], ["Visual C++", "ld.so.conf"]),
    # the wheel index names the first torch with a Windows wheel for Python 3.13
    ("uv-no-wheel", UV_NO_WHEEL, ["Python 3.13 on Windows", "first release with one is 2.6.0"],
     ['uv add "torch>=2.6.0"'], []),
    ("tf-numa-older-words", TF_NUMA_OLD, ["harmless", "NUMA"], ["nothing to fix"], []),
    ("cuda-lazy-loading", LAZY, ["harmless", "CUDA_MODULE_LOADING=LAZY"], ["nothing to fix"], []),
    ("ngc-container-without-gpus", NGC_NO_DRIVER, ["started without the GPUs"], ["--gpus all"], []),
    ("nvidia-docker-image-cuda", DOCKER_CUDA, ["CUDA 8.0", "runs CUDA 7.5", "driver 3"], ["image of CUDA 7.5"], []),
    ("nvrm-probe-not-called", PROBE, ["nouveau"], ["blacklist nouveau"], []),
    ("ctranslate2-arm-cpu-only", CT2_ARM, ["CPU-only", "AArch64"], ["-DWITH_CUDA=ON"], ["pip install"]),
    ("paddle-arch-list", PADDLE_ARCH, ["sm_52, sm_60, sm_61, sm_70, sm_75", "Ampere"],
     ["paddlepaddle-gpu", "CUDA 11.0 or newer"], []),
    ("torch-dll-words-cut-short", TORCH_DLL_CUT, ["fbgemm.dll", "error 126"], ["Visual C++ Redistributable"], []),
    ("trt-engine-install", TRT_MAGIC, ["another TensorRT release"], ["trtexec", "install the TensorRT release"], []),
    # the wheel index holds both plugin wheels at jaxlib's release
    ("jax-plugin-not-jaxlibs-release", JAX_PLUGIN, ["jax-cuda12-plugin 0.9.2", "jaxlib 0.9.0.1"],
     ["jax-cuda12-plugin==0.9.0.1 jax-cuda12-pjrt==0.9.0.1"], []),
    ("tf-no-gpu-platform-unsaid", TF_NO_GPU, ["TensorFlow 2.12.0", "native Windows (2.10.0 was the last"],
     ["WSL2", "tensorflow==2.10.*", "on Python 3.7-3.10", "CUDA 11.8 and cuDNN 8.6"], []),
    ("tf-no-gpu-linux", TF_NO_GPU_LINUX, ["[and-cuda] extra"], ['tensorflow[and-cuda]==2.15.0'], ["Windows"]),
    ("tf-no-gpu-release-unsaid", "Num GPUs Available:  0", ["CPU-only TensorFlow"], ['tensorflow[and-cuda]'], []),
    # a plugin release PyPI's index does not hold: JAX's CUDA extra brings all three at one release
    ("jax-plugin-release-unknown", JAX_PLUGIN.replace("0.9.0.1", "0.0.7"), ["jaxlib 0.0.7"], ['jax[cuda12]'],
     ["==0.0.7"]),
    ("rust-no-binary-for-gpu", NO_BINARY_RUST, ["Tesla K80", "compute capability 3.7"],
     ["compute_37", "another GPU"], []),
    ("no-binary-ptx-jit", NO_BINARY, ["libnvidia-ptxjitcompiler"], ["ldconfig -p | grep libnvidia-ptxjitcompiler"],
     []),
    ("xla-out-of-memory", XLA_OOM, ["XLA", "preallocates"], ["XLA_PYTHON_CLIENT_PREALLOCATE=false"], []),
    # the wheel index holds 2.5.1 (PyPI's): cp37 to cp311; the paste's own -f link goes with the command
    ("pip-pinned-release-python", PADDLE_PY312, ["paddlepaddle-gpu 2.5.1 has no wheel for Python 3.12"],
     ["py -3.11 -m venv", "paddlepaddle-gpu==2.5.1.post120 -f https://www.paddlepaddle.org.cn/whl/windows/mkl/avx/"
      "stable.html"], []),
    # compat's release matrix: 1.3's stable build is CUDA 10.1; compat's driver table: 418.39 for it
    ("torch-no-cuda-release-floor", TORCH13_FALSE, ["CUDA 10.1", "418.39"],
     ["torch.version.cuda", "418.39"], []),
    ("build-requires-newer-cuda", REQUIRES_CUDA, ["older than CUDA 10.2", "PyTorch requires"],
     ["CUDA 10.2 toolkit or newer", "CUDA_HOME=/usr/local/cuda-10.2"], []),
    # compat/known_bad.toml [tensorflow]: 2.16 does not find its own nvidia-* wheels
    ("tf-2.16-wheels-not-found", TF_AND_CUDA_EMPTY, ["TensorFlow 2.16", "63362"],
     ["nvidia.__path__", "LD_LIBRARY_PATH"], []),
    ("tf-and-cuda-other-release", TF_AND_CUDA_EMPTY.replace("tensorflow[and-cuda]", "tensorflow[and-cuda]==2.18.0"),
     ["TensorFlow 2.18.0 lists no GPU"], ["tensorflow[and-cuda]==2.18.0"], ["nvidia.__path__"]),
    # https://github.com/PaddlePaddle/Paddle/issues/54995: "win11" is Windows (the py launcher, Scripts\activate)
    ("pip-pinned-release-win11", "win11下使用python3.11.4和CUDA12.2无法安装\nERROR: Could not find a version that "
     "satisfies the requirement paddlepaddle-gpu==2.4.2 (from versions: none)", ["has no wheel for Python 3.11"],
     ["py -3.10 -m venv", ".venv-py310\\Scripts\\activate"], []),
    ("pip-none-index-not-held", "ERROR: Could not find a version that satisfies the requirement acme-gpu==1.0 "
     "(from versions: none)\nPython 3.13.1", ["acme-gpu for Python 3.13"], ["older Python"], []),
    # A GPU of a retired architecture beside a status error, no release named: compat/gpu_arch.toml names its last
    # CUDA and driver branch, compat/known_bad.toml [torch] the last PyTorch with kernels for it
    ("retired-gpu-status", "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\nGPU: NVIDIA Tesla K40m",
     # 3.5: the wheels' architecture list starts at 3.7 from 1.3 on (a review of round 25; 1.13.1 is 3.7's last)
     ["Kepler", "compute capability 3.5", "CUDA 11.8 was the last", "R470"], ["torch==1.2.0"], ["torch==1.13.1"]),
    # TensorRT's cuDNN minor warning, in its own words and as a user retells it: the same major, so a warning
    # ONNX Runtime's CUDA provider found but a DLL it imports not (onnxruntime#20049): the CUDA and cuDNN of its
    # build (compat/framework_features.toml [onnxruntime_gpu]), never a reinstall of onnxruntime itself
    ("ort-provider-dll-126", ORT_126, ["onnxruntime_providers_cuda.dll is there", "cuDNN DLLs of its build"],
     [">=1.19,<1.27: CUDA 12 and cuDNN 9", 'onnxruntime-gpu[cuda,cudnn]>=1.21.0,<1.27', "preload_dlls()"],
     ["--force-reinstall", "Visual C++"]),
    ("ort-provider-dll-126-extras", "onnxruntime-gpu 1.22.0\n" + ORT_126, ["error 126"],
     ['onnxruntime-gpu[cuda,cudnn]==1.22.0', "preload_dlls()", "CUDA 12 and cuDNN 9"], ["--force-reinstall"]),
    ("ort-provider-dll-126-old", "onnxruntime-gpu 1.18.0\n" + ORT_126, ["error 126"],
     ["CUDA 11.8 and cuDNN 8", "bin folders on PATH", 'onnxruntime-gpu[cuda,cudnn]>=1.21.0,<1.27'], ["==1.18.0"]),
    # fresh12's families (round 32). PyTorch's DataLoader words (torch/csrc/DataLoader.cpp) as pastes wrap them
    ("shm-dataloader-wrapped", "RuntimeError: DataLoader worker (pid 47) is killed by signal: Bus\nerror. It is "
     "possible that dataloader's workers are out of shared\nmemory. Please try to raise your shared memory limit.",
     ["/dev/shm"], ["--shm-size"], []),
    ("docker-runtime-retold", "docker: Error response from daemon: unknow runtime specified nvidia.", ["GPU runtime"],
     ["nvidia-ctk runtime configure --runtime=docker"], []),
    # a release named beside the cuDNN it asks for: that release's build (compat's onnxruntime-gpu rows)
    ("ort-release-cudnn-missing", "onnxruntime 1.18需要cuDNN8\nlibcudnn.so.8: cannot open shared object file: No "
     "such file or directory", ["ONNX Runtime 1.18 is built with CUDA 11.8 and cuDNN 8"],
     ['"nvidia-cudnn-cu11==8.9.*"', "/nvidia/cudnn/lib", 'onnxruntime-gpu[cuda,cudnn]>=1.21.0,<1.27'], ["cu12"]),
    # XLA's ptxas older than the GPU (jax#17976): the first on PATH wins over the pip wheel's
    ("xla-ptxas-older-than-gpu", XLA_PTXAS, ["older than CUDA 11.8", "compute capability 8.9", "first on PATH"],
     ["bin folder from PATH", "xla_gpu_cuda_data_dir"], ["pip install"]),
    ("xla-ptxas-older-path-named", XLA_PTXAS.replace("at ptxas", "at /usr/local/cuda-11.2/bin/ptxas"),
     ["/usr/local/cuda-11.2/bin/ptxas"], ["remove /usr/local/cuda-11.2/bin from PATH"], []),
    # fresh13's families (round 32). PyTorch's own words when every cuDNN algorithm failed (Conv_v7.cpp): the build
    # for the paste's Python (3.8 here: 2.4 is the newest PyTorch with its wheels), then memory
    ("torch-no-valid-cudnn-algorithm", '  File "/home/u/.conda/envs/x/lib/python3.8/site-packages/torch/nn/modules/'
     'conv.py", line 566, in forward\nRuntimeError: Unable to find a valid cuDNN algorithm to run convolution',
     ["cuDNN found no engine"], ["upgrade cuDNN", "torch==2.4 ", "Python 3.8", "batch size"], ["cu129"]),
    # NVRTC older than the GPU (RoseTTAFold#156): PyTorch's build for a CUDA whose NVRTC knows it, not nvcc flags
    ("nvrtc-arch", "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)\nGPU: NVIDIA GeForce "
     "RTX 4090", ["NVRTC", "compute capability 8.9"], ["PyTorch build for CUDA 11.8"], ["-gencode"]),
    # c10's "RuntimeError: CUDA error: ..." is PyTorch's (Medallion#1): its build, not a rebuild
    ("torch-cuda-error-words", "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
     "I am using RTX 4090.", ["compute capability 8.9"], ["PyTorch build for CUDA 11.8"], ["-gencode"]),
    ("trt-cudnn-minor-warning", "[TRT] [W] TensorRT was linked against cuDNN 8.9.0 but loaded cuDNN 8.8.0",
     ["a warning, not an error", "8.9.0", "8.8.0"], ["nothing to fix"], []),
    # THC's words for CUBLAS_STATUS_NOT_INITIALIZED; the compute cache a sudo run left to root is the other cause
    ("cublas-not-initialized-thc", "THCudaCheck FAIL\ncublas runtime error : library not initialized at "
     "/pytorch/aten/src/THC/THCGeneral.cpp:216", ["CUBLAS_STATUS_NOT_INITIALIZED", "~/.nv"],
     ["nvidia-smi", "sudo rm -rf ~/.nv/ComputeCache"], []),
    # TensorFlow's cuDNN handle: memory first, then the compute cache an earlier run left (deep-rl-tensorflow#43)
    ("cudnn-handle-cache", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: "
     "CUDNN_STATUS_INTERNAL_ERROR", ["GPU memory", "~/.nv"], ["TF_FORCE_GPU_ALLOW_GROWTH=true",
                                                               "sudo rm -rf ~/.nv/ComputeCache"], []),
    # no GPU seen, the paste silent on why: CUDA_VISIBLE_DEVICES first, then the kernel module (deepnet#28: a kernel
    # update without a reboot)
    ("no-device-unexplained", "RuntimeError: CUDA error: no CUDA-capable device is detected",
     ["CUDA_VISIBLE_DEVICES", "kernel module"], ["unset CUDA_VISIBLE_DEVICES", "sudo modprobe nvidia", "reboot"], []),
    # PyTorch's RPATH into the environment's own lib folder: a conda cudatoolkit's cuBLAS beside another build
    ("conda-cudatoolkit-pair", "OSError: /opt/conda/envs/x/lib/python3.9/site-packages/torch/lib/../../../../libcublas"
     ".so.11: undefined symbol: cublasLt_for_cublas_HSS, version libcublasLt.so.11",
     ["conda cudatoolkit", "two builds are mixed", "libcublasLt.so.11"],
     ["conda list cudatoolkit", "torch.version.cuda", "LD_LIBRARY_PATH"], ["conda remove"]),
    # an NVIDIA library's own function missing (compat/sonames.toml [symbol_owners]): an older copy loads; where the
    # text lists the copies (ls -l of the soname links), the newest one's folder goes first (nccl#1784)
    ("undefined-owned-symbol-listed", 'undefined symbol: "ncclCommWindowRegister"\n'
     "lrwxrwxrwx 1 root root 17 Jul 17 19:02 /opt/nccl/build/lib/libnccl.so.2 -> libnccl.so.2.27.3\n"
     "lrwxrwxrwx 1 root root 17 Sep 10  2024 /usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.21.5",
     ["NCCL's own function", "NCCL 2.27.3 (/opt/nccl/build/lib)", "NCCL 2.21.5"],
     ["export LD_LIBRARY_PATH=/opt/nccl/build/lib:$LD_LIBRARY_PATH"], []),
    ("undefined-owned-symbol", "ImportError: undefined symbol ncclCommRegister", ["NCCL's own function", "older"],
     ["pip list 2>/dev/null | grep -i nvidia-", "uninstall the duplicate"], []),
    # a symbol no NVIDIA library's prefix names: the loader's finding, said as such
    ("undefined-unowned-symbol", "ImportError: undefined symbol: launchFusedAttentionKernel",
     ["launchFusedAttentionKernel"], ["LD_DEBUG=libs"], []),
    # a driver file already in the image on an Arm host: Jetson's L4T collision first, then the driver in the image
    ("container-file-exists-arm", "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
     "9f/merged/usr/lib/aarch64-linux-gnu/tegra/libnvidia-eglcore.so.32.5.1: file exists",
     ["Jetson", "L4T"], ["cat /etc/nv_tegra_release", "nvidia-container-toolkit", "remove the driver files"], []),
    ("container-file-exists-x86", "nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/"
     "9f/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05: file exists",
     ["driver was installed into the image"], ["remove the driver files"], ["nv_tegra_release"]),
    # conda's "pytorch=1.4.0" and "python=3.6.6": the release's default build (CUDA 10.1) reaches Turing, and the
    # build proposed is one that has wheels for Python 3.6
    ("conda-style-pins", "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\npytorch=1.4.0\npython=3.6.6",
     ["PyTorch 1.4.0", "CUDA 10.1 has kernels up to Turing", "Ampere"], ["Python 3.6", "torch==1.10.0+cu111"],
     ["cu129"]),
    ("no-device-retold", "\u7a0b\u5e8f\u8fd0\u884c\u7684\u65f6\u5019\uff0c\u63d0\u793a\uff1a\nno CUDA-capable is "
     "detected", ["CUDA_VISIBLE_DEVICES"], ["unset CUDA_VISIBLE_DEVICES"], []),
    # typographic quotes and full-width colons, as chat tools and CJK input methods retell a message
    ("typographic-quotes", "NVIDIA-SMI has failed because it couldn\u2019t communicate with the NVIDIA driver\uff1a "
     "Make sure that the latest NVIDIA driver is installed and running.", ["kernel module"], ["modprobe"], []),
    # Lua Torch7's cudnn.torch refusing a cuDNN of another major: the branch of the bindings for the one loaded
    # (compat/frameworks.toml [version_checks] names the branches there are: R4-R7)
    ("torch7-bindings-branch", "These bindings are for CUDNN 6.x (6005 <= cudnn.version > 7000) , while the loaded "
     "CuDNN is version: 7102", ["cuDNN 6", "7.1.2"], ["git clone -b R7 https://github.com/soumith/cudnn.torch.git"],
     []),
    ("torch7-bindings-no-branch", "These bindings are for CUDNN 5.x (5005 <= cudnn.version > 6000) , while the "
     "loaded CuDNN is version: 8005", ["cuDNN 5", "8.0.5"], ["cuDNN 5"], ["-b R8"]),
    # The GPU unnamed: how far the build's CUDA reaches, from its tag or the CUDA the text names (compat/gpu_arch.toml)
    ("build-reach-from-tag", "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
     "torch==1.7.1+cu101", ["CUDA 10.1 has kernels up to Turing", "Ampere", "CUDA 11.0 or newer"], ["torch"], []),
    ("build-reach-stated", "RuntimeError: CUDNN_STATUS_EXECUTION_FAILED\npytorch 0.4.1\ncuda 9.2",
     ["CUDA 9.2 has kernels up to Volta", "Turing", "CUDA 10.0 or newer"], ["torch"], []),
    # NVRTC's builtins of its own release, by name: not on the path, or libtorch's hashed copy (pytorch#99781)
    ("nvrtc-builtins-hashed", "terminate called after throwing an instance of 'c10::Error'\n  what():  nvrtc: error: "
     "failed to open libnvrtc-builtins.so.11.7.\n  Make sure that libnvrtc-builtins.so.11.7 is installed correctly.",
     ["libnvrtc-builtins.so.11.7", "CUDA 11.7", "hashed name"],
     ["ln -s libnvrtc-builtins-*.so.11.7 libnvrtc-builtins.so.11.7", "CUDA 11.7 toolkit"], []),
    ("trt-cudnn-minor-retold", "I get this: tensorrt is linked to cuDNN 8.9.0 but cuDNN 8.8.1 is loaded",
     ["a warning, not an error", "8.9.0", "8.8.1"], ["nothing to fix"], []),
    # The 9.20.0.48 wheels lack the tensor_ir engine (compat/known_bad.toml [cudnn], pytorch#188892): the release
    # PyTorch pins is read from PyPI's wheel index; unnamed, the known case is said with pip show to tell
    ("sublibrary-mismatch-pinned", "torch==2.13.0\nRuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize "
     "failed cudnn_status: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", ["nvidia-cudnn-cu13 9.20.0.48",
     "PyTorch 2.13.0 pins it", "libcudnn_engines_tensor_ir.so.9"], ['install -U "nvidia-cudnn-cu13>=9.21.0"'], []),
    ("sublibrary-mismatch-unnamed", "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failed cudnn_status: "
     "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", ["9.20.0", "PyTorch 2.12.0 to 2.13.0", "tensor_ir"],
     ["pip show nvidia-cudnn-cu13", 'install -U "nvidia-cudnn-cu13>=9.21.0"', "cudnn-doctor check"], ["<"]),
    # fresh8's families: a source build's own kernels (darknet-2836), a versioned cuDNN symbol the loaded copy lacks
    # (jax-2494: 7.4.2 lacked it, 7.6.5 had it), the package a traceback shows asking for a CUDA runtime (sockeye-787)
    ("source-build-execution-failed", " cuDNN status Error in: file: d:/tests/darknet/src/convolutional_kernels.cu : "
     "forward_convolutional_layer_gpu() : line: 538\ncuDNN Error: CUDNN_STATUS_EXECUTION_FAILED", [],
     ["install a CUDA toolkit new enough", "rebuild the program"], ["torch", "pip install"]),
    ("versioned-cudnn-symbol", "ImportError: .../jaxlib/xla_extension.so: symbol cudnnSetCTCLossDescriptorEx version "
     "libcudnn.so.7 not defined in file libcudnn.so.7 with link time reference", ["cudnnSetCTCLossDescriptorEx"],
     ["LD_LIBRARY_PATH", "cuDNN 7's newest, 7.6.5"], []),
    ("traceback-package", '  File "/usr/local/lib/python3.5/dist-packages/mxnet/base.py", line 204, in _load_lib\n'
     "    lib = ctypes.CDLL(lib_path[0], ctypes.RTLD_LOCAL)\nOSError: libcudart.so.9.0: cannot open shared object file: "
     "No such file or directory", ["the mxnet package loads it", "CUDA 9.0"], [], []),
    # ... but not where the paste rules 9.20's wheels out: cuDNN 8, another framework, a build of another CUDA
    ("sublibrary-mismatch-cudnn8", "Could not load library libcudnn_cnn_infer.so.8. "
     "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", [], [], ["9.21.0"]),
    ("sublibrary-mismatch-tensorflow", "tensorflow 2.5 with cuDNN 8.1.0: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", [],
     [], ["9.21.0"]),
    ("sublibrary-mismatch-tagged", "torch 2.13.0+cu126: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", [],
     ["pip show nvidia-cudnn-cu12", "nvidia-cudnn-cu12>=9.21.0"], ["cu13"]),
    ("sublibrary-mismatch-other-pin", "torch==2.11.0\nRuntimeError: cudnn_status: "
     "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", ["sub-libraries"], ["cudnn-doctor fix"], ["9.21.0", "<"]),
    # https://github.com/NVIDIA/nvidia-docker/issues/24: --device flags only, a driver (346.46) new enough
    ("docker-run-without-gpus", "cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA "
     "runtime version\n\ndocker run --device /dev/nvidia-uvm:/dev/nvidia/uvm --device /dev/nvidia0:/dev/nvidia0 \\\n"
     "--device /dev/nvidiactl:/dev/nvidiactl -it nvidia/cuda:7.0-cudnn3-devel bash",
     ["started without the GPUs", "--device flags"], ["docker run --gpus all"], ["ubuntu-drivers"]),
    ("docker-run-with-gpus-driver-old", "$ docker run --gpus all -it img\ncudaGetDeviceCount returned 35\n-> CUDA "
     "driver version is insufficient for CUDA runtime version", ["driver"], [], ["docker run --gpus"]),
    # https://github.com/Peterande/D-FINE/issues/289: NCCL's own check (src/init.cc), a GPU hard-coded in train.py
    ("nccl-duplicate-gpu", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1691, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\nDuplicate GPU detected : "
     "rank 0 and rank 1 both on CUDA device 2000", ["same GPU", "2000"], ["set_device", "LOCAL_RANK"],
     ["NCCL_DEBUG", "shm"]),
    # https://github.com/huggingface/transformers/issues/21663 (a PyTorch/CUDA mismatch; reinstalled, it ran) and the
    # cause pytorch#91067 names: a toolkit's libcublasLt on LD_LIBRARY_PATH paired with the pip libcublas
    ("cublas-invalid-value", "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, "
     "opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb)`", ["libcublasLt", "LD_LIBRARY_PATH"],
     ["env -u LD_LIBRARY_PATH", "pip check", "reinstall the framework's installed release"], []),
    # https://github.com/cupy/cupy/issues/8466: ComfyUI's embedded Python, no CUDA Toolkit
    ("cupy-runtime-headers", "ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\cupy\\_core\\include\\"
     "cupy\\_cuda\\cuda-12.4\\cuda_fp16.h(129): catastrophic error: cannot open source file \"vector_types.h\"",
     ["vector_types.h", "12.4"], ['pip install "nvidia-cuda-runtime-cu12==12.4.*"'], []),
    ("nvidia-docker-run-no-device", "$ nvidia-docker run -it img python t.py\nRuntimeError: CUDA error: no CUDA-capable "
     "device is detected", ["GPU"], [], ["docker run --gpus all -e"]),
    # the driver was reached inside the container (nvidia-smi ran, PyTorch read its CUDA): the driver is the cause
    ("docker-run-driver-reached", "$ docker run -it --rm pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime nvidia-smi\n"
     "| NVIDIA-SMI 470.182.03 Driver Version: 470.182.03 CUDA Version: 11.4 |\nRuntimeError: The NVIDIA driver on your "
     "system is too old (found version 11040).", ["11.4"], [], ["docker run --gpus"]),
    ("docker-run-gpus-on-next-line", "docker run -it img\n   --gpus all\ncudaGetDeviceCount returned 35\n-> CUDA "
     "driver version is insufficient for CUDA runtime version", ["driver"], [], ["docker run --gpus"]),
    ("docker-default-runtime", '{"default-runtime": "nvidia"}\n$ docker run -it img\ncudaGetDeviceCount returned 35\n'
     "-> CUDA driver version is insufficient for CUDA runtime version", [], [], ["docker run --gpus"]),
    # CUDA 13's runtime wheel has no -cu13 suffix (nvidia-cuda-runtime-cu13 is a 0.0.1 placeholder on PyPI)
    ("cupy-runtime-headers-13", "site-packages/cupy/_core/include/cupy/_cuda/cuda-13.0/cuda_fp16.h(1): catastrophic "
     'error: cannot open source file "vector_types.h"', ["13.0"], ['pip install "nvidia-cuda-runtime==13.0.*"'],
     ["-cu13"]),
    # fresh9's families. https://github.com/localminimum/QANet/issues/5: TensorFlow's own driver check, CUDA 9.0's
    # floor (384.81) against the 384.69 it read
    ("tf-insufficient-driver", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:385] could not create cudnn handle: "
     "CUDNN_STATUS_NOT_INITIALIZED\nE tensorflow/stream_executor/cuda/cuda_dnn.cc:393] possibly insufficient driver "
     "version: 384.69.0\ntensorflow version: 1.5.0\nCUDA: 9.0", ["384.69", "CUDA 9.0", "384.81"], ["384.81"], []),
    # https://github.com/jax-ml/jax/issues/11477: the stream executor's own words for a module/library mismatch
    ("dso-mismatch", "kernel version 515.48.7 does not match DSO version 510.73.5 -- cannot find working devices in "
     "this configuration", ["libraries are 510.73.5", "kernel module 515.48.7"], ["reboot"], []),
    # https://github.com/hpc-admin-sist/DockerMonitor/issues/42: a driver installed inside a Docker container
    ("nvml-mismatch-in-container", "root@3f2a9c0d1b7e:/app# nvidia-smi\nFailed to initialize NVML: Driver/library "
     "version mismatch", ["inside a container"], ["remove the NVIDIA driver installed inside the container"],
     ["sudo reboot"]),
    # the container runtime's own NVML reads the host's driver: the host's mismatch (nvidia-container-toolkit#394)
    ("nvml-mismatch-container-cli", "nvidia-container-cli: initialization error: nvml error: driver/library version "
     "mismatch: unknown.", ["kernel module"], ["reboot"], ["inside the container"]),
    # https://github.com/NVIDIA/cuml/issues/5624 (numba#6777): WSL's own libcuda first
    ("wsl-no-device", "WSL2 CUDA 12.2: numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in "
     "CUDA_ERROR_NO_DEVICE", ["under WSL", "/usr/lib/wsl/lib"], ["export LD_LIBRARY_PATH=/usr/lib/wsl/lib",
                                                                  "NUMBA_CUDA_DRIVER"], ["modprobe"]),
    # https://github.com/NVIDIA/TensorRT/issues/3898: TensorRT 8.6 in the base environment, 10.1 in the venv
    ("trt-two-installs", "[TRT] [E] 1: [stdArchiveReader.cpp::StdArchiveReaderInitCommon::46] Error Code 1: "
     "Serialization (Serialization assertion stdVersionRead == serializationVersion failed.Version tag does not match. "
     "Note: Current Version: 236, Serialized Engine Version: 237)", ["two TensorRT installs"],
     ["pip uninstall tensorrt", "trtexec"], []),
    # detectron2 is not on PyPI: its rebuild names its own repository (compat [extension_sources]), never a project
    # pip cannot find (the pip resolver judged the earlier `pip install ... detectron2`: no matching distribution)
    ("extension-not-on-pypi", "/home/tony/anaconda3/envs/detect2/lib/python3.6/site-packages/detectron2/_C.cpython-36m-"
     "x86_64-linux-gnu.so: undefined symbol: _ZNK2at10TensorBase8data_ptrIdEEPT_v", ["another PyTorch release"],
     ["git+https://github.com/facebookresearch/detectron2.git"], ["no-cache-dir detectron2"]),
    ("nvrtc-headers-not-cupy", 'default_program(1): catastrophic error: cannot open source file "cuda_runtime.h"',
     ["NVRTC", "CUDA Toolkit"], ["CUDA_PATH"], ["pip install"]),
    # fresh10's families. https://github.com/heavyai/heavydb/issues/617: the driver's JIT (ptxas inside libcuda)
    # refusing PTX of CUDA 11.0 (ISA 7.0) as a CUDA 10.1 driver (ISA 6.4); CUDA 11.0's floor from compat
    ("ptx-isa-driver-jit", "NvidiaKernel.cpp:82 Check failed: cuLinkAddFile_v2(...) == CUDA_SUCCESS (218 == 0) ptxas "
     "application ptx input, line 9; fatal   : Unsupported .version 7.0; current version is '6.4'.",
     ["ISA 7.0", "CUDA 11.0", "CUDA 10.1"], ["450.36.06"], []),
    # a ptxas program of its own (XLA's) says "ptxas :": the newer ptxas is the fix there, not the driver
    ("ptx-isa-own-ptxas", "ptxas : Unsupported .version 8.4; current version is '8.2'", ["ptxas"], [],
     ["CUDA 12.4 needs driver"]),
    # https://github.com/openmm/openmm/issues/1485: NVRTC's own words, naming no file and no CUDA
    ("nvrtc-builtins-unnamed", "Exception: Error compiling program: nvrtc: error: failed to load builtins",
     ["libnvrtc-builtins"], ["LD_LIBRARY_PATH"], ["nvidia-cuda-nvrtc-cu12"]),
    # https://github.com/davisking/dlib/issues/2719: the version node retold without its symbol
    # CUDA 12.6 still wrote ISA 8.5: a JIT at 8.5 may be a CUDA 12.6 driver, so the older toolkit named is 12.6
    ("ptx-isa-shared-by-two", "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.7; current "
     "version is '8.5'", ["CUDA 12.8", "CUDA 12.6 driver"], ["CUDA 12.6 or older"], []),
    # the review's false friends: a launcher's name is not the program; glibc's own version node is not two copies
    ("device-cuda-launcher", "$ cargo run --release -- serve --model TabbyML/StarCoder-1B --device cuda\nerror: "
     "invalid value 'cuda' for '--device <DEVICE>'\n  [possible values: cpu]", ["without its CUDA feature"],
     ["rebuild the program"], ["rebuild cargo", "StarCoder"]),
    ("conda-superseded-main", "The following packages will be SUPERSEDED by a higher-priority channel:\n  pytorch  "
     "pkgs/main::pytorch-1.7.1-cuda102py38_0 --> conda-forge::pytorch-1.7.1-cpu_py38h1d3a2e8_0", ["pkgs/main"],
     ['conda install -c pkgs/main "pytorch=1.7.1=*cuda*"'], ["-c main "]),
    # https://github.com/jianchang512/parakeet-api/issues/5: the card by its number before the word for one
    ("card-number-cjk", "5090显卡无法运行\nCUDA error: no kernel image is available for execution on the device",
     ["RTX 5090", "12.0"], ["sm_120 (CUDA 12.8 or newer)"], []),
    # https://github.com/PaddlePaddle/PaddleX/issues/4682: Paddle's words, no GPU named
    ("paddle-no-kernel-image", "OSError: (External) CUDA error(209), no kernel image is available for execution on "
     "the device.", ["no kernels"], ["paddlepaddle-gpu", "compute_cap"], ["nvcc -gencode"]),
    # https://github.com/jax-ml/jax/issues/22522: a jaxlib local CUDA build pinned, a README given as find-links
    ("jaxlib-local-build", "ERROR: Could not find a version that satisfies the requirement jaxlib==0.4.29+cuda12.cudnn88 "
     "(from versions: 0.1.75+cuda11.cudnn805, 0.1.75+cuda11.cudnn82)", ["never on PyPI", "jax[cuda12]"],
     ['pip install -U "jax[cuda12]"'], ["jaxlib=="]),
    # https://github.com/NVIDIA/k8s-device-plugin/issues/23: go-nvml's words in the device plugin's pod
    ("container-no-nvml", "loading NVML\nFailed to start nvml with error:  could not load NVML library",
     ["libnvidia-ml", "runtime"], ["--set-as-default", "runtimeClassName"], []),
    # https://github.com/NVIDIA/nccl/issues/328: NCCL refused /dev/shm by its mode, not by its size
    ("shm-permission", "include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\ninclude/shm.h:48 NCCL "
     "WARN Error while creating shared memory segment nccl-shm-recv-b79 (size 4460544)", ["not writable"],
     ["chmod 1777 /dev/shm"], ["--shm-size"]),
    # https://github.com/niuchuangnn/SPICE/issues/26: PyTorch's warning lists the architectures its build carries
    ("build-carries", "UserWarning: NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the "
     "current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 "
     "sm_70 sm_75 compute_37.", ["carries sm_37 to sm_75 only", "older than 11.0"], [], []),
    # https://github.com/gpustack/gpustack/issues/1382: the card written with a hyphen and its D
    ("card-hyphen", "Failed to run llama-box with RTX-5090D - CUDA error: no kernel image is available for execution "
     "on the device", ["Blackwell", "CUDA 12.8"], ["sm_120"], []),
    # https://github.com/NVIDIA/caffe/issues/525: an NGC container's entry point refusing the GPU
    ("container-gpu-unsupported", "ERROR: Detected NVIDIA Tesla K80 GPU, which is not supported by this container\n"
     "ERROR: No NVIDIA supported GPU(s) detected to run this container", ["Tesla K80", "Kepler"],
     ["supported GPU"], []),
    # https://github.com/QwenLM/Qwen3/issues/295: vLLM's KV cache smaller than the model's context
    ("vllm-kv-cache", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that "
     "can be stored in KV cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
     "initializing the engine.", ["7344", "32768"], ["--max-model-len 7344", "--gpu-memory-utilization"], []),
    # the review's false friends of round 25: go-nvml's words on a bare host, a folder named wsl, NGC's newer wording
    ("host-no-nvml", "On my bare-metal Ubuntu host, nvidia-smi fails: could not load NVML library",
     ["driver's NVML library"], ["NVIDIA driver"], ["--set-as-default"]),
    ("folder-named-wsl", "$ cd ~/wsl && python train.py\nCUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
     [], [], ["wsl --shutdown"]),
    ("container-gpu-not-yet", "WARNING: Detected NVIDIA NVIDIA GeForce RTX 4090 GPU, which is not yet supported in "
     "this version of the container\nERROR: No supported GPU(s) detected to run this container", ["RTX 4090"],
     ["a newer release"], ["an older release"]),
    ("card-after-cjk", "我的5090显卡 CUDA error: no kernel image is available for execution on the device",
     ["RTX 5090", "12.0"], [], []),
    ("card-full-name-hyphen", "NVIDIA GeForce RTX-5090D CUDA error: no kernel image is available for execution on "
     "the device", ["RTX-5090D", "12.0"], [], []),
    # https://github.com/cupy/cupy/issues/1034: NVRTC's stub answering for the library
    ("nvrtc-stub", "You are running using the stub version of nvrtc", ["stub", "CUDA_PATH"], ["lib64/stubs",
                                                                                            "cupy-cuda12x"], []),
    # bitsandbytes' own words for its native library not loading (bitsandbytes#492, #1210)
    ("bitsandbytes-native", "AttributeError: 'NoneType' object has no attribute 'cquantize_blockwise_fp16_nf4'",
     ["native CUDA library"], ["pip install -U bitsandbytes"], []),
    # https://github.com/ContinuumIO/anaconda-issues/issues/12302: channel priority, the CUDA build kept by its channel
    ("conda-superseded", "The following packages will be SUPERSEDED by a higher-priority channel:\n  pytorch    "
     "pytorch::pytorch-1.7.1-py3.8_cuda10.2~ --> pkgs/main::pytorch-1.7.1-cpu_py38h6a09485_0",
     ["pytorch 1.7.1", "pkgs/main", "channel priority"], ['conda install -c pytorch "pytorch=1.7.1=*cuda*"',
                                                          "conda config --prepend channels pytorch"], []),
    # https://github.com/TabbyML/tabby/issues/1163: clap's words for a binary built without its cuda feature
    ("device-cuda-not-built", "target/debug/tabby  serve  --model TabbyML/StarCoder-1B --device cuda\nerror: invalid "
     "value 'cuda' for '--device <DEVICE>'\n  [possible values: cpu]", ["without its CUDA feature"],
     ["rebuild tabby", "--features cuda"], []),
    ("version-node-without-symbol", "version libcudnn_ops_infer.so.8 not defined in file libcudnn_ops_infer.so.8",
     ["two copies of libcudnn_ops_infer.so.8", "version node"], ["LD_LIBRARY_PATH"], ["is not found"]),
    # fresh11's families (round 30). https://github.com/triton-lang/triton/issues/8539: Triton's own ptxas older than
    # the GPU (sm_121a, DGX Spark), whose first CUDA comes from compat's architecture matrix
    ("ptxas-arch-triton", "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\nRepro command: "
     "/env/lib/python3.10/site-packages/triton/backends/nvidia/bin/ptxas -lineinfo -v --gpu-name=sm_121a x.ptx",
     ["Triton's own ptxas", "CUDA 12.9", "compute capability 12.1"], ["TRITON_PTXAS_PATH"], []),
    ("ptxas-arch-alone", "ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'",
     ["ptxas is older than CUDA 12.8", "compute capability 12.0"], ["CMAKE_CUDA_ARCHITECTURES=120"],
     ["TRITON_PTXAS_PATH"]),
    # https://github.com/ggml-org/llama.cpp/issues/5686: ggml-cuda's own check, a build for arch 520 on an RTX 3090
    ("ggml-arch", "ERROR: CUDA kernel vec_dot_q5_K_q8_1_impl_vmmq has no device code compatible with CUDA arch 520. "
     "ggml-cuda.cu was compiled for: 520\nnvidia rtx 3090", ["520 (compute capability 5.2)", "8.6"],
     ["-DCMAKE_CUDA_ARCHITECTURES=86"], []),
    # https://github.com/Nerogar/OneTrainer/issues/487: PyTorch's own DLL named bare (compat/windows.toml package_dlls)
    ("torch-dll-bare", "[Bug]: error loading fbgemm.dll", ["fbgemm.dll", "error 126"],
     ["pip install --force-reinstall torch", "Visual C++ Redistributable"], []),
    # https://github.com/google/jax/issues/14931: cuDNN's own words for the cuBLAS its CUDA 12 build opens, on a
    # machine whose text says CUDA 11.8: cuDNN's build for 11.8
    ("cudnn-asks-cublas", "Could not load library libcublasLt.so.12. Error: libcublasLt.so.12: cannot open shared "
     "object file: No such file or directory\nOn my system I installed cuda 11.8 and cudnn 8.8.",
     ["cuDNN loaded is a build for CUDA 12", "11.8"], ['nvidia-cudnn-cu11==8.*'], ["nvidia-cublas-cu12"]),
    # https://github.com/jax-ml/jax/issues/16625: cuDNN's sub-library found, the cuBLAS it opens not; the jaxlib
    # build tag (+cuda11.cudnn86) says CUDA 11, and NVIDIA's cuDNN wheel brings the cuBLAS wheel it requires
    ("cudnn-needs-cublas", "Could not load library libcudnn_ops_infer.so.8. Error: libcublas.so.11: cannot open "
     "shared object file: No such file or directory\nFatal Python error: Aborted\n\njax v4.13  jaxlib "
     "v0.4.13+cuda11.cudnn86", ["libcublas.so.11 is not found", "libcudnn_ops_infer.so.8 itself was found",
                                "nvidia-cublas-cu11"], ['nvidia-cudnn-cu11==8.*', 'nvidia-cublas-cu11==11.*'],
     ["nvidia-cudnn-cu12"]),
    # https://github.com/taolei87/sru/issues/3: an NVIDIA library's function dated by the first release that has it
    # (compat/sonames.toml [symbols_since_documented] for CUDA 8.0's NVRTC; compat/symbols_since.json from the real
    # wheels for the later ones)
    ("symbol-since-documented", "libnvrtc.so: undefined symbol: nvrtcAddNameExpression",
     ["first came with CUDA 8.0"], ["CUDA 8.0's or newer", "ldconfig -p | grep libnvrtc.so"], []),
    ("symbol-since-wheels", "ImportError: libtorch_cuda.so: undefined symbol: nvrtcGetLTOIR",
     ["first came with CUDA 12.0"], ["CUDA 12.0's or newer"], []),
    ("symbol-since-nccl", "undefined symbol: ncclCommWindowRegister", ["first came with NCCL 2.27"],
     ["NCCL 2.27's or newer"], []),
    # https://github.com/traveller59/spconv/issues/423 and 534; https://github.com/NVIDIA/cuEquivariance/issues/29:
    # a library's own words for a CPU-only build, a build without the GPU's architecture, a GPU below its floor
    ("spconv-cpu-only", "ValueError: /io/include/tensorview/tensor.h(171)\ndon't compiled with cuda\ntorch "
     "2.1.0+cu121", ["CPU-only spconv or cumm", "CUDA 12.1"], ["pip uninstall -y spconv cumm spconv-cu121 cumm-cu121", "pip install spconv-cu121"],
     []),
    ("spconv-arch", "ConvTunerSimple_cached_get_nvrtc_params.cc(18)\nnot implemented in c++, must be overrided in "
     "python!!!\nRTX 3090", ["libspconv has no kernels", "compute capability 8.6"], ["CUMM_CUDA_ARCH_LIST=8.6"], []),
    ("cuequivariance-arch", "RuntimeError: can't query kernel attributes\nDevice name: NVIDIA GeForce GTX 1070 Ti",
     ["compute capability 7.0 (Volta)", "6.1"], ["compute capability 7.0 or newer"], []),
    # https://github.com/NVIDIA/libnvidia-container/issues/67: nvidia-smi inside a container, the cache not rebuilt
    ("container-ldcache", "When I launch a docker container, nvidia-smi inside the container says: NVIDIA-SMI "
     "couldn't find libnvidia-ml.so library in your system.", ["loader cache"], ["ldconfig", "config.toml"], []),
    ("nvidia-smi-no-nvml-host", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",
     ["driver's libraries"], ["NVIDIA driver"], ["config.toml"]),
    # https://github.com/open-mmlab/mmdetection/issues/3272: mmcv without its compiled ops
    ("mmcv-no-ops", "ModuleNotFoundError: No module named 'mmcv._ext'", ["mmcv-full", "without its CUDA/C++ ops"],
     ["mim install mmcv", "mmcv-full<1.8"], []),
    # https://github.com/ollama/ollama/issues/12341: a Pascal GPU under a CUDA 13 build; compat's architecture rows
    # say its CUDA span (8.0 to 12.9) and the major that dropped it
    ("arch-dropped-by-cuda-13", 'CUDA error: no kernel image is available for execution on the device\n  Model: '
     '"nVidia GP106GL [Quadro P2000]"', ["CUDA 8.0 to 12.9", "CUDA 13.0 dropped Pascal"], ["CUDA 8.0 to 12.9"],
     ["or newer"]),
]


def test_plain_punctuation_keeps_every_span_where_it_was():
    text = "cuda\uff1a11.7 \u201cquoted\u201d couldn\u2018t \uff08x\uff09"
    plain = plain_punctuation(text)
    assert plain == 'cuda:11.7 "quoted" couldn\'t (x)' and len(plain) == len(text)


def test_a_gpu_today_s_builds_still_serve_is_not_called_retired():
    ex = explain("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\nGPU: NVIDIA GeForce RTX 3090",
                 check=False).explanation
    assert "dropped" not in ex.answer.cause and "1.13.1" not in ex.fix.text


def test_a_retired_gpu_under_another_framework_is_not_given_pytorch_s_release():
    ex = explain("tensorflow: CUDNN_STATUS_NOT_INITIALIZED\nGPU: NVIDIA Tesla K80", check=False).explanation
    assert "torch==" not in ex.fix.text


@pytest.mark.parametrize("text, cause, fix, not_in_fix", [row[1:] for row in FAMILIES], ids=[row[0] for row in FAMILIES])
def test_each_family_is_answered_from_what_the_paste_says(text, cause, fix, not_in_fix):
    assert_answer(text, cause, fix, not_in_fix)


def test_pip_finding_no_release_of_a_project_the_index_does_not_hold_is_not_guessed():
    """pip lists only releases it can install here: none in the range means none installs here, which is said; which
    Python those releases need is not in the text, so none is named (fresh11 cumm-28: spconv's cumm<0.5.0,>=0.4.5)."""
    text = "ERROR: Could not find a version that satisfies the requirement acme-widgets==1.0 (from versions: 2.0)"
    ex = explain(text, check=False).explanation
    assert "other Pythons or platforms only, or do not exist" in ex.answer.cause, ex.answer.cause
    assert "https://pypi.org/project/acme-widgets/#files" in ex.fix.text and "Python 3." not in ex.fix.text
    asked = ("ERROR: Could not find a version that satisfies the requirement cumm<0.5.0,>=0.4.5 (from spconv) (from "
             "versions: 0.1.0, 0.5.0, 0.6.3)")
    ex = explain(asked, check=False).explanation
    assert "(which spconv asks for)" in ex.answer.cause and "a release of spconv" in ex.fix.text, ex.fix.text
    listed = "ERROR: Could not find a version that satisfies the requirement acme-widgets>=1 (from versions: 2.0)"
    assert explain(listed, check=False).explanation.answer is None  # one listed is in the range: pip's words differ


def test_a_package_is_named_as_the_loader_only_from_a_frame_of_the_load():
    # sockeye-787's MXNet frame held ctypes.CDLL; a wrapper's frame above an error with no load frame names nobody
    text = ('  File "/usr/lib/python3/dist-packages/wrapper/run.py", line 3, in main\n'
            "OSError: libcudart.so.9.0: cannot open shared object file: No such file or directory")
    assert "package loads it" not in explain(text, check=False).explanation.answer.cause


def test_a_site_folder_of_the_active_python_is_asked_of_it_when_the_line_runs(tmp_path):
    """The export line explain prints where the paste names no environment: run as printed by sh, with a `python`
    first on PATH, it puts that interpreter's own site-packages folder first."""
    import subprocess
    import sys

    ex = explain("onnxruntime 1.18\nlibcudnn.so.8: cannot open shared object file: No such file or directory",
                 check=False).explanation
    line = next(c for c in ex.fix.commands if c.startswith("export LD_LIBRARY_PATH="))
    (tmp_path / "python").symlink_to(sys.executable)
    site = subprocess.run([str(tmp_path / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    out = subprocess.run(["sh", "-c", line + '; printf %s "$LD_LIBRARY_PATH"'], capture_output=True, text=True,
                         env={"PATH": "%s:/usr/bin:/bin" % tmp_path, "LD_LIBRARY_PATH": "/old"}, check=True).stdout
    assert out == site + "/nvidia/cudnn/lib:/old"
