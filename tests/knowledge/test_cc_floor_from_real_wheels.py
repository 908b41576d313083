"""The oracle for cuDNN's lowest compute capability: the device code in NVIDIA's real wheels. cuDNN 9.10.2's
libcudnn_cnn carries SASS from sm_50, 9.11.0's only from sm_75 (and PTX only for compute_120, which no older GPU can
JIT), so the knowledge's floor for 9.11 is Turing, as conda-forge found (admin-requests#1742)."""
from __future__ import annotations

import zipfile

import pytest

import realdata
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.readers.fatbin import gpu_code

pytestmark = pytest.mark.realdata


def _cnn_code(version: str, tmp_path):
    pattern = "nvidia_cudnn_cu12-%s-*manylinux*x86_64.whl" % version
    wheel = realdata.download_wheel("nvidia-cudnn-cu12", version, pattern, ("manylinux_2_27_x86_64",))
    if wheel is None:
        pytest.skip("the nvidia-cudnn-cu12 %s wheel is not available (offline?)" % version)
    out = tmp_path / ("libcudnn_cnn-%s.so.9" % version)
    with zipfile.ZipFile(wheel) as zf, zf.open("nvidia/cudnn/lib/libcudnn_cnn.so.9") as src, open(out, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 22), b""):
            dst.write(chunk)
    return gpu_code(out.read_bytes())


@pytest.mark.parametrize("version", ["9.10.2.21", "9.11.0.98"])
def test_the_floor_is_the_lowest_sass_the_convolution_library_ships(version, tmp_path):
    code = _cnn_code(version, tmp_path)
    assert code is not None and code.sass and not code.error
    lowest = code.sass[0][3:].rstrip("a")
    floor = load_compat().cudnn_min_cc(version)
    assert floor.known and floor.low.replace(".", "") == lowest, (version, code.sass, code.ptx, floor)
    # No PTX old enough for a GPU below the floor to JIT-compile: the floor is hard.
    assert all(int(p.split("_")[1].rstrip("a")) >= int(lowest) for p in code.ptx), code.ptx
