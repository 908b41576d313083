"""Issue 44, items 2-3: the facts a paste carries decide its answer - the fix fits the paste's program, Python, CUDA,
driver and GPU; loader errors by kind; CUDNN_STATUS_* by the release known for it; driver and container states.
Each family is a real-looking text from the issue, answered with --no-check (the same on any machine)."""
from __future__ import annotations

import pytest

from cudnn_doctor.explain import explain

ORT = ("[E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/"
       "session/provider_bridge_ort.cc:1539 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() "
       "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
       "libcudnn.so.9: cannot open shared object file: No such file or directory\n"
       "[W:onnxruntime:Default, onnxruntime_pybind_state.cc:993 CreateExecutionProviderInstance] Failed to create "
       "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.\n"
       "$ pip list | grep nvidia\nnvidia-cudnn-cu12         9.1.0.70\nnvidia-cublas-cu12        12.4.5.8\n")
CU130 = ("torch                    2.9.0+cu130\nLD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64\n"
         "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory")
LUA = ("/home/u/torch/install/bin/luajit: /home/u/torch/install/share/lua/5.1/cutorch/init.lua:2\n"
       "THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-1234/cutorch/lib/THC/generic/THCTensorMath.cu line=15 "
       "error=48 : no kernel image is available for execution on the device\n"
       "GPU: NVIDIA GeForce RTX 3090 with CUDA capability sm_86")
PY36 = ('  File "/home/u/.local/lib/python3.6/site-packages/torch/cuda/__init__.py", line 190, in _lazy_init\n'
        "torch 1.6.0+cu101\n"
        "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75.")
DRIVER_460 = ("torch 1.12.1+cu113\n"
              "| NVIDIA-SMI 460.80       Driver Version: 460.80       CUDA Version: 11.2     |\n"
              "RuntimeError: The NVIDIA driver on your system is too old (found version 11020). Please update your GPU "
              "driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx")
FOUND_11040 = ("UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). "
               "Please update your GPU driver by downloading and installing a new version from the URL: "
               "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a "
               "PyTorch version that has been compiled with your version of the CUDA driver.")
NVRTC = ("LD_LIBRARY_PATH=/usr/local/cuda-8.0/lib64:/usr/local/cuda-11.8/lib64\n"
         "ImportError: /venv/lib/python3.8/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: nvrtcGetCUBIN")
NCCL = ("ImportError: /venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
        "ncclCommRegister\n$ pip list | grep nccl\nnvidia-nccl-cu11          2.14.3\nnvidia-nccl-cu12          2.20.5\n")
CUDNN_SYMBOL = ("ImportError: /venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                "cudnnGetLibConfig, version libcudnn.so.8")
MOK = "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service"
FILE_EXISTS = ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create "
               "failed: unable to start container process: error during container init: error running hook #0: error "
               "running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: "
               "mount error: file creation failed: /var/lib/docker/overlay2/abc/merged/usr/lib/x86_64-linux-gnu/"
               "libnvidia-ml.so.1: file exists: unknown.")
STAT_FAILED = ("nvidia-container-cli: mount error: stat failed: /usr/lib/wsl/drivers/nv_dispi.inf_amd64_1234/"
               "libcuda.so.1.1: no such file or directory: unknown.")
ERROR_804 = ("GPU 0: NVIDIA GeForce RTX 3080\nLD_LIBRARY_PATH=/usr/local/cuda-12.2/compat:/usr/local/cuda/lib64\n"
             "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW")
