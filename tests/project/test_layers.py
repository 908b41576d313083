"""The import contracts ([tool.importlinter] in pyproject.toml) hold, and each one catches the import it forbids."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("lint-imports")
    exe = str(script) if script.exists() else shutil.which("lint-imports")
    assert exe, "lint-imports is missing: install the test extra (pip install '.[test]')"
    # The package under cwd, not an installed copy; wide enough that no contract name is wrapped.
    env = dict(os.environ, PYTHONPATH=str(cwd), COLUMNS="400")
    return subprocess.run([exe, "--no-cache", "--no-logo"], cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=300)


def _broken_sections(output: str) -> Dict[str, str]:
    """Contract name -> the text lint-imports printed under it in its 'Broken contracts' part."""
    broken = output.split("Broken contracts", 1)[-1]
    names = [c["name"] for c in CONTRACTS if re.search(r"^%s$" % re.escape(c["name"]), broken, re.M)]
    sections = {}
    for name in names:
        start = re.search(r"^%s$" % re.escape(name), broken, re.M).end()
        ends = [m.start() for other in names if other != name
                for m in [re.search(r"^%s$" % re.escape(other), broken[start:], re.M)] if m]
        sections[name] = broken[start:start + min(ends)] if ends else broken[start:]
    return sections


def test_every_contract_is_kept():
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "%d kept, 0 broken" % len(CONTRACTS) in proc.stdout


# (module file to append to, import line, contract that must break, message lint-imports must print)
FORBIDDEN = [
    ("host/__init__.py", "from ..probes.loader import LoaderView", "cudnn-doctor layers",
     "cudnn_doctor.host is not allowed to import cudnn_doctor.probes"),
    ("rules/common.py", "from ..host import Host", "rules, remedies",
     "cudnn_doctor.rules is not allowed to import cudnn_doctor.host"),
    ("rules/gpu.py", "from ..native import runner", "rules, remedies",
     "cudnn_doctor.rules is not allowed to import cudnn_doctor.native"),
    ("remedies/shell.py", "from ..native import runner", "rules, remedies",
     "cudnn_doctor.remedies is not allowed to import cudnn_doctor.native"),
    ("queries/__init__.py", "from ..host import Host", "rules, remedies",
     "cudnn_doctor.queries is not allowed to import cudnn_doctor.host"),
    ("knowledge/tables.py", "from ..host import Host", "rules, remedies",
     "cudnn_doctor.knowledge is not allowed to import cudnn_doctor.host"),
    ("probes/java.py", "from ..rules import RULES", "probes observe",
     "cudnn_doctor.probes is not allowed to import cudnn_doctor.rules"),
    ("probes/toolkit.py", "from ..remedies import shell", "probes observe",
     "cudnn_doctor.probes is not allowed to import cudnn_doctor.remedies"),
    ("render/human.py", "from ..probes.loader import LoaderView", "renderers print",
     "cudnn_doctor.render is not allowed to import cudnn_doctor.probes"),
    ("render/github.py", "from ..host import Host", "renderers print",
     "cudnn_doctor.render is not allowed to import cudnn_doctor.host"),
    ("commands/check.py", "from ..host import Host", "commands parse",
     "cudnn_doctor.commands is not allowed to import cudnn_doctor.host"),
    ("commands/fleet.py", "from ..remedies import shell", "commands parse",
     "cudnn_doctor.commands is not allowed to import cudnn_doctor.remedies"),
    ("commands/bench.py", "from . import smoke", "each command stands alone",
     "cudnn_doctor.commands.bench is not allowed to import cudnn_doctor.commands.smoke"),
    ("explain/judge.py", "from ..host import Host", "explain probes nothing itself",
     "cudnn_doctor.explain is not allowed to import cudnn_doctor.host"),
    ("smoke/run.py", "from ..native.runner import run_native", "only the host seam runs native code",
     "cudnn_doctor.smoke is not allowed to import cudnn_doctor.native"),
    ("bench/run.py", "from ..native import runner", "only the host seam runs native code",
     "cudnn_doctor.bench is not allowed to import cudnn_doctor.native"),
    ("install/verify.py", "from ..native.runner import run_native", "only the host seam runs native code",
     "cudnn_doctor.install is not allowed to import cudnn_doctor.native"),
    ("probes/driver.py", "from ..native.session import NativeSession", "only the host seam runs native code",
     "cudnn_doctor.probes is not allowed to import cudnn_doctor.native"),
]


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Dict[str, str]:
    """One copy of the package with every forbidden import added, linted once."""
    copy = tmp_path_factory.mktemp("forbidden")
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    shutil.copytree(REPO / "cudnn_doctor", copy / "cudnn_doctor", ignore=shutil.ignore_patterns("__pycache__"))
    for module, line, _, _ in FORBIDDEN:
        with open(copy / "cudnn_doctor" / module, "a") as fh:
            fh.write("\n%s  # noqa: E402,F401\n" % line)
    proc = _lint_imports(copy)
    assert proc.returncode != 0, proc.stdout
    return _broken_sections(proc.stdout)


@pytest.mark.parametrize("module, line, contract, message", FORBIDDEN, ids=[f[0] + ":" + f[1] for f in FORBIDDEN])
def test_a_forbidden_import_breaks_its_contract(broken, module, line, contract, message):
    [name] = [c["name"] for c in CONTRACTS if c["name"].startswith(contract)]
    assert name in broken, sorted(broken)
    assert message in broken[name], broken[name]


def test_every_contract_is_proved_by_a_forbidden_import():
    proved = {c for _, _, c, _ in FORBIDDEN}
    assert [c["name"] for c in CONTRACTS if not any(c["name"].startswith(p) for p in proved)] == []


def test_every_module_has_a_layer():
    """A module the contract does not name is checked by nothing: each top-level module and package has a layer."""
    contract = next(c for c in CONTRACTS if c["type"] == "layers")
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


# The programs run as the native child, and the folders they put first on sys.path (bench_child.py adds smoke's).
CHILD_SCRIPTS = {"native/child.py": ["native"], "smoke/child.py": ["smoke"], "bench/bench_child.py": ["bench", "smoke"]}


def test_child_scripts_import_nothing_of_the_package():
    """The child scripts import their siblings by bare name, which the linter does not follow: none of the modules
    they reach may import the package (relatively or by name), so only the host seam's child driver runs them."""
    import ast

    package = REPO / "cudnn_doctor"
    for script, folders in CHILD_SCRIPTS.items():
        todo, seen = [package / script], set()
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("cudnn_doctor")):
                    pytest.fail("%s imports the package: %s" % (path.relative_to(REPO), ast.unparse(node)))
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and node.module != "__future__" else [])
                for name in names:
                    assert not name.startswith("cudnn_doctor"), "%s imports %s" % (path.relative_to(REPO), name)
                    todo += [package / f / (name + ".py") for f in folders if (package / f / (name + ".py")).is_file()]
        assert len(seen) > 1 or script == "native/child.py", seen  # the walk found the siblings it imports
