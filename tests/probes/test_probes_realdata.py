"""Real-library tier: NVIDIA's own libcudnn and libcudart from PyPI wheels, laid out as pip and tarball installs."""
from __future__ import annotations

import os
import shutil

import pytest

from cudnn_doctor.diagnose import collect_facts
from realdata import CUDART12, CUDNN8, CUDNN9, real_wheel

pytestmark = pytest.mark.realdata


def _wheel(spec):
    path = real_wheel(*spec)
    if path is None:
        pytest.skip("could not download %s==%s from the package registry" % spec)
    return path


def _place(src, dst) -> None:
    """Hard-link (fast, no copy of 600 MB) or copy; a symlink would point outside the fake root."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _install_wheel(machine, site: str, spec) -> None:
    """Put the unpacked wheel's files into a fake site-packages."""
    src = _wheel(spec)
    for dirpath, _dirs, files in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        for name in files:
            if name == ".complete":
                continue
            target = machine.p(os.path.join(site, rel, name))
            target.parent.mkdir(parents=True, exist_ok=True)
            _place(os.path.join(dirpath, name), target)


SITE = "/opt/venv/lib/python3.11/site-packages"


def test_real_cudnn9_wheel_reports_its_true_version_and_cuda(machine):
    _install_wheel(machine, SITE, CUDNN9)
    [c] = collect_facts(str(machine.root), env={"PATH": "/bin"}).cudnn
    assert c.origin == "pip" and c.version == "9.1.0" and c.version_source == "cudnnGetVersion"
    assert c.cuda_version == "12.4" and c.header_version == "9.1.0"
    assert c.package == "nvidia-cudnn-cu12 9.1.0.70"
    assert {f.name for f in c.files} >= {"libcudnn.so.9", "libcudnn_graph.so.9", "libcudnn_ops.so.9"}
    assert c.load_error is None


def test_real_cudnn8_wheel_and_cuda_runtime_wheel(machine):
    _install_wheel(machine, SITE, CUDNN8)
    _install_wheel(machine, SITE, CUDART12)
    f = collect_facts(str(machine.root), env={"PATH": "/bin"})
    [c] = f.cudnn
    assert c.version == "8.9.7" and c.cuda_version.startswith("12.")
    assert c.header_version == "8.9.7"
    assert "libcudnn_cnn_infer.so.8" in {lf.name for lf in c.files}
    [tk] = [t for t in f.toolkits if t.kind == "pip"]
    assert tk.version == "12.4.127" and tk.cudart_version == "12.4"


def test_real_library_repacked_as_a_tarball_install_in_a_toolkit(machine):
    """NVIDIA's tarball layout (versioned files + soname links) inside a CUDA 12 toolkit."""
    src = _wheel(CUDNN9)
    machine.toolkit("12.4.1")
    lib = "/usr/local/cuda-12.4/lib64"
    for name in os.listdir(src / "nvidia" / "cudnn" / "lib"):
        if not name.endswith(".so.9"):
            continue
        stem = name[: -len(".so.9")]
        _place(src / "nvidia" / "cudnn" / "lib" / name, machine.p("%s/%s.so.9.1.0" % (lib, stem)))
        machine.link("%s/%s.so.9" % (lib, stem), "%s.so.9.1.0" % stem)
    shutil.copy(src / "nvidia" / "cudnn" / "include" / "cudnn_version.h", machine.p("/usr/local/cuda-12.4/include"))
    [c] = collect_facts(str(machine.root), env={"PATH": "/bin"}).cudnn
    assert c.origin == "toolkit" and c.version == "9.1.0" and c.header_version == "9.1.0"
    main = next(lf for lf in c.files if lf.name == "libcudnn.so.9")
    assert main.file_version == "9.1.0" and main.is_link
