"""Issue 44: families a sample of 40 real pastes from threads in no corpus here found explain missing (2026-11-30:
28 right of 40 before, 35 after). Each text is the thread's, trimmed; the thread is named beside it, and the test
asks what its confirmed resolution rests on. Answered with --no-check (the same on any machine)."""
from __future__ import annotations

from cudnn_doctor.explain import explain

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


def _ex(text):
    return explain(text, check=False).explanation


def test_a_gpu_pytorch_dropped_is_said_unsupported_with_no_wheel_to_install():
    ex = _ex(GTX660)
    assert "minimum is compute capability 3.5" in ex.answer.cause and "0.3.1" in ex.answer.cause, ex.answer.cause
    assert "pip install" not in ex.fix.text and "compute capability 3.5 or newer" in ex.fix.text, ex.fix.text


def test_a_k80_gets_the_last_release_with_its_kernels():
    ex = _ex(K80)
    assert "minimum is compute capability 5.0" in ex.answer.cause, ex.answer.cause
    assert "torch==1.13.1" in ex.fix.text and "cu117" in ex.fix.text, ex.fix.text


def test_dockers_older_unknown_runtime_words_are_the_missing_container_toolkit():
    ex = _ex(UNKNOWN_RUNTIME)
    assert ex.answer is not None and "Container Toolkit" in ex.answer.cause, ex.answer
    assert "nvidia-ctk runtime configure" in ex.fix.text, ex.fix.text


def test_an_unsupported_architecture_without_nvccs_prefix():
    ex = _ex(COMPUTE_89)
    assert ex.answer is not None and "CUDA 11.8" in ex.answer.cause and "8.9" in ex.answer.cause, ex.answer


def test_an_extensions_toolkit_of_another_cuda_than_pytorch():
    ex = _ex(EXTENSION)
    assert ex.answer is not None and "11.8" in ex.answer.cause and "12.1" in ex.answer.cause, ex.answer
    assert "whl/cu118" in ex.fix.text and "CUDA_HOME=/usr/local/cuda-12.1" in ex.fix.text, ex.fix.text


def test_a_dataloader_bus_error_is_the_containers_shared_memory_with_checks_own_fix():
    ex = _ex(SHM)
    assert ex.answer is not None and "/dev/shm" in ex.answer.cause, ex.answer
    assert "--shm-size" in ex.fix.text and "--ipc=host" in ex.fix.text, ex.fix.text


def test_a_missing_nvcuda_dll_is_the_windows_driver():
    ex = _ex(NVCUDA)
    assert ex.answer is not None and "nvcuda.dll" in ex.answer.cause and "driver" in ex.answer.cause, ex.answer
    assert "driver" in ex.fix.text.lower(), ex.fix.text


def test_tf_trts_missing_tensorrt_warning_is_harmless():
    ex = _ex(TF_TRT)
    assert ex.answer is not None and "harmless" in ex.answer.cause, ex.answer


def test_a_missing_cudnn_of_an_onnx_runtime_whose_cuda_is_unsaid_names_both_builds_wheels():
    ex = _ex(ORT_NO_CUDA)
    assert "nvidia-cudnn-cu12" in ex.fix.text and "nvidia-cudnn-cu13" in ex.fix.text, ex.fix.text
    assert "the installed build's CUDA decides" in ex.fix.text, ex.fix.text
