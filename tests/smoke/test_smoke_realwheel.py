"""The real cuDNN 9.1 wheel on a machine without an NVIDIA driver: what it answers, and what the doctor makes of it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kit import FAKELIBS, build_lib, have_gcc, native_host
from realdata import CUDNN9, real_wheel

from cudnn_doctor.smoke import run_smoke

pytestmark = pytest.mark.realdata
REPO = Path(__file__).resolve().parents[2]


def _driver_loadable() -> bool:
    probe = "import ctypes; ctypes.CDLL('libcuda.so.1')"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def cudnn9() -> str:
    if _driver_loadable():
        pytest.skip("this machine has an NVIDIA driver: tests/gpu covers it")
    site = real_wheel(*CUDNN9)
    if site is None:
        pytest.skip("the %s %s wheel cannot be downloaded here" % CUDNN9)
    return str(site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9")


def test_real_cudnn_answers_not_initialized_and_is_diagnosed_as_no_driver(cudnn9, fix_target):
    result = run_smoke(cudnn9, timeout=60.0, host=native_host())
    assert not result.ok
    assert result.version == "9.1.0" and result.version_code == 90100 and result.cudart_version == "12.4"
    # What the library itself says: its CUDA runtime found no device.
    assert result.cudnn_answer == "CUDNN_STATUS_NOT_INITIALIZED"
    assert "cudaGetDeviceCount" in (result.cudnn_answer_detail or "")
    assert result.status == "SMOKE_NO_DRIVER_LIBRARY" and "libcuda.so.1" in result.error_message
    assert "no usable NVIDIA driver/GPU" in result.summary and "CUDNN_STATUS_NOT_INITIALIZED" in result.summary
    assert "nvidia-smi" in result.fix and result.library_realpath == os.path.realpath(cudnn9)


@pytest.mark.skipif(not have_gcc(), reason="gcc builds the fake libcuda")
def test_real_cudnn_beside_a_driver_that_sees_no_gpu(cudnn9, fix_target):
    cuda = str(build_lib("smoke_cuda", source=FAKELIBS / "fake_cuda_mem.c", INITRC=100))
    result = run_smoke(cudnn9, driver_library=cuda, timeout=60.0, host=native_host())
    assert (result.status, result.failed_call) == ("CUDA_ERROR_NO_DEVICE", "cuInit")
    assert result.cudnn_answer == "CUDNN_STATUS_NOT_INITIALIZED"
    assert "no usable NVIDIA driver/GPU" in result.summary and "CUDA_VISIBLE_DEVICES" in result.fix


def test_cli_on_the_real_library_exits_1_with_one_clear_line(cudnn9, fix_target):
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "smoke", "--library", cudnn9], cwd=str(REPO),
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    first = proc.stdout.splitlines()[0]
    assert first.startswith("[✗] cuDNN 9.1.0") and "no usable NVIDIA driver/GPU" in first
    assert "Traceback" not in proc.stdout + proc.stderr and proc.stderr == ""

    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "smoke", "--library", cudnn9, "--json"],
                          cwd=str(REPO), env=env, capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["exit_code"] == 1
    assert doc["results"][0]["cudnn_answer"] == "CUDNN_STATUS_NOT_INITIALIZED"
