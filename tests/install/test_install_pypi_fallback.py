"""`install --version X --cuda N` where NVIDIA's download host cannot be reached: the release's nvidia-cudnn-cuNN
wheel from PyPI (the same libraries), chosen from the file list PyPI's simple API gives (its real names, recorded by
scripts/record_pypi_files.py into tests/data/pypi_cudnn_files.json), its sha256 from that list and every file
checked against the wheel's RECORD; a wheel whose file disagrees with its RECORD is refused before anything changes.
The wheel served is a small fake built under the real file name NVIDIA gives the release (manylinux_2_27)."""
from __future__ import annotations

import json
import zipfile

import pytest

import archive_factory as af
import realdata
from kit import have_gcc
from pypi_files import NEWEST_CU12, served_page
from test_install_fetch import LOOPBACK, serve

from cudnn_doctor.install.errors import Refusal
from cudnn_doctor.install.pypi import check_record

pytestmark = [pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries"), LOOPBACK]
NOWHERE = "http://127.0.0.1:9/"  # the discard port: nothing listens, the connection is refused at once
VERSION, WHEEL_NAME = NEWEST_CU12  # the newest cuDNN 9 PyPI lists for CUDA 12, and its real x86_64 file name
SHORT = ".".join(VERSION.split(".")[:3])


@pytest.fixture
def world(machine, tmp_path, monkeypatch):
    base = af.toolkit_with_cudnn9(machine, tmp_path, monkeypatch)
    web = tmp_path / "web"
    tag = WHEEL_NAME[:-len(".whl")].split("-", 4)[-1]
    wheel = af.write_wheel(web / "files", version=VERSION, cuda_major=12, platform_tag=tag)
    assert wheel.name == WHEEL_NAME
    return dict(base, web=web, wheel=wheel)


def _pypi(world, base, wheel=None):
    """PyPI's real nvidia-cudnn-cu12 file list, served as the simple API serves it; the release's real file name
    points at the small wheel `wheel` (its sha256 and size)."""
    served_page(world["web"] / "simple", "nvidia-cudnn-cu12", {WHEEL_NAME: wheel or world["wheel"]},
                base + "files/")


def _install(world, base, *extra):
    return af.invoke("install", "--version", SHORT, "--cuda", "12", "--cuda-home", world["home"], "--no-smoke",
                     "--allow-http", "--sha256", af.sha256_file(world["wheel"]), *extra,
                     env={"CUDNN_DOCTOR_REDIST_URL": NOWHERE, "CUDNN_DOCTOR_PYPI_URL": base + "simple/"})


def test_unreachable_nvidia_host_falls_back_to_the_wheel_on_pypi(world):
    with serve(world["web"]) as base:
        _pypi(world, base)
        text = _install(world, base)
        assert text.exit_code == 0, text.stderr
        assert "came from PyPI" in text.stdout and "could not fetch the cuDNN manifest" in text.stdout
        doc = json.loads(_install(world, base, "--json").stdout)
    assert doc["source"]["kind"] == "pypi" and doc["source"]["manifest"]["version"] == VERSION
    assert doc["source"]["manifest"]["wheel"] == WHEEL_NAME
    assert doc["source"]["manifest"]["planned_by"] in ("the wheel index", "PyPI's file list")
    assert doc["source"]["manifest"]["record_checked"] > 10
    assert (world["home"] / "lib64" / "libcudnn.so.9").exists()
    assert doc["plan"]["archive"]["cudnn_version"] == SHORT


def test_a_wheel_that_disagrees_with_its_record_is_refused(world):
    bad = world["web"] / "bad" / world["wheel"].name
    bad.parent.mkdir()
    with zipfile.ZipFile(world["wheel"]) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, data + b"!" if info.filename.endswith("cudnn_version.h") else data)
    before = af.snapshot(world["home"])
    with serve(world["web"]) as base:
        served_page(world["web"] / "simple", "nvidia-cudnn-cu12", {WHEEL_NAME: bad}, base + "bad/")
        result = af.invoke("install", "--version", SHORT, "--cuda", "12", "--cuda-home", world["home"],
                           "--no-smoke", "--allow-http", "--sha256", af.sha256_file(bad),
                           env={"CUDNN_DOCTOR_REDIST_URL": NOWHERE, "CUDNN_DOCTOR_PYPI_URL": base + "simple/"})
    assert result.exit_code == 1 and "does not match its RECORD" in result.stderr
    assert af.snapshot(world["home"]) == before


def test_nothing_reachable_is_one_line(world):
    result = af.invoke("install", "--version", "9.1.0", "--cuda", "12", "--cuda-home", world["home"], "--no-smoke",
                       "--allow-http", "--sha256", "0" * 64,
                       env={"CUDNN_DOCTOR_REDIST_URL": NOWHERE, "CUDNN_DOCTOR_PYPI_URL": NOWHERE})
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "neither NVIDIA's download host nor PyPI" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.realdata
def test_the_real_wheels_record_checks_out():
    """NVIDIA's real nvidia-cudnn-cu12 wheel from PyPI: every file matches its RECORD."""
    wheel = realdata.wheel_file(*realdata.CUDNN9)
    if wheel is None:
        pytest.skip("the nvidia-cudnn-cu12 9.1.0.70 wheel is not available (offline?)")
    assert check_record(str(wheel)) > 20


def test_a_wheel_without_checksums_is_refused(tmp_path):
    wheel = af.make("wheel", tmp_path)
    bare = tmp_path / "bare.whl"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(bare, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, b"" if info.filename.endswith("/RECORD") else src.read(info))
    assert check_record(str(wheel)) > 10
    with pytest.raises(Refusal, match="lists no checksum"):
        check_record(str(bare))
