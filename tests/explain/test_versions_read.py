"""Versions and programs a paste carries, read where the answer had only the message class: the first PyTorch a driver
no longer runs, a CUDA older than the driver table's, Caffe's and CTranslate2's own check macros, pip's
"Successfully installed" line, a PyTorch release known for a missing DLL, an nvcc older than the GPU that may be
shadowing a newer one, bitsandbytes' older words for the library it looked for, a loader cache naming another
driver's libraries, the package whose compiled module's import asks for a missing library, tiny-cuda-nn's own words
for an architecture its bindings lack, diffusers' PyTorch pipeline files, ATen's own cuDNN check, and ONNX Runtime's
required CUDA against the CUDA the user states. Each text is a real paste from the thread named beside it."""
from __future__ import annotations

import pytest
from explain_grading import assert_answer

from cudnn_doctor.explain.paste_facts import read_paste

# (thread, text, words the cause says, words the fix says, words the fix must not say)
CASES = [
    ("https://github.com/ivadomed/ivadomed/issues/69",
     "AssertionError: \nThe NVIDIA driver on your system is too old (found version 10000).\nPlease update your GPU "
     "driver by downloading and installing a new\nversion from the URL: http://www.nvidia.com/Download/index.aspx",
     ["driver runs CUDA 10.0", "PyTorch 1.8 and newer are built for CUDA 10.1 or newer"], ["torch==1.2"], []),
    ("https://github.com/MVIG-SJTU/RMPE/issues/7",
     "libcudart.so.5.5: cannot open shared object file: No such file or directory",
     ["libcudart.so.5.5", "CUDA 5.5's"], ["CUDA 5.5 toolkit"], []),
    ("https://github.com/yjxiong/caffe/issues/174",
     "Error with Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0) CUDNN_STATUS_INTERNAL_ERROR",
     ["Caffe's cuDNN convolution layer", "grouped (depthwise)"], ["engine: CAFFE"], []),
    ("https://github.com/NVIDIA/nvidia-docker/issues/1515",
     "The latest nvidia-container-toolkit caused inconsistent cuda version and 804 error.",
     ["forward-compatibility", "error 804"], ["cuda-compat"], []),
    ("https://github.com/pytorch/pytorch/issues/131662",
     "```Installing collected packages: torch Successfully installed torch-2.4.0+cu121```\n\n```import torch```\n\n"
     'OSError: [WinError 126] The specified module could not be found. Error loading "c:\\Users\\Noor\\anaconda3\\'
     'envs\\DL\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
     ["PyTorch 2.4.0", "libomp140.x86_64.dll", "fixed in 2.4.1"], ["torch==2.4.1"], []),
    ("https://github.com/OpenNMT/CTranslate2/issues/1842",
     "NVIDIA-SMI 470.256.02   Driver Version: 470.256.02   CUDA Version: 11.4\n\n`Predictions may fail: CUDA "
     "failed with error CUDA driver version is insufficient for CUDA runtime version`",
     ["CTranslate2", "CUDA 12", "525.60.13", "runs CUDA 11.4", "3.24.0"], ['pip install "ctranslate2==3.24.0"'],
     ["PyTorch"]),
    ("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/551",
     "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\nCUDA SETUP: "
     "CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so\nCUDA SETUP: Detected CUDA version 122\nCUDA SETUP: "
     "Required library version not found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?\n"
     "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...",
     ["bitsandbytes", "found CUDA 12.2", "libbitsandbytes_cuda122.so, which this release does not ship"],
     ["pip install -U bitsandbytes"], ["find / -name"]),
    ("https://github.com/hpc-admin-sist/DockerMonitor/issues/12",
     "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch",
     ["different releases", "ldconfig"], ["sudo ldconfig", "sudo reboot"], []),
    ("https://github.com/kaito-project/kaito/issues/2086",
     "(EngineCore pid=169)   File \"/usr/local/lib/python3.12/site-packages/nixl_ep/__init__.py\", line 23, in "
     "<module>\n(EngineCore pid=169)     from . import nixl_ep_cpp as _nixl_ep_cpp\n(EngineCore pid=169) ImportError: "
     "libcudart.so.13: cannot open shared object file: No such file or directory",
     ["libcudart.so.13", "the nixl_ep package loads it: its build is for CUDA 13"], [], []),
    ("https://github.com/NVlabs/tiny-cuda-nn/issues/434",
     '  File "/home/xns/miniconda3/envs/3dgs/lib/python3.10/site-packages/tinycudann-1.7-py3.10-linux-aarch64.egg/'
     'tinycudann/modules.py", line 59, in <module>\n    raise EnvironmentError(f"Could not find compatible tinycudann '
     'extension for compute capability {system_compute_capability}.")\nOSError: Could not find compatible tinycudann '
     "extension for compute capability 87.",
     ["tiny-cuda-nn", "compute capability 8.7"], ["export TCNN_CUDA_ARCHITECTURES=87", "bindings/torch"], []),
    ("https://github.com/microsoft/onnxruntime/issues/21769",
     "I used onnxruntime-gpu==1.18.1 before, it can load onnx and work in CUDA\uff0811.7\uff09.\n\nToday, after "
     "upgrading to onnxruntime-gpu==1.19.0, it prompts that CUDA does not work\n[W:onnxruntime:Default, "
     "onnxruntime_pybind_state.cc:965 onnxruntime::python::CreateExecutionProviderInstance] Failed to create "
     "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.",
     ["built with CUDA 12", "the CUDA here is 11.7"], ['"onnxruntime-gpu==1.18.1"'], ["nvidia-cudnn-cu11"]),
    ("https://github.com/yuval-alaluf/Attend-and-Excite/issues/7",
     'CUDA error : no kernel image is available for execution\n\nI have this error : "CUDA error : no kernel image is '
     'available for execution" on line 91 of pipeline_stable_diffusion.py.',
     ["no kernels for this GPU"], ["PyTorch build", "download.pytorch.org/whl/cu"], ["nvcc -gencode"]),
    ("https://github.com/msracver/Deep-Image-Analogy/issues/3",
     "F0525 12:35:32.850440 182776 cudnn_conv_layer.cu:28] Check failed: status == CUD\nNN_STATUS_SUCCESS (8 vs. 0)  "
     "CUDNN_STATUS_EXECUTION_FAILED\n*** Check failure stack trace: ***",
     ["execution failed", "else memory"], ["rebuild the program", "lower the batch size"], []),
    ("https://github.com/Turoad/CLRNet/issues/24",
     "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\neven if reduced batch size to 1, still shows up this error",
     ["PyTorch's own cuDNN", "CUDA 11.0 for Ampere", "batch size 1"], ["download.pytorch.org/whl/cu", "batch size"],
     ["nvidia-cudnn-cu"]),
    ("https://github.com/megvii-research/DPGN/issues/15",
     "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous "
     "input.", ["PyTorch's own cuDNN has no engine", "older than the GPU", "non-contiguous"],
     ["download.pytorch.org/whl/cu", "x.contiguous()"], ["cudnn-doctor matrix"]),
    ("https://github.com/torch/cunn/issues/242", "nvcc fatal   : Unsupported gpu architecture 'compute_52'",
     ["nvcc is older than CUDA 6.5"], ["install CUDA 6.5 or newer", "`which -a nvcc`", "first on PATH"], []),
]


