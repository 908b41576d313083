"""The distributions a release publishes: `python -m build` makes a wheel and an sdist whose metadata passes
`twine check`, the wheel carries the knowledge base, and installed into a fresh venv it runs `--version` and
`check --json`."""
from __future__ import annotations

import email
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from cudnn_doctor import __version__

REPO = Path(__file__).resolve().parents[2]


def _need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        pytest.skip("%s is not installed (it is in the `test` extra: pip install \".[test]\")" % module)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict:
    """Wheel and sdist built from this checkout, into a folder of their own (the checkout's dist/ is left alone)."""
    _need("build")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "Could not find a version that satisfies" in proc.stdout + proc.stderr:
        pytest.skip("python -m build could not fetch setuptools into its isolated environment (no PyPI)")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0], "dir": out}


def test_twine_check_passes(dists):
    _need("twine")
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dists["wheel"]), str(dists["sdist"])],
                          capture_output=True, text=True, timeout=300)
    print(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2


def test_wheel_metadata_is_complete(dists):
    with zipfile.ZipFile(str(dists["wheel"])) as whl:
        meta_name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(whl.read(meta_name))
        names = set(whl.namelist())
    assert meta["Name"] == "cudnn-doctor" and meta["Version"] == __version__  # one version, from __init__.py
    assert meta["Requires-Python"] == ">=3.9" and meta["License-Expression"] == "Apache-2.0"
    assert meta["Summary"] and meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# cudnn-doctor")  # the README is the long description
    classifiers = meta.get_all("Classifier")
    assert any(c.startswith("Programming Language :: Python :: 3.") for c in classifiers)
    try:
        from trove_classifiers import classifiers as known
    except ImportError:
        known = None
    if known is not None:  # PyPI refuses an upload with a classifier it does not know
        assert not [c for c in classifiers if c not in known]
    urls = meta.get_all("Project-URL") or []
    assert urls and all(", https://" in u for u in urls)
    assert not [u for u in urls if "OWNER" in u or "github.com" in u]  # no invented repository
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_wheel_ships_the_knowledge_base_and_schemas(dists):
    with zipfile.ZipFile(str(dists["wheel"])) as whl:
        names = set(whl.namelist())
    for toml in (REPO / "compat").glob("*.toml"):
        assert "cudnn_doctor/_compat/%s" % toml.name in names, toml.name
    for schema in REPO.joinpath("cudnn_doctor").rglob("*.json"):
        assert schema.relative_to(REPO).as_posix() in names, schema
    # The native, smoke and bench children run as scripts: they must be in the wheel beside their modules.
    for child in ("cudnn_doctor/native/child.py", "cudnn_doctor/smoke/child.py", "cudnn_doctor/bench/bench_child.py"):
        assert child in names
    assert "cudnn_doctor/native/ready.ptx" in names  # check --ready's kernel, read by the child beside it


def test_sdist_carries_what_a_release_is_checked_with(dists):
    with tarfile.open(str(dists["sdist"])) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("LICENSE", "README.md", "pyproject.toml", "setup.py", "compat/cudnn.toml", "mkdocs.yml",
                   "tests/project/test_dist.py", "tests/kit.py", "action.yml", "scripts/build_zipapp.sh", "docs/index.md"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_installs_into_a_fresh_venv_and_runs(dists, tmp_path):
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        pytest.skip("installing the wheel's dependencies needs PyPI and CUDNN_DOCTOR_NO_DOWNLOAD is set")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(dists["wheel"])],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    exe = venv / "bin" / "cudnn-doctor"
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(tmp_path)}  # nothing of this checkout
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert version.returncode == 0 and version.stdout.strip() == "cudnn-doctor %s" % __version__, version
    root = tmp_path / "root"
    (root / "usr" / "lib").mkdir(parents=True)
    check = subprocess.run([str(exe), "check", "--json", "--root", str(root)], capture_output=True, text=True,
                           env=env, cwd=str(tmp_path), timeout=120)
    doc = json.loads(check.stdout)
    assert check.returncode == doc["exit_code"] == 1 and doc["verdict"] == "error"  # no driver in an empty root
    assert doc["tool"] == {"name": "cudnn-doctor", "version": __version__}
    # The knowledge base was read from the installed wheel, not from this checkout.
    src = subprocess.run([str(py), "-c", "from cudnn_doctor.knowledge.load import read_all; print(read_all()[1])"],
                         capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert src.stdout.strip().startswith(str(venv)), src
