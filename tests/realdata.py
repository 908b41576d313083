"""Real NVIDIA libraries from PyPI wheels, downloaded once and cached, for the real-library test tier."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Optional

CACHE = Path(os.environ.get("CUDNN_DOCTOR_TEST_CACHE", Path.home() / ".cache" / "cudnn-doctor-tests"))

# Versions the real-library tier uses; each is a plain `pip download` from the package registry.
CUDNN9 = ("nvidia-cudnn-cu12", "9.1.0.70")
CUDNN8 = ("nvidia-cudnn-cu12", "8.9.7.29")
CUDART12 = ("nvidia-cuda-runtime-cu12", "12.4.127")
CUDART11 = ("nvidia-cuda-runtime-cu11", "11.8.89")


def wheel_file(name: str, version: str) -> Optional[Path]:
    """The cached .whl, downloading it on first use; None when offline or disabled."""
    wheels = CACHE / "wheels"
    # Linux wheels only: the same cache holds win_amd64 wheels of the same name and version.
    pattern = "%s-%s-*manylinux*x86_64.whl" % (name.replace("-", "_"), version)
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0]
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    wheels.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--platform", "manylinux2014_x86_64", "--python-version", "3.11",
         "%s==%s" % (name, version), "-d", str(wheels)],
        capture_output=True, text=True,
    )
    found = sorted(wheels.glob(pattern))
    return found[0] if proc.returncode == 0 and found else None


def real_wheel(name: str, version: str) -> Optional[Path]:
    """The wheel unpacked as a site-packages folder (cached); None when it cannot be had."""
    target = CACHE / "unpacked" / ("%s-%s" % (name, version))
    if (target / ".complete").exists():
        return target
    whl = wheel_file(name, version)
    if whl is None:
        return None
    tmp = target.with_name(target.name + ".tmp%d" % os.getpid())
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(tmp)
    for info in zipfile.ZipFile(whl).infolist():  # zip drops the exec bits pip would keep
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(tmp / info.filename, mode)
    if target.exists():
        import shutil

        shutil.rmtree(target)
    os.replace(tmp, target)
    (target / ".complete").write_text("ok")
    return target
