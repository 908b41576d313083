"""Issue 44: explain (with check) inside a container started without GPU access agrees with check - the same
finding and the same fix (start the container with the GPUs), not "install the driver and reboot"."""
from __future__ import annotations

import json

import pytest
from clirunner import CliRunner

from kit import FakeMachine

from cudnn_doctor.explain import explain

TEXTS = ["Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
         "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
         "RuntimeError: CUDA error: no CUDA-capable device is detected",
         # the CUDA runtime's word for no libcuda at all, too (nvidia-docker#400: fixed by `--gpus all`)
         "Check failed: cudaSuccess == cudaStat (0 vs. 35) Cuda Error: CUDA driver version is insufficient for CUDA "
         "runtime version"]


def _container(tmp_path) -> FakeMachine:
    m = FakeMachine(tmp_path / "container")
    m.mkdir("/usr/lib")
    m.file("/.dockerenv")
    return m


def _check_fix(m: FakeMachine) -> str:
    from cudnn_doctor.cli import app

    result = CliRunner().invoke(app, ["check", "--json", "--root", str(m.root)], env={"container": ""})
    doc = json.loads(result.stdout)
    return next(f["fix"] for f in doc["findings"] if f["id"] == "CD801")


@pytest.mark.parametrize("text", TEXTS, ids=["internal", "not-initialized", "no-device", "insufficient-driver"])
def test_explain_in_a_container_without_gpus_agrees_with_check(tmp_path, text, monkeypatch):
    monkeypatch.setenv("container", "")
    m = _container(tmp_path)
    wanted = _check_fix(m)
    assert "docker run --gpus all" in wanted
    ex = explain(text, root=str(m.root), env={"container": ""}).explanation
    assert ex.checked and ex.fix.text == wanted, (ex.fix.text, wanted)
    assert "reboot" not in ex.fix.text and "ubuntu-drivers" not in ex.fix.text
