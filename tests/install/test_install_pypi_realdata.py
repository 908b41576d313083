"""The PyPI route end to end with NVIDIA's real wheel: `install --version 9.28.1 --cuda 13` into a CUDA 13 toolkit
where NVIDIA's download host cannot be reached. PyPI's file list is read live (its real names and sha256), the
wheel PyPI lists for this machine is downloaded once into ~/.cache/cudnn-doctor-tests (realdata's cache and lock)
and served under the URL the page gives; the installer picks it, checks PyPI's sha256 and the RECORD, installs,
loads the installed libcudnn in a child (cudnnGetVersion must say 9.28.1), and `rollback` restores the toolkit byte
for byte. Skipped without the network (or with CUDNN_DOCTOR_NO_DOWNLOAD=1)."""
from __future__ import annotations

import json
import os

import pytest

import archive_factory as af
import realdata
from kit import have_gcc
from test_install_fetch import serve

pytestmark = [pytest.mark.slow, pytest.mark.realdata,
              pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake toolkit")]

PROJECT, RELEASE = "nvidia-cudnn-cu13", "9.28.1"  # the newest cuDNN on PyPI for CUDA 13 when this was written
NOWHERE = "http://127.0.0.1:9/"


def _live_page():
    """PyPI's simple-API page of the project, or None offline."""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    import requests

    try:
        resp = requests.get("https://pypi.org/simple/%s/" % PROJECT, timeout=30,
                            headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    except requests.RequestException:
        return None
    return resp.json() if resp.status_code == 200 else None


def test_real_cudnn_9_28_1_for_cuda13_from_pypi_installs_loads_and_rolls_back(machine, tmp_path, monkeypatch):
    page = _live_page()
    if page is None:
        pytest.skip("PyPI cannot be reached")
    real = [f for f in page["files"] if f["filename"].startswith("nvidia_cudnn_cu13-%s." % RELEASE)
            and f["filename"].endswith("manylinux_2_27_x86_64.whl")]
    assert len(real) == 1, "PyPI's file list changed: %s" % [f["filename"] for f in real]
    name = real[0]["filename"]
    wheel = realdata.download_wheel(PROJECT, name.split("-")[1], name, ("manylinux_2_27_x86_64",),
                                    require_success=True)
    if wheel is None:
        pytest.skip("the %s wheel could not be downloaded" % name)
    assert af.sha256_file(wheel) == real[0]["hashes"]["sha256"]

    home = machine.p(machine.toolkit("13.0.2"))
    before = af.snapshot(home)
    web = tmp_path / "web"
    (web / "simple" / PROJECT).mkdir(parents=True)
    os.symlink(wheel, web / name)
    with serve(web) as base:
        for f in page["files"]:
            f["url"] = base + f["filename"]  # PyPI's list as it is; only the host of the files is this server
        (web / "simple" / PROJECT / "index.html").write_text(json.dumps(page))
        result = af.invoke("install", "--version", RELEASE, "--cuda", "13", "--cuda-home", home, "--no-smoke",
                           "--allow-http", "--sha256", real[0]["hashes"]["sha256"], "--json",
                           env={"CUDNN_DOCTOR_REDIST_URL": NOWHERE, "CUDNN_DOCTOR_PYPI_URL": base + "simple/"})
    assert result.exit_code == 0, result.stderr + result.stdout[-2000:]
    doc = json.loads(result.stdout)
    print("source:", json.dumps(doc["source"]["manifest"]))
    print("verify:", json.dumps(doc["verify"]))
    assert doc["source"]["kind"] == "pypi" and doc["source"]["manifest"]["wheel"] == name
    assert doc["source"]["manifest"]["record_checked"] > 10
    assert doc["plan"]["archive"]["cudnn_version"] == RELEASE and doc["plan"]["archive"]["built_for_cuda"] == "13"
    assert doc["verify"]["ok"] is True and doc["verify"]["version"] == RELEASE  # cudnnGetVersion, in a child
    assert (home / "lib64" / "libcudnn.so.9").exists()
    back = af.invoke("rollback", "--cuda-home", home)
    assert back.exit_code == 0, back.stderr
    assert af.snapshot(home) == before
