"""The real-world harness's pip installs from a folder whose big wheels are stored uncompressed: pip must install
exactly what it installs from the wheel PyPI serves, and the harness must read which releases a fix's pip lines name."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import realworld_wheels as wheels


def installed(target: Path) -> dict:
    """Every file pip put under `target`: its bytes' hash and its mode."""
    out = {}
    for folder, _, files in os.walk(target):
        for name in files:
            path = Path(folder, name)
            out[str(path.relative_to(target))] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
    return out


@pytest.mark.slow
def test_pip_installs_the_same_files_from_a_stored_copy_of_a_real_wheel(tmp_path):
    wheel = wheels.wheel_file("nvidia-cuda-runtime-cu12", "12.1.105")
    if wheel is None:
        pytest.skip("the wheel could not be fetched")
    (tmp_path / "original").mkdir()
    (tmp_path / "stored").mkdir()
    os.link(wheel, tmp_path / "original" / wheel.name)
    wheels.stored_copy(wheel, tmp_path / "stored" / wheel.name)
    with zipfile.ZipFile(tmp_path / "stored" / wheel.name) as stored, zipfile.ZipFile(wheel) as original:
        assert {i.compress_type for i in stored.infolist()} == {zipfile.ZIP_STORED}
        assert zipfile.ZIP_DEFLATED in {i.compress_type for i in original.infolist()}  # else this proves nothing
        assert [i.filename for i in stored.infolist()] == [i.filename for i in original.infolist()]
    trees = {}
    for kind in ("original", "stored"):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--disable-pip-version-check", "--find-links", str(tmp_path / kind),
                        "--target", str(tmp_path / ("site-" + kind)), "nvidia-cuda-runtime-cu12==12.1.105"],
                       check=True)
        trees[kind] = installed(tmp_path / ("site-" + kind))
    assert any(name.endswith(".so.12") for name in trees["original"])
    assert trees["stored"] == trees["original"]


@pytest.mark.parametrize("text, named", [
    ('pip install --force-reinstall --no-deps "nvidia-cudnn-cu12==9.8.0.87"', ["nvidia-cudnn-cu12==9.8.0.87"]),
    ('pip install --no-deps --target /v/cudnn8 "nvidia-cudnn-cu12==8.9.7.*"', ["nvidia-cudnn-cu12==8.9.7.*"]),
    ("  1. /v/bin/python -m pip install 'jax[cuda13]==0.7.2' onnxruntime-gpu", ["jax[cuda13]==0.7.2", "onnxruntime-gpu"]),
    ("export LD_LIBRARY_PATH=/v/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}", []),
    ("/v/bin/python -m pip uninstall -y nvidia-cudnn-cu12", []),
    ('pip install "unbalanced', []),
])
def test_the_releases_a_fixs_pip_lines_name_are_read(text, named):
    assert wheels.requirements_in(text) == named


def test_stored_copies_past_the_budget_go_back_to_links_least_recently_named_first(tmp_path, monkeypatch):
    from fix_factory import cudnn_wheel

    monkeypatch.setattr(wheels, "WHEELS", tmp_path / "wheels")
    monkeypatch.setattr(wheels, "FOR_PIP", tmp_path / "for-pip")
    monkeypatch.setattr(wheels, "STORE_OVER", 0)
    built = {v: cudnn_wheel(tmp_path / "wheels", v) for v in ("9.1.0.70", "9.3.0.75")}
    size = wheels.for_pip(["nvidia-cudnn-cu12==9.1.0.70"]).joinpath(built["9.1.0.70"].name).stat().st_size
    monkeypatch.setattr(wheels, "STORED_GB", 1.5 * size / 1e9)  # room for one stored copy
    folder = wheels.for_pip(["nvidia-cudnn-cu12==9.3.*"])
    assert folder.joinpath(built["9.1.0.70"].name).samefile(built["9.1.0.70"])  # back to a link of its wheel
    assert not folder.joinpath(built["9.3.0.75"].name).samefile(built["9.3.0.75"])  # the one named now: stored
    with zipfile.ZipFile(folder / built["9.3.0.75"].name) as stored:
        assert {i.compress_type for i in stored.infolist()} == {zipfile.ZIP_STORED}
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in built.values())


def test_a_range_stores_only_the_release_pip_takes_from_it(tmp_path, monkeypatch):
    """"==9.*" names every cached 9.x; pip installs the newest it admits, and only that one is written again."""
    from fix_factory import cudnn_wheel

    monkeypatch.setattr(wheels, "WHEELS", tmp_path / "wheels")
    monkeypatch.setattr(wheels, "FOR_PIP", tmp_path / "for-pip")
    monkeypatch.setattr(wheels, "STORE_OVER", 0)
    built = {v: cudnn_wheel(tmp_path / "wheels", v) for v in ("9.1.0.70", "9.10.2.21", "9.3.0.75", "8.9.7.29")}
    folder = wheels.for_pip(["nvidia-cudnn-cu12==9.*"])
    stored = sorted(v for v, wheel in built.items() if not folder.joinpath(wheel.name).samefile(wheel))
    assert stored == ["9.10.2.21"]  # by version, not by name: 9.10 is newer than 9.3
