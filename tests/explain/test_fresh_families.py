"""Issue 44: families two samples of 40 real pastes from threads in no corpus here found explain missing (2026-11-30:
28 and 25 right of 40 before, 35 and 34 after). Each text is the thread's, trimmed; the thread is named beside it, and the test
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


def test_nccls_own_words_for_a_full_dev_shm():
    ex = _ex(NCCL_SHM)
    assert ex.answer is not None and "/dev/shm" in ex.answer.cause and "--shm-size" in ex.fix.text, ex.answer


def test_deepspeeds_cuda_mismatch_is_the_extension_toolkits():
    ex = _ex(DEEPSPEED)
    assert ex.answer is not None and "12.2" in ex.answer.cause and "11.7" in ex.answer.cause, ex.answer
    assert "CUDA_HOME=/usr/local/cuda-11.7" in ex.fix.text, ex.fix.text


def test_tensorflows_oom_is_gpu_memory():
    ex = _ex(TF_OOM)
    assert ex.answer is not None and "memory" in ex.answer.cause and "batch size" in ex.fix.text, ex.answer


def test_a_spaced_cuda_requirement_of_an_image_names_the_driver_it_needs():
    ex = _ex(CUDA_92)
    assert ex.answer is not None and "9.2" in ex.answer.cause, ex.answer
    assert "396" in ex.fix.text, ex.fix.text


def test_pytorchs_nvrtc_workaround_warning_is_the_unversioned_link():
    ex = _ex(NVRTC_WARNING)
    assert ex.answer is not None and "libnvrtc.so" in ex.answer.cause, ex.answer


def test_a_program_saying_the_driver_is_too_old_outranks_the_dll_it_then_missed():
    ex = _ex(OLLAMA)
    assert ex.answer is not None and "driver" in ex.answer.cause and "cudart64_12.dll is not found" not in \
        ex.answer.cause, ex.answer
    assert "driver" in ex.fix.text.lower() and "pip install" not in ex.fix.text, ex.fix.text


def test_a_cuda_written_as_cuda_ver_decides_the_cudnn_wheels_cuda():
    ex = _ex(CUDA_VER)
    assert "nvidia-cudnn-cu12" in ex.fix.text and "cu13" not in ex.fix.text, ex.fix.text


def test_error_804_with_no_gpu_or_folder_named_is_the_driver_the_images_cuda_needs():
    ex = _ex(ERROR_804)
    assert ex.answer is not None and "CUDA 12.1" in ex.answer.cause and "forward" in ex.answer.cause, ex.answer
    assert "driver" in ex.fix.text and "cuda-compat" in ex.fix.text, ex.fix.text


def test_an_execution_failure_is_answered_with_a_build_for_the_pastes_python():
    ex = _ex(EXEC_PY37)
    assert "Python 3.7" in ex.fix.text and "cu129" not in ex.fix.text, ex.fix.text


def test_an_execution_failure_is_never_answered_with_the_build_that_failed():
    ex = _ex(EXEC_TORCH12)
    assert "Python 3.6" in ex.fix.text and "torch==1.2" not in ex.fix.text, ex.fix.text


def test_an_undefined_cxx_standard_library_symbol_is_an_old_libstdcxx():
    ex = _ex(CXX_SYMBOL)
    assert ex.answer is not None and "libstdc++" in ex.answer.cause and "libstdcxx-ng" in ex.fix.text, ex.answer


def test_tensorrts_unable_to_load_library_is_a_missing_library():
    ex = _ex(TRT_LIBRARY)
    assert ex.answer is not None and "libnvinfer_builder_resource.so.8.4.2" in ex.answer.cause, ex.answer


def test_an_undefined_symbol_no_family_knows_is_still_answered():
    ex = _ex("ImportError: /v/lib/python3.10/site-packages/foo/_C.so: undefined symbol: fooBarBaz")
    assert ex.answer is not None and "fooBarBaz" in ex.answer.cause and "foo" in ex.fix.text, ex.answer
