"""`cudnn-doctor fix` on real wheels from PyPI (the real-world pool's cache): onnxruntime-gpu 1.19.0 (built for
cuDNN 9, CUDA 12) beside NVIDIA's cuDNN 8.9.2.26 wheel and none of its CUDA libraries (CD704, CD706). fix --yes
installs the set in one pip command and the library folders in bin/activate; the judge is the real loader in a new
shell of the venv (ldd of ONNX Runtime's CUDA provider, and cudnnGetVersion() of the libcudnn.so.9 it gets); --undo
puts every RECORD and bin/activate back, and check finds the failure again."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fix_factory import make_venv, offline_pip_env, open_to_others, pip, state_hashes

pytestmark = pytest.mark.realdata

WHEELS = [("onnxruntime-gpu", "1.19.0"), ("nvidia-cudnn-cu12", "8.9.2.26"), ("nvidia-cudnn-cu12", "9.10.2.21"),
          ("nvidia-cublas-cu12", "12.3.4.1"), ("nvidia-cuda-runtime-cu12", "12.4.127"),
          ("nvidia-cufft-cu12", "11.0.12.1"), ("nvidia-curand-cu12", "10.3.4.107"),
          ("nvidia-nvjitlink-cu12", "12.3.101")]
IDS = ("CD704", "CD706")


def _links(tmp_path: Path) -> Path:
    """A folder of these wheels alone, the big ones as the harness stores them (uncompressed: pip installs the same
    files, tests/probes/test_realworld_wheels.py)."""
    import realworld_wheels as wheels

    links = tmp_path / "links"
    links.mkdir()
    found = [wheels.wheel_file(name, version) for name, version in WHEELS]
    if None in found:
        pytest.skip("%s %s could not be fetched from PyPI" % WHEELS[found.index(None)])
    stored = wheels.for_pip("%s==%s" % wheel for wheel in WHEELS)
    for wheel in found:
        (links / wheel.name).symlink_to(stored / wheel.name)
    return links


def _doctor(venv: Path, links: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **offline_pip_env(links)}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", *args, "--env", "VIRTUAL_ENV=%s" % venv,
                           "--env", "PATH=%s/bin:/usr/bin:/bin" % venv], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900)


JUDGE = r'''
set -e
. "$1/bin/activate"
ldd "$(echo "$1"/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime_providers_cuda.so)"
python -c 'import ctypes; l = ctypes.CDLL("libcudnn.so.9"); l.cudnnGetVersion.restype = ctypes.c_size_t
print("cudnnGetVersion", l.cudnnGetVersion())'
'''


def test_fix_heals_real_onnxruntime_by_the_real_loader_and_undo_restores_it(tmp_path):
    links = _links(tmp_path)
    open_to_others(tmp_path)
    venv = make_venv(tmp_path / "venv")
    pip(venv, "install", "--no-deps", "onnxruntime-gpu==1.19.0", "nvidia-cudnn-cu12==8.9.2.26", links=links)
    before = state_hashes(venv)
    done = _doctor(venv, links, "fix", *IDS, "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "nvidia-cudnn-cu12 8.9.2.26 -> 9.10.2.21" in done.stdout  # one pip command for both findings
    clean = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    judged = subprocess.run(["bash", "-c", JUDGE, "judge", str(venv)], capture_output=True, text=True, env=clean)
    assert judged.returncode == 0, judged.stdout + judged.stderr
    site = next(venv.glob("lib/python*/site-packages"))
    for soname, folder in (("libcudnn.so.9", "cudnn"), ("libcublas.so.12", "cublas"),
                           ("libcudart.so.12", "cuda_runtime"), ("libcufft.so.11", "cufft"),
                           ("libcurand.so.10", "curand")):
        assert "%s => %s/nvidia/%s/lib/%s" % (soname, site, folder, soname) in judged.stdout, judged.stdout
    assert "cudnnGetVersion 91002" in judged.stdout
    undone = _doctor(venv, links, "fix", "--undo", "--yes")
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert state_hashes(venv) == before
    again = _doctor(venv, links, "check")
    assert "CD704" in again.stdout and "CD706" in again.stdout