@pytest.mark.parametrize("url, text, cause, fix, not_in_fix", CASES, ids=[c[0].rsplit("/", 3)[1] for c in CASES])
def test_the_versions_in_the_text_decide_the_answer(url, text, cause, fix, not_in_fix):
    assert_answer(text, cause, fix, not_in_fix)


def test_a_driver_only_text_does_not_blame_pytorch_where_pytorch_is_not_named():
    """ctranslate2-1842 was told what "the 'found version' PyTorch prints" means, with no PyTorch in the text."""
    from cudnn_doctor.explain import explain

    text = "Driver Version: 470.256.02   CUDA Version: 11.4\nCUDA driver version is insufficient for CUDA runtime version"
    assert "PyTorch" not in explain(text, check=False).explanation.answer.cause


def test_pip_s_successfully_installed_line_names_the_releases():
    facts = read_paste("Successfully installed nvidia-cudnn-cu12-9.1.0.70 torch-2.4.0+cu121 typing-extensions-4.12.2")
    assert [(p.name, p.release, p.tag) for p in facts.packages] == [
        ("nvidia-cudnn-cu12", "9.1.0.70", None), ("torch", "2.4.0", "cu121"), ("typing-extensions", "4.12.2", None)]
    torch = facts.program("PyTorch")
    assert torch is not None and (torch.release, torch.tag) == ("2.4.0", "cu121")


def test_aten_s_cudnn_check_names_pytorch():
    """id-pose-5: "RuntimeError: cuDNN error: CUDNN_STATUS_..." is ATen's own check (aten/src/ATen/cudnn/Exceptions.h)."""
    assert read_paste("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED").runs("PyTorch")
    assert not read_paste("cuDNN error: CUDNN_STATUS_NOT_INITIALIZED").runs("PyTorch")


def test_caffe_is_named_by_its_check_macro_and_mxnet_is_not():
    assert read_paste("Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR").runs("Caffe")
    assert not read_paste("Check failed: e == CUDNN_STATUS_SUCCESS (4 vs. 0) cuDNN: CUDNN_STATUS_INTERNAL_ERROR"
                          ).runs("Caffe")
