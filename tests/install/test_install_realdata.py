"""Real cuDNN 9.1.0 (from the nvidia-cudnn-cu12 wheel, repacked as NVIDIA's tarball) installs, loads, rolls back."""
from __future__ import annotations

import json
import os

import pytest

import archive_factory as af
import realdata
from kit import have_gcc

pytestmark = [pytest.mark.realdata,
              pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake toolkit")]


@pytest.fixture(scope="module")
def real_tarball():
    site = realdata.real_wheel(*realdata.CUDNN9)
    if site is None:
        pytest.skip("the nvidia-cudnn-cu12 9.1.0.70 wheel is not available (offline?)")
    # Uncompressed tar: same layout as NVIDIA's .tar.xz, without minutes of xz in the test run.
    return af.repack_wheel_as_tarball(site, realdata.CACHE / "repacked", compression="")


def test_real_tarball_installs_verifies_and_rolls_back(machine, real_tarball):
    home = machine.p(machine.toolkit("12.4.1"))
    before = af.snapshot(home)
    result = af.invoke("install", real_tarball, "--cuda-home", home, "--no-smoke", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    info = doc["plan"]["archive"]
    assert info["cudnn_version"] == "9.1.0" and info["built_for_cuda"] == "12"
    assert info["library_cudart"].startswith("12.")  # cudnnGetCudartVersion of the real library
    assert doc["verify"]["ok"] is True and doc["verify"]["version"] == "9.1.0"
    lib = home / "lib64"
    assert os.readlink(lib / "libcudnn_engines_precompiled.so.9") == "libcudnn_engines_precompiled.so.9.1.0"
    assert os.readlink(lib / "libcudnn.so") == "libcudnn.so.9"
    assert os.stat(lib / "libcudnn_ops.so.9.1.0").st_mode & 0o444 == 0o444
    back = af.invoke("rollback", "--cuda-home", home)
    assert back.exit_code == 0, back.stderr
    assert af.snapshot(home) == before


def test_real_tarball_dry_run_reads_the_real_library(machine, real_tarball, tmp_path):
    home = machine.p(machine.toolkit("12.4.1"))
    before = af.snapshot(tmp_path)
    result = af.invoke("install", real_tarball, "--cuda-home", home, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "its library loads here and reports 9.1.0" in result.stdout
    assert "lib64/libcudnn_adv.so.9.1.0" in result.stdout
    assert af.snapshot(tmp_path) == before