TORCH_180 = ("torch 1.8.0+cu102\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
KEPLER = ("torch 2.0.1+cu117\nGPU 0: Tesla K80\nRuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may "
          "appear if you passed in a non-contiguous input.")
PLAN = ("torch 2.3.0\nUserWarning: Plan failed with a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: "
        "cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at "
        "../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)\n  return F.conv2d(input, weight, bias, self.stride,")
TRT = "[W] [TRT] TensorRT was linked against cuDNN 8.9.0 but loaded cuDNN 8.8.0"


def _ex(text):
    return explain(text, check=False).explanation


def test_onnxruntime_cuda12_with_the_cu12_wheel_installed():
    ex = _ex(ORT)
    assert "cu13" not in ex.fix.text and "nvidia-cudnn-cu12" in ex.fix.text, ex.fix.text
    assert "LD_LIBRARY_PATH" in ex.fix.text and "nvidia.cudnn" in ex.fix.text, ex.fix.text


def test_a_cu130_torch_gets_its_own_cuda_13_cudnn():
    ex = _ex(CU130)
    assert "nvidia-cudnn-cu13" in ex.fix.text and "cu12" not in ex.fix.text, ex.fix.text


def test_lua_torch7_gets_no_pytorch_pip_line():
    ex = _ex(LUA)
    assert "pip install" not in ex.fix.text and "download.pytorch.org" not in ex.fix.text, ex.fix.text
    assert "Torch7" in ex.answer.cause and "cutorch" in ex.fix.text, (ex.answer.cause, ex.fix.text)


def test_python_36_gets_no_new_torch_wheel():
    ex = _ex(PY36)
    assert "Python 3.6" in ex.answer.cause, ex.answer.cause
    assert "cu129" not in ex.fix.text and "Python" in ex.fix.text, ex.fix.text


def test_driver_460_with_cuda_113_names_the_floor():
    ex = _ex(DRIVER_460)
    assert "CUDA 11.3 needs driver 465.19.01 or newer" in ex.answer.cause, ex.answer.cause
    assert "465.19.01" in ex.fix.text, ex.fix.text


def test_found_version_11040_is_the_drivers_cuda():
    ex = _ex(FOUND_11040)
    assert "driver runs CUDA 11.4" in ex.answer.cause, ex.answer.cause
    assert "470.42.01" not in ex.fix.text, ex.fix.text  # the driver that runs 11.4 is the one it has


def test_an_old_libnvrtc_shadowing_names_its_folder():
    ex = _ex(NVRTC)
    assert "/usr/local/cuda-8.0/lib64" in ex.answer.cause, ex.answer.cause
    assert "/usr/local/cuda-8.0/lib64" in ex.fix.text and "LD_LIBRARY_PATH" in ex.fix.text, ex.fix.text
    assert "install the CUDA 8.0 toolkit" not in ex.fix.text


def test_two_nccl_wheels():
    ex = _ex(NCCL)
    assert ex.answer is not None and "nvidia-nccl-cu11" in ex.answer.cause, ex.answer
    assert "pip uninstall" in ex.fix.text and "nvidia-nccl-cu11" in ex.fix.text, ex.fix.text


@pytest.mark.parametrize("text", [CUDNN_SYMBOL, CUDNN_SYMBOL.split(", version")[0]], ids=["with-node", "no-node"])
def test_an_undefined_cudnn_symbol_is_an_old_libcudnn(text):
    ex = _ex(text)
    assert ex.answer is not None and "older" in ex.answer.cause and "libcudnn" in ex.answer.cause, ex.answer


def test_secure_boot_rejects_the_module():
    ex = _ex(MOK)
    assert ex.answer is not None and "Secure Boot" in ex.answer.cause, ex.answer
    assert "mokutil --import" in ex.fix.text and ex.fix.commands, ex.fix


def test_container_cli_file_exists():
    ex = _ex(FILE_EXISTS)
    assert ex.answer is not None and "image" in ex.answer.cause and "libnvidia-ml.so.1" in ex.answer.cause, ex.answer


def test_container_cli_stat_failed():
    ex = _ex(STAT_FAILED)
    assert ex.answer is not None and "libcuda.so.1.1" in ex.answer.cause, ex.answer
    assert "nvidia-container-toolkit" in ex.fix.text, ex.fix.text


def test_error_804_on_a_geforce_with_the_compat_library():
    ex = _ex(ERROR_804)
    assert "GeForce" in ex.answer.cause, ex.answer.cause
    assert "/usr/local/cuda-12.2/compat" in ex.fix.text and "LD_LIBRARY_PATH" in ex.fix.text, ex.fix.text


def test_torch_180_not_initialized_is_fixed_in_181():
    ex = _ex(TORCH_180)
    assert "1.8.1" in ex.answer.cause and "1.8.1" in ex.fix.text, (ex.answer.cause, ex.fix.text)


def test_kepler_dropped_by_torch_2():
    ex = _ex(KEPLER)
    assert "Kepler" in ex.answer.cause and "3.7" in ex.answer.cause, ex.answer.cause
    assert "1.13" in ex.fix.text, ex.fix.text


def test_torch_230_plan_failed_is_a_harmless_warning():
    ex = _ex(PLAN)
    assert ex.answer is not None and not ex.answer.problem and "harmless" in ex.answer.cause, ex.answer
    assert "2.3.1" in ex.answer.cause and "2.3.1" in ex.fix.text, ex.answer.cause


def test_tensorrt_cudnn_minor_warning_is_a_warning():
    ex = _ex(TRT)
    assert ex.answer is not None and not ex.answer.problem and "warning" in ex.answer.cause, ex.answer


@pytest.mark.parametrize("built, loaded, torch", [("7.6.3", "7.4.1", "1.3"), ("8.9.0", "8.8.0", "2.1")])
def test_an_older_cudnn_under_tensorrt_names_the_pytorch_that_brings_one_new_enough(built, loaded, torch):
    # corpus torch2trt-154: torch 1.1's own cuDNN 7.5 was loaded first; PyTorch 1.3 (built with 7.6.3, compat's build
    # rows) ended the warning
    ex = _ex("WARNING: TensorRT was linked against cuDNN %s but loaded cuDNN %s" % (built, loaded))
    assert "PyTorch %s and newer" % torch in ex.answer.cause and "PyTorch %s or newer" % torch in ex.fix.text, ex.answer


@pytest.mark.parametrize("text", [ORT, CU130, PY36, DRIVER_460, FOUND_11040, NVRTC, TORCH_180])
def test_the_paste_facts_are_on_the_evidence(text):
    assert _ex(text).evidence.facts.programs


@pytest.mark.parametrize("text", [FOUND_11040, DRIVER_460], ids=["found-11040", "driver-460"])
def test_a_paste_from_a_machine_with_a_driver_is_not_told_to_install_one_here(machine, text):
    """Checked on a machine without a driver: the paste says its machine has one, so 'no driver here' contradicts it
    and does not come first; the paste's own answer stands."""
    ex = explain(text, root=str(machine.root)).explanation
    assert ex.checked and ex.fix.text == _ex(text).fix.text, ex.fix.text


def test_paddles_own_words_for_an_old_library_name_its_build_and_the_build_for_the_cuda_installed():
    # corpus Paddle-50588: paddlepaddle-gpu 2.4.0 for CUDA 10.2 asked for cudnn64_7.dll on a CUDA 11.6 machine; the
    # matching Paddle build fixed it
    ex = _ex("RuntimeError: (PreconditionNotMet) The third-party dynamic library (cudnn64_7.dll) that Paddle depends "
             "on is not configured correctly. (error code is 126)")
    assert "paddlepaddle-gpu is a build for cuDNN 7" in ex.answer.cause, ex.answer.cause
    assert "cuDNN 7.6.5" in ex.fix.text and "paddlepaddle-gpu build for that CUDA" in ex.fix.text, ex.fix.text
