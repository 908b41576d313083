"""`check --smoke`: the smoke test's verdict is a finding (CD510) and a section of the report."""
from __future__ import annotations

import pytest

from clirunner import CliRunner
from cudnn_doctor.cli import app
from kit import FAKELIBS, build_lib

MA = "/usr/lib/x86_64-linux-gnu"


def _machine_with_conv_fakes(m, **cuda_defines):
    """A driver and a cuDNN whose fakes really compute the convolution on the CPU."""
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.driver("580.95.05", cuda=13000, libcuda=False)
    cuda = build_lib("smoke_cuda", source=FAKELIBS / "fake_cuda_mem.c", GPU_NAME='"Fake H100"', CC_MAJOR=9,
                     CC_MINOR=0, **cuda_defines)
    m.file(MA + "/libcuda.so.580.95.05", cuda.read_bytes(), mode=0o755)
    m.link(MA + "/libcuda.so.1", "libcuda.so.580.95.05")
    conv = build_lib("smoke_cudnn", source=FAKELIBS / "fake_cudnn_conv.c", CUDNN_V=91400, CUDART_V=13000)
    m.file(MA + "/libcudnn.so.9.14.0", conv.read_bytes(), mode=0o755)
    m.link(MA + "/libcudnn.so.9", "libcudnn.so.9.14.0")


def test_passing_smoke_is_reported_as_info_and_in_its_own_section(machine, check_json):
    _machine_with_conv_fakes(machine)
    code, doc = check_json(machine, "--smoke")
    [f] = [f for f in doc["findings"] if f["id"] == "CD510"]
    assert f["severity"] == "info" and "Smoke test passed" in f["title"]
    assert doc["smoke"]["ok"] is True and doc["smoke"]["max_rel_error"] < 1e-5
    assert str(machine.root) not in repr(doc["smoke"])  # paths as seen inside --root
    human = CliRunner().invoke(app, ["check", "--smoke", "--root", str(machine.root), "--no-color"])
    assert "[✓] cuDNN smoke test" in human.stdout


def test_failing_smoke_is_an_error_with_its_fix_and_exit_1(machine, check_json):
    _machine_with_conv_fakes(machine, INITRC=100)  # cuInit: no CUDA-capable device
    code, doc = check_json(machine, "--smoke")
    [f] = [f for f in doc["findings"] if f["id"] == "CD510"]
    assert f["severity"] == "error" and f["fix"] and code == 1
    human = CliRunner().invoke(app, ["check", "--smoke", "--root", str(machine.root), "--no-color"])
    assert "[✗] cuDNN smoke test" in human.stdout and human.exit_code == 1


def test_smoke_without_a_loadable_cudnn_fails_and_says_to_install_one(machine, check_json):
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.driver("580.95.05", cuda=13000)
    code, doc = check_json(machine, "--smoke")
    [f] = [f for f in doc["findings"] if f["id"] == "CD510"]
    assert f["severity"] == "error" and code == 1
    # The install command for this machine (driver for CUDA 13.0, no toolkit), the one other install fixes give,
    # not a line with placeholders to fill in.
    assert f["remedy"]["commands"] and "ARCHIVE" not in f["fix"] and "cuXX" not in f["fix"]
    # The fake machine is a --root tree: its own apt runs inside it (issue 29's Target), `sudo chroot ROOT apt ...`.
    assert f["remedy"]["commands"][0].startswith("sudo chroot %s apt install" % machine.root)
    assert "13" in f["remedy"]["commands"][0]
    assert doc["smoke"] == {"ok": False, "summary": "no cuDNN library that a plain process would load was found",
                            "fix": f["fix"]}
