"""The declared layers ([tool.importlinter] in pyproject.toml) hold, and the contract catches an upward import."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("lint-imports")
    exe = str(script) if script.exists() else shutil.which("lint-imports")
    assert exe, "lint-imports is missing: install the test extra (pip install '.[test]')"
    env = dict(os.environ, PYTHONPATH=str(cwd))  # the package under cwd, not an installed copy
    return subprocess.run([exe, "--no-cache", "--no-logo"], cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=300)


def test_layers_contract_is_kept():
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " kept, 0 broken" in proc.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    """host.py (the bottom seam) importing a probe must fail the check, naming both modules."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(REPO / "cudnn_doctor", tmp_path / "cudnn_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "cudnn_doctor" / "host.py", "a") as fh:
        fh.write("\nfrom .probes.loader import LoaderView  # noqa: E402,F401\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode != 0
    assert "cudnn_doctor.host is not allowed to import cudnn_doctor.probes" in proc.stdout, proc.stdout


def test_every_module_has_a_layer():
    """A module the contract does not name is checked by nothing: each top-level module and package has a layer."""
    import re
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    contract = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    declared = {name.strip("() ") for layer in contract["layers"] for name in re.split(r"[|:]", layer)}
    package = REPO / "cudnn_doctor"
    present = {"cudnn_doctor." + (p.stem if p.is_file() else p.name) for p in package.iterdir()
               if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p / "__init__.py").is_file()}
    present.discard("cudnn_doctor._compat")
    assert present - declared == set()


def test_explain_probing_by_itself_breaks_the_contract(tmp_path):
    """explain reads the machine only through diagnose: a loader view of its own fails CI."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(REPO / "cudnn_doctor", tmp_path / "cudnn_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "cudnn_doctor" / "commands" / "explain.py", "a") as fh:
        fh.write("\nfrom ..probes.loader import LoaderView  # noqa: E402,F401\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode != 0
    assert "explain probes nothing itself" in proc.stdout and "BROKEN" in proc.stdout, proc.stdout
