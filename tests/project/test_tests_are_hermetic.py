"""The suite never reads a user's own knowledge: a `cudnn-doctor update` copy in ~/.cache/cudnn-doctor changes nothing
(tests/hermetic.py redirects the cache before collection), and a test or module that reads knowledge from outside the
shipped and test folders fails, named with the path (the guard)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def users_update(home: Path) -> Path:
    """$HOME/.cache/cudnn-doctor as `cudnn-doctor update` leaves it: knowledge.json (the shipped derived knowledge, dated
    later, with a cuDNN release nothing ships) and wheels.json; returns the cache folder ($HOME/.cache)."""
    from cudnn_doctor.knowledge.schema import problems

    folder = home / ".cache" / "cudnn-doctor"
    folder.mkdir(parents=True)
    doc = json.loads((REPO / "compat" / "derived.json").read_text(encoding="utf-8"))
    doc.update(date="2099-01-01", generated_by="cudnn-doctor update", errors=[])
    doc["cudnn_releases"].append({"release": "9.99.0", "cuda_majors": {"12": "9.99.0.1", "13": "9.99.0.1"},
                                  "date": "2099-01-01"})
    assert problems(doc) == []  # valid: the package would read it in place of the shipped copy
    (folder / "knowledge.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    wheels = json.loads((REPO / "compat" / "wheels.json").read_text(encoding="utf-8"))
    (folder / "wheels.json").write_text(json.dumps(dict(wheels, date="2099-01-01")), encoding="utf-8")
    return home / ".cache"


def _pytest(args, env, cwd: Path) -> subprocess.CompletedProcess:
    """An inner session of its own: the outer run's PYTEST_ADDOPTS (CI's `-m slow`) would deselect its tests."""
    env = {k: v for k, v in env.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", *args],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=600)


def test_the_users_copy_is_what_the_package_would_read(tmp_path, monkeypatch):
    """The fake copy matters: pointed at it, the loader takes it over the shipped knowledge."""
    from cudnn_doctor.knowledge.load import read_all

    monkeypatch.setenv("XDG_CACHE_HOME", str(users_update(tmp_path / "home")))
    derived = read_all()[0]["derived"]
    assert derived["origin"].endswith("cudnn-doctor/knowledge.json")
    assert "9.99.0" in {r["release"] for r in derived["cudnn_releases"]}


def test_a_test_that_reads_a_users_knowledge_fails_naming_it_and_the_path(tmp_path):
    """A session of its own (`-p hermetic`): one test reads the user's copy, one module reads it at import, and a test
    after them still sees the shipped knowledge (the guard forgets an updated copy a test loaded)."""
    cache = users_update(tmp_path / "home")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_reads.py").write_text(
        "import os\n"
        "from cudnn_doctor.knowledge import load_compat\n\n"
        "def test_reads_the_users_copy(monkeypatch):\n"
        "    monkeypatch.setenv('XDG_CACHE_HOME', os.environ['USERS_CACHE'])\n"
        "    load_compat.cache_clear()\n"
        "    assert load_compat().data['derived']['origin'] != 'shipped'\n\n"
        "def test_then_the_shipped_copy():\n"
        "    assert load_compat().data['derived']['origin'] == 'shipped'\n")
    (inner / "test_at_import.py").write_text(
        "import os\n"
        "from cudnn_doctor.knowledge import load_compat\n"
        "os.environ['XDG_CACHE_HOME'] = os.environ['USERS_CACHE']\n"
        "load_compat.cache_clear()\n"
        "COMPAT = load_compat()\n\n"
        "def test_never_runs():\n"
        "    pass\n")
    env = dict(os.environ, USERS_CACHE=str(cache), PYTHONPATH=os.pathsep.join(
        [str(TESTS), os.environ.get("PYTHONPATH", "")]))
    proc = _pytest(["-p", "hermetic", "-q", "--continue-on-collection-errors", "--basetemp", str(tmp_path / "base"),
                    "test_reads.py", "test_at_import.py"], env, inner)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    knowledge = str(cache / "cudnn-doctor" / "knowledge.json")
    assert "ERROR test_reads.py::test_reads_the_users_copy" in out, out
    assert "test_reads.py::test_reads_the_users_copy: %s" % knowledge in out, out
    assert "collecting test_at_import.py loads knowledge from %s while it is collected" % knowledge in out, out
    assert "2 passed, 2 errors" in out and "test_then_the_shipped_copy" not in out.split("short test summary")[-1], out


@pytest.mark.skipif(sys.platform == "win32", reason="the golden tests build ELF libraries")
def test_the_golden_tests_pass_with_a_users_update_in_the_home_cache(tmp_path):
    """The issue's failure (22 golden tests failed after the README's `cudnn-doctor update`): the golden module run
    with HOME and XDG_CACHE_HOME at a home holding the user's copy."""
    home = tmp_path / "home"
    cache = users_update(home)
    env = dict(os.environ, HOME=str(home), XDG_CACHE_HOME=str(cache))
    proc = _pytest(["-q", "--basetemp", str(tmp_path / "base"), "tests/commands/test_golden_output.py"], env, REPO)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
