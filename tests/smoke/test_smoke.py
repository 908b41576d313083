"""Smoke test against gcc-built fakes: libcuda with malloc'd "device" memory and a cuDNN that really convolves."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from kit import FAKELIBS, build_lib, have_gcc, native_host

from cudnn_doctor.smoke import SmokeResult, run_smoke

# run_smoke builds its fix for the Target the caller names (smoke's command names this machine's).
pytestmark = [pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries"),
              pytest.mark.usefixtures("fix_target")]

V7, V8, V9 = 7605, 8907, 90100
MIB = 1024 * 1024


def fake_cuda(**defines) -> str:
    return str(build_lib("smoke_cuda", source=FAKELIBS / "fake_cuda_mem.c", **defines))


def fake_cudnn(**defines) -> str:
    defines.setdefault("CUDNN_V", V9)
    return str(build_lib("smoke_cudnn", source=FAKELIBS / "fake_cudnn_conv.c", **defines))


def smoke(cudnn: str, cuda: str = None, **kwargs) -> SmokeResult:
    kwargs.setdefault("timeout", 30.0)
    return run_smoke(cudnn, driver_library=cuda or fake_cuda(), host=native_host(), **kwargs)


def assert_clean_failure(result: SmokeResult) -> None:
    assert not result.ok
    assert result.summary and "\n" not in result.summary
    assert result.diagnosis and result.fix
    json.dumps(result.to_dict(), allow_nan=False)


# --- passing runs -------------------------------------------------------------


@pytest.mark.parametrize("version, text", [(V7, "7.6.5"), (V8, "8.9.7"), (V9, "9.1.0")])
def test_passes_on_every_version_flavour(version, text):
    cuda = fake_cuda(GPU_NAME='"Fake H100"', CC_MAJOR=9, CC_MINOR=0)
    result = smoke(fake_cudnn(CUDNN_V=version, CUDART_V=12040), cuda)
    assert result.ok, result.summary
    assert result.status is None and result.fix == ""
    assert result.version == text and result.cudart_version == "12.4"
    assert result.gpu_name == "Fake H100" and result.gpu_cc == "9.0" and result.device_count == 1
    assert result.algorithm == "IMPLICIT_PRECOMP_GEMM" and result.workspace_bytes == 0
    assert result.max_rel_error is not None and result.max_rel_error < 1e-5
    assert result.unwritten == 0 and result.nonfinite == 0
    assert result.driver_library == os.path.realpath(cuda)
    assert result.library_realpath == os.path.realpath(result.library)
    assert 0 < result.first_result_ms <= result.total_ms
    assert "matches the CPU" in result.summary and "Fake H100" in result.summary
    json.dumps(result.to_dict(), allow_nan=False)


def test_each_run_uses_fresh_random_data():
    lib = fake_cudnn()
    assert smoke(lib).seed != smoke(lib).seed


def test_float32_is_not_computed_as_tf32():
    """The fake rounds inputs to TF32 unless the math type is FMA (8+): a passing 8.x/9.x run proves FMA was set."""
    result = smoke(fake_cudnn(CUDNN_V=V8))
    assert result.ok and result.max_rel_error < 1e-5


def test_tensor_op_algorithms_from_the_heuristics_are_skipped():
    result = smoke(fake_cudnn(PERF_TENSOR_OP=True))
    assert result.ok and result.algorithm == "IMPLICIT_PRECOMP_GEMM"


def test_workspace_of_the_chosen_algorithm_is_allocated_and_passed():
    result = smoke(fake_cudnn(WS_BYTES=4096, PREFERRED_ALGO=6))
    assert result.ok and result.algorithm == "WINOGRAD" and result.workspace_bytes == 4096
    assert result.fallback is None


# --- memory is tight: retry with the no-workspace algorithm ----------------------


def test_workspace_allocation_failure_retries_with_implicit_gemm():
    result = smoke(fake_cudnn(WS_BYTES=64 * MIB), fake_cuda(FAIL_ALLOC_OVER=MIB))
    assert result.ok, result.summary
    assert result.algorithm == "IMPLICIT_GEMM" and result.workspace_bytes == 0
    assert "CUDA_ERROR_OUT_OF_MEMORY" in result.fallback and "64.0 MiB" in result.fallback
    assert result.status == "SMOKE_WORKSPACE_FALLBACK" and "NO_WORKSPACE" in result.fix
    assert "memory is tight" in result.summary


@pytest.mark.parametrize("version, status, name", [(V9, 4000, "CUDNN_STATUS_INTERNAL_ERROR"),
                                                   (V9, 4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"),
                                                   (V8, 2, "CUDNN_STATUS_ALLOC_FAILED"),
                                                   (V8, 4, "CUDNN_STATUS_INTERNAL_ERROR")])
def test_memory_status_from_a_workspace_algorithm_retries_without_workspace(version, status, name):
    lib = fake_cudnn(CUDNN_V=version, WS_BYTES=4096, FAIL_AT='"forward_ws"', FAIL_STATUS=status)
    result = smoke(lib)
    assert result.ok and result.algorithm == "IMPLICIT_GEMM"
    assert name in result.fallback


def test_other_failures_of_a_workspace_algorithm_are_not_retried():
    result = smoke(fake_cudnn(CUDNN_V=V8, WS_BYTES=4096, FAIL_AT='"forward_ws"', FAIL_STATUS=8))
    assert_clean_failure(result)
    assert result.status == "CUDNN_STATUS_EXECUTION_FAILED" and result.failed_call == "cudnnConvolutionForward"


# --- cuDNN statuses ------------------------------------------------------------------


@pytest.mark.parametrize("version, stage, code, name, call, words", [
    (V9, "create", 1001, "CUDNN_STATUS_NOT_INITIALIZED", "cudnnCreate", "could not initialise"),
    (V8, "create", 1, "CUDNN_STATUS_NOT_INITIALIZED", "cudnnCreate", "could not initialise"),
    (V7, "create", 1, "CUDNN_STATUS_NOT_INITIALIZED", "cudnnCreate", "could not initialise"),
    (V8, "create", 6, "CUDNN_STATUS_ARCH_MISMATCH", "cudnnCreate", "GPU too old"),
    (V9, "create", 3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "cudnnCreate", "GPU too old"),
    (V8, "create", 2, "CUDNN_STATUS_ALLOC_FAILED", "cudnnCreate", "out of memory"),
    (V9, "create", 4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "cudnnCreate", "out of memory"),
    (V9, "create", 4000, "CUDNN_STATUS_INTERNAL_ERROR", "cudnnCreate", "usually memory"),
    (V7, "create", 4, "CUDNN_STATUS_INTERNAL_ERROR", "cudnnCreate", "usually memory"),
    (V9, "create", 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "cudnnCreate", "mixed cuDNN sub-libraries"),
    (V8, "create", 14, "CUDNN_STATUS_VERSION_MISMATCH", "cudnnCreate", "mixed cuDNN sub-libraries"),
    (V9, "create", 1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "cudnnCreate", "sub-library missing"),
    (V8, "forward", 8, "CUDNN_STATUS_EXECUTION_FAILED", "cudnnConvolutionForward", "failed to run"),
    (V9, "forward", 5000, "CUDNN_STATUS_EXECUTION_FAILED", "cudnnConvolutionForward", "failed to run"),
    (V9, "forward", 5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", "cudnnConvolutionForward", "failed to run"),
    (V7, "tensor", 3, "CUDNN_STATUS_BAD_PARAM", "cudnnSetTensor4dDescriptor", "rejected"),
    (V9, "filter", 2000, "CUDNN_STATUS_BAD_PARAM", "cudnnSetFilter4dDescriptor", "rejected"),
    (V9, "conv", 2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER", "cudnnSetConvolution2dDescriptor", "rejected"),
    (V8, "math", 9, "CUDNN_STATUS_NOT_SUPPORTED", "cudnnSetConvolutionMathType", "cannot run"),
    (V9, "algo", 3000, "CUDNN_STATUS_NOT_SUPPORTED", "cudnnGetConvolutionForwardAlgorithm_v7", "cannot run"),
    (V9, "wsize", 3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING",
     "cudnnGetConvolutionForwardWorkspaceSize", "needs is missing"),
    (V9, "outdim", 4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE", "cudnnGetConvolution2dForwardOutputDim",
     "usually memory"),
])
def test_each_cudnn_status_is_named_and_explained(version, stage, code, name, call, words):
    result = smoke(fake_cudnn(CUDNN_V=version, FAIL_AT='"%s"' % stage, FAIL_STATUS=code))
    assert_clean_failure(result)
    assert (result.status, result.status_code, result.status_api, result.failed_call) == (name, code, "cudnn", call)
    assert name in result.summary and words in result.summary
    if version >= 90000:  # 9.x also says why, through cudnnGetLastErrorString
        assert result.error_message == "fake cudnn: %s" % stage
    else:
        assert result.error_message == "FAKE_CUDNN_STATUS_%d" % code


def test_not_initialized_with_an_old_driver_is_diagnosed_as_insufficient_driver():
    lib = fake_cudnn(CUDART_V=12040, FAIL_AT='"create"', FAIL_STATUS=1001)
    result = smoke(lib, fake_cuda(DRV=11080))
    assert_clean_failure(result)
    assert (result.status, result.status_code, result.status_api) == ("cudaErrorInsufficientDriver", 35, "cuda_runtime")
    assert "driver supports CUDA 11.8" in result.summary and "built for CUDA 12.4" in result.summary
    assert result.catalogue == ["C1"]


def test_minor_version_compatibility_is_not_an_old_driver():
    result = smoke(fake_cudnn(CUDART_V=12080, FAIL_AT='"create"', FAIL_STATUS=1001), fake_cuda(DRV=12020))
    assert result.status == "CUDNN_STATUS_NOT_INITIALIZED"


# --- the driver ----------------------------------------------------------------------


@pytest.mark.parametrize("initrc, name, words", [
    (100, "CUDA_ERROR_NO_DEVICE", "CUDA_VISIBLE_DEVICES"),
    (34, "CUDA_ERROR_STUB_LIBRARY", "stubs"),
    (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "cuda-compat"),
    (999, "CUDA_ERROR_UNKNOWN", "nvidia_uvm"),
    (3, "CUDA_ERROR_NOT_INITIALIZED", "nvidia-smi"),
    (802, "CUDA_ERROR_SYSTEM_NOT_READY", "fabricmanager"),
    (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "Reboot"),
    (304, "CUDA_ERROR_OPERATING_SYSTEM", "/dev/nvidia"),
])
def test_driver_failures_still_ask_cudnn_and_say_no_usable_gpu(initrc, name, words):
    lib = fake_cudnn(FAIL_AT='"create"', FAIL_STATUS=1001)
    result = smoke(lib, fake_cuda(INITRC=initrc))
    assert_clean_failure(result)
    assert (result.status, result.status_code, result.status_api, result.failed_call) == (name, initrc, "cuda", "cuInit")
    assert "no usable NVIDIA driver/GPU" in result.summary and name in result.summary
    assert result.cudnn_answer == "CUDNN_STATUS_NOT_INITIALIZED" and result.cudnn_answer_detail == "fake cudnn: create"
    assert words in result.fix or words in result.diagnosis


def test_missing_libcuda_is_no_usable_driver_and_reports_cudnns_own_answer(tmp_path):
    result = smoke(fake_cudnn(FAIL_AT='"create"', FAIL_STATUS=1001), str(tmp_path / "libcuda.so.1"))
    assert_clean_failure(result)
    assert result.status == "SMOKE_NO_DRIVER_LIBRARY" and "cannot open shared object file" in result.error_message
    assert "no usable NVIDIA driver/GPU" in result.summary and "CUDNN_STATUS_NOT_INITIALIZED" in result.summary
    assert "nvidia-smi" in result.fix and result.version == "9.1.0"


def test_libcuda_without_driver_functions(tmp_path):
    result = smoke(fake_cudnn(), fake_cudnn())  # a library that is not libcuda at all
    assert_clean_failure(result)
    assert result.status == "SMOKE_DRIVER_SYMBOL_MISSING" and "cuInit" in result.summary


def test_device_index_out_of_range():
    result = smoke(fake_cudnn(), fake_cuda(NDEV=2), device=5)
    assert_clean_failure(result)
    assert (result.status, result.failed_call, result.device_index) == ("CUDA_ERROR_INVALID_DEVICE", "cuDeviceGet", 5)
    assert "no such GPU" in result.summary and result.device_count == 2


def test_second_device_is_used_when_asked():
    result = smoke(fake_cudnn(), fake_cuda(NDEV=2), device=1)
    assert result.ok and result.device_index == 1


def test_asynchronous_kernel_fault_surfaces_at_synchronize():
    result = smoke(fake_cudnn(), fake_cuda(SYNC_RC=700))
    assert_clean_failure(result)
    assert (result.status, result.failed_call) == ("CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize")


# --- wrong or missing numbers --------------------------------------------------------


def test_garbage_output_fails_the_comparison():
    result = smoke(fake_cudnn(GARBAGE=True))
    assert_clean_failure(result)
    assert result.status == "SMOKE_MISMATCH" and 1e-5 < result.max_rel_error < 1e-2
    assert "max relative error" in result.summary


def test_unwritten_output_is_caught_by_the_poison():
    result = smoke(fake_cudnn(NO_WRITE=True))
    assert_clean_failure(result)
    assert result.status == "SMOKE_UNWRITTEN" and result.unwritten == 2 * 4 * 16 * 16
    assert "never written" in result.summary


def test_one_unwritten_value_is_enough_to_fail():
    result = smoke(fake_cudnn(PARTIAL_WRITE=True))
    assert result.status == "SMOKE_UNWRITTEN" and result.unwritten == 1


# --- hostile libraries -----------------------------------------------------------------


def test_crash_during_the_convolution_is_reported_with_its_stage():
    result = smoke(fake_cudnn(CRASH_AT='"forward"'))
    assert_clean_failure(result)
    assert result.status == "SMOKE_CRASHED" and result.failed_call == "cudnnConvolutionForward"
    assert "SIGSEGV" in result.summary and "cudnnConvolutionForward" in result.summary


def test_crash_in_cudnn_create():
    result = smoke(fake_cudnn(CRASH_AT='"create"'))
    assert result.status == "SMOKE_CRASHED" and result.failed_call == "cudnnCreate"


def test_hang_is_cut_off_by_the_timeout():
    result = smoke(fake_cudnn(HANG_AT='"forward"'), timeout=3.0)
    assert_clean_failure(result)
    assert result.status == "SMOKE_TIMEOUT" and result.failed_call == "cudnnConvolutionForward"
    assert "3.0s" in result.summary


def test_not_a_cudnn_library(tmp_path):
    result = smoke(fake_cuda())
    assert_clean_failure(result)
    assert result.status == "SMOKE_MISSING_SYMBOL" and "cudnnGetVersion" in result.summary


def test_truncated_library_is_a_load_failure(tmp_path):
    broken = tmp_path / "libcudnn.so.9"
    broken.write_bytes(open(fake_cudnn(), "rb").read()[:100])
    result = smoke(str(broken))
    assert_clean_failure(result)
    assert result.status == "SMOKE_LOAD_FAILED" and "libcudnn.so.9" in result.error_message


def test_cudnn_older_than_7_is_not_smoke_tested():
    result = smoke(fake_cudnn(CUDNN_V=6021))
    assert_clean_failure(result)
    assert result.status == "SMOKE_UNSUPPORTED_VERSION" and result.version == "6.0.21"


# --- cuDNN 9's shim loads its sub-libraries by bare name from its own folder ---------------


def test_sub_libraries_are_found_next_to_the_main_library(tmp_path):
    main = tmp_path / "lib" / "libcudnn.so.9"
    main.parent.mkdir()
    shutil.copy(fake_cudnn(SUBLIB='"libcudnn_fake_smoke_sub.so.9"'), main)
    shutil.copy(fake_cuda(), main.parent / "libcudnn_fake_smoke_sub.so.9")
    link = tmp_path / "elsewhere" / "libcudnn.so.9"
    link.parent.mkdir()
    link.symlink_to(main)  # the folder put on the path is the real file's, not the link's
    assert smoke(str(link)).ok


def test_missing_sub_library_is_sublibrary_loading_failed(tmp_path):
    main = tmp_path / "libcudnn.so.9"
    shutil.copy(fake_cudnn(SUBLIB='"libcudnn_fake_smoke_sub.so.9"'), main)
    result = smoke(str(main))
    assert result.status == "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"
    assert "libcudnn_fake_smoke_sub.so.9" in result.error_message


def test_a_crash_after_the_driver_failed_keeps_the_driver_diagnosis():
    result = smoke(fake_cudnn(CRASH_AT='"create"'), fake_cuda(INITRC=100))
    assert result.status == "CUDA_ERROR_NO_DEVICE" and "no usable NVIDIA driver/GPU" in result.summary
    assert "then cuDNN crashed (SIGSEGV) during cudnnCreate" in result.summary


def test_what_was_learnt_before_a_crash_is_kept():
    result = smoke(fake_cudnn(CRASH_AT='"forward"'), fake_cuda(GPU_NAME='"Crashy GPU"'))
    assert result.status == "SMOKE_CRASHED"
    assert result.version == "9.1.0" and result.gpu_name == "Crashy GPU" and result.cudart_version == "12.4"


def test_libcuda_is_loaded_by_name_when_no_path_is_given(tmp_path):
    """By default the child asks the loader for libcuda.so.1; the cuDNN folder is on its path, so a copy there wins."""
    shutil.copy(fake_cudnn(), tmp_path / "libcudnn.so.9")
    shutil.copy(build_lib("smoke_cuda", soname="libcuda.so.1", source=FAKELIBS / "fake_cuda_mem.c",
                          GPU_NAME='"By Name"'), tmp_path / "libcuda.so.1")
    result = run_smoke(str(tmp_path / "libcudnn.so.9"), timeout=30.0, host=native_host())
    assert result.ok and result.gpu_name == "By Name"
    assert result.driver_library == str((tmp_path / "libcuda.so.1").resolve())
