"""`cudnn-doctor smoke`: exit codes, one-line errors, the JSON envelope, and which copies --all tests."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import CliRunner

from kit import FAKELIBS, build_lib, commands_run_native_here, have_gcc

from cudnn_doctor.cli import app
from cudnn_doctor import which_cudnn as libraries_cmd
from cudnn_doctor.model import CudnnCopy, Facts, Resolution

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")
REPO = Path(__file__).resolve().parents[2]


def fake_cuda(**defines) -> str:
    return str(build_lib("smoke_cuda", source=FAKELIBS / "fake_cuda_mem.c", **defines))


def fake_cudnn(**defines) -> str:
    defines.setdefault("CUDNN_V", 90100)
    return str(build_lib("smoke_cudnn", source=FAKELIBS / "fake_cudnn_conv.c", **defines))


def cli(*args: str) -> subprocess.CompletedProcess:
    """The command as a user runs it: a fresh process, so a traceback or stray output would show."""
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", "smoke", *args], cwd=str(REPO), env=env,
                          capture_output=True, text=True, timeout=120)


def test_passing_library_exits_0_with_the_json_envelope():
    proc = cli("--library", fake_cudnn(), "--driver-library", fake_cuda(), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == "smoke" and doc["exit_code"] == 0 and doc["schema_version"]
    [result] = doc["results"]
    assert result["ok"] is True and result["max_rel_error"] < 1e-5 and result["version"] == "9.1.0"
    assert result["algorithm"] == "IMPLICIT_PRECOMP_GEMM" and result["first_result_ms"] > 0
    assert proc.stderr == ""


def test_passing_library_in_human_form():
    proc = cli("--library", fake_cudnn(), "--driver-library", fake_cuda(GPU_NAME='"Fake L4"'))
    assert proc.returncode == 0
    first = proc.stdout.splitlines()[0]
    assert first.startswith("[✓] cuDNN 9.1.0") and "Fake L4" in first and "matches the CPU" in first


def test_no_usable_gpu_exits_1_with_one_clear_line():
    lib = fake_cudnn(FAIL_AT='"create"', FAIL_STATUS=1001)
    proc = cli("--library", lib, "--driver-library", fake_cuda(INITRC=100))
    assert proc.returncode == 1
    first = proc.stdout.splitlines()[0]
    assert first.startswith("[✗]") and "no usable NVIDIA driver/GPU" in first and "CUDA_ERROR_NO_DEVICE" in first
    assert "fix: " in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


def test_wrong_numbers_exit_1_in_json():
    proc = cli("--library", fake_cudnn(GARBAGE=True), "--driver-library", fake_cuda(), "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["exit_code"] == 1 and doc["results"][0]["status"] == "SMOKE_MISMATCH"


def test_a_crashing_library_exits_1_without_a_traceback():
    proc = cli("--library", fake_cudnn(CRASH_AT='"forward"'), "--driver-library", fake_cuda())
    assert proc.returncode == 1 and "SIGSEGV" in proc.stdout.splitlines()[0]
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("make_arg, words", [
    (lambda tmp: str(tmp / "nope.so"), "no such file"),
    (lambda tmp: str(tmp), "is a folder"),
    (lambda tmp: str(REPO / "pyproject.toml"), "not a shared library"),
])
def test_bad_library_is_a_usage_error_in_one_line(tmp_path, make_arg, words):
    proc = cli("--library", make_arg(tmp_path))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and words in proc.stderr and proc.stderr.startswith("cudnn-doctor: error:")


def test_library_and_all_together_is_a_usage_error():
    proc = cli("--library", fake_cudnn(), "--all")
    assert proc.returncode == 2 and "cannot be combined" in proc.stderr


# --- without --library: the copies `check` found -----------------------------------------------


def _facts(cuda: str, loader_choice: str = None, copies=()) -> Facts:
    facts = Facts()
    facts.loader.resolved["libcuda.so.1"] = Resolution(name="libcuda.so.1", path=cuda)
    if loader_choice:
        facts.loader.resolved["libcudnn.so.9"] = Resolution(name="libcudnn.so.9", path=loader_choice)
    facts.cudnn = [CudnnCopy(path=p, directory=os.path.dirname(p)) for p in copies]
    return facts


def _invoke(monkeypatch, facts: Facts, *args: str):
    monkeypatch.setattr(libraries_cmd, "_load_facts", lambda: facts)
    monkeypatch.setattr(libraries_cmd, "_loader_facts", lambda: facts)
    commands_run_native_here(monkeypatch)  # the live machine's Host is refused in this process (conftest.py)
    result = CliRunner().invoke(app, ["smoke", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_default_tests_the_copy_the_loader_picks(monkeypatch):
    good, bad = fake_cudnn(), fake_cudnn(GARBAGE=True)
    result = _invoke(monkeypatch, _facts(fake_cuda(), good, [good, bad]), "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and [r["library"] for r in doc["results"]] == [good]


def test_all_tests_every_copy_and_fails_if_one_fails(monkeypatch):
    good, bad = fake_cudnn(), fake_cudnn(CUDNN_V=8907, NO_WRITE=True)
    result = _invoke(monkeypatch, _facts(fake_cuda(), good, [good, bad]), "--all", "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and [r["ok"] for r in doc["results"]] == [True, False]
    assert doc["results"][1]["status"] == "SMOKE_UNWRITTEN"


def test_the_libcuda_the_loader_resolves_is_used(monkeypatch):
    result = _invoke(monkeypatch, _facts(fake_cuda(GPU_NAME='"Resolved GPU"'), fake_cudnn()), "--json")
    assert json.loads(result.stdout)["results"][0]["gpu_name"] == "Resolved GPU"


def test_copies_found_but_none_on_the_loader_path(monkeypatch):
    result = _invoke(monkeypatch, _facts(fake_cuda(), None, [fake_cudnn()]))
    assert result.exit_code == 1
    assert "no cuDNN is on the loader's search path, but 1 copy was found" in result.stdout and "--all" in result.stdout


def test_no_cudnn_at_all_in_json(monkeypatch):
    result = _invoke(monkeypatch, _facts(fake_cuda()), "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and doc["results"] == [] and "cudnn-doctor install" in doc["problem"]
