"""A virtual environment uv made holds no pip: a plain `pip` in its shell is another Python's (the base
interpreter's, through PATH), so check's fixes there say `uv pip`. A real venv with pip's real install, pip then
removed from it and pyvenv.cfg given the line uv 0.13.9 writes (`uv = 0.13.9`, read from a real `uv venv`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fix_factory import cudnn_wheel, make_venv, pip, torch_wheel


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """torch pinning cuDNN 8.9.2.26 beside the 9.3 wheel (CD702): a fix that installs with pip."""
    base = tmp_path_factory.mktemp("uvvenv")
    links = base / "wheels"
    torch_wheel(links)
    cudnn_wheel(links, "9.3.0.75")
    venv = make_venv(base / "venv")
    pip(venv, "install", "--no-deps", "torch==2.3.1", "nvidia-cudnn-cu12==9.3.0.75", links=links)
    return venv, links


def _fix_commands(venv: Path) -> list:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    out = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--json", "--env", "VIRTUAL_ENV=%s" % venv,
                          "--env", "PATH=%s/bin:/usr/bin:/bin" % venv], capture_output=True, text=True, env=env,
                         timeout=120).stdout
    [pinned] = [f for f in json.loads(out)["findings"] if f["id"] == "CD702"]
    return pinned["remedy"]["commands"]


def test_a_venv_uv_made_without_pip_gets_uv_pip_and_one_with_pip_gets_pip(broken):
    venv, links = broken
    assert _fix_commands(venv)[0].startswith("pip install ")
    cfg = venv / "pyvenv.cfg"
    made_by_pip = cfg.read_text()
    cfg.write_text(made_by_pip + "uv = 0.13.9\n")
    try:
        assert _fix_commands(venv)[0].startswith("pip install "), "uv made it, but pip is in it: its own pip"
        pip(venv, "uninstall", "-y", "pip", links=links)
        assert _fix_commands(venv)[0].startswith("uv pip install "), _fix_commands(venv)
    finally:
        cfg.write_text(made_by_pip)


@pytest.mark.live  # reads real venvs made here, through the real Host
def test_the_user_sites_owner_is_read_from_a_system_site_packages_venvs_pyvenv_cfg(tmp_path):
    # python -m venv --system-site-packages writes `executable = ...` (3.11+): the interpreter whose pip removes
    # from the user site (sys._base_executable, which fix asks the venv's python for)
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.python_places import active_venv, user_site_owner

    plain, shared = tmp_path / "plain", tmp_path / "shared"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(shared)], check=True)
    base = subprocess.run([str(shared / "bin" / "python"), "-c", "import sys; print(sys._base_executable)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert user_site_owner(active_venv(Host(env={"VIRTUAL_ENV": str(shared)}))[1]) == base
    assert user_site_owner(active_venv(Host(env={"VIRTUAL_ENV": str(plain)}))[1]) is None
    assert user_site_owner(active_venv(Host(env={}))[1]) is None
