"""dist/cudnn-doctor.pyz (scripts/build_zipapp.sh): one file that runs `check --json` on a bare `python3 -I` from /
with an empty environment, on every Python 3.9+ here, with its native child and knowledge base working."""
from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest
from packaging.requirements import Requirement
from zipapp_build import built_zipapp, interpreters

from cudnn_doctor import __version__

SYSTEM_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


@pytest.fixture(scope="module")
def pyz() -> Path:
    path, why = built_zipapp()
    if path is None:
        pytest.skip(why)
    return path


def _run(argv: List[str], env: Dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=timeout)


def _stamp(pyz: Path, name: str) -> str:
    """A value scripts/build_zipapp.sh wrote into the zipapp's __main__.py."""
    with zipfile.ZipFile(str(pyz)) as zf:
        main = zf.read("__main__.py").decode()
    return main.split('%s = "' % name, 1)[1].split('"', 1)[0]


def _build_id(pyz: Path) -> str:
    return _stamp(pyz, "BUILD_ID")


def _payload(pyz: Path) -> Dict[str, bytes]:
    """The packed files: the zipapp holds its entry point and one inner archive with everything else."""
    with zipfile.ZipFile(str(pyz)) as outer:
        assert sorted(outer.namelist()) == ["__main__.py", "payload.zip"]
        with outer.open("payload.zip") as raw, zipfile.ZipFile(raw) as inner:
            return {n: inner.read(n) for n in inner.namelist() if not n.endswith("/")}


def test_bare_interpreter_empty_environment_gives_a_report(pyz):
    """Exactly as on a node: `cd / && env -i python3 -I cudnn-doctor.pyz check --json`."""
    home = Path(os.path.expanduser("~")) / ".cache" / "cudnn-doctor" / "zipapp" / _build_id(pyz)
    existed = home.exists()
    try:
        proc = _run(["env", "-i", SYSTEM_PYTHON, "-I", str(pyz), "check", "--json"], env=dict(os.environ))
        doc = json.loads(proc.stdout)
        assert proc.returncode == doc["exit_code"] and proc.returncode in (0, 1, 4), proc.stderr
        assert doc["tool"] == {"name": "cudnn-doctor", "version": __version__} and doc["command"] == "check"
        # The native child ran from the unpacked copy: NVML answered (or said the library is absent), not an
        # ImportError for pynvml, which the zip carries.
        assert "No module named" not in str(doc["facts"]["driver"].get("nvml_error"))
        assert home.is_dir(), "the empty environment unpacks into the user's cache (HOME from the password database)"
    finally:
        if not existed:
            shutil.rmtree(str(home), ignore_errors=True)


@pytest.mark.parametrize("version, python", list(interpreters()), ids=[v for v, _ in interpreters()])
def test_runs_on_every_supported_interpreter(pyz, tmp_path, version, python):
    env = {"CUDNN_DOCTOR_ZIPAPP_DIR": str(tmp_path / "unpacked")}
    proc = _run([python, "-I", str(pyz), "--version"], env)
    floor = tuple(int(n) for n in _stamp(pyz, "MIN_PYTHON").split("."))
    if tuple(int(n) for n in version.split(".")) < floor:  # built without a 3.9 resolver: one clear line
        assert proc.returncode == 3 and "needs Python %d.%d or newer" % floor in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0 and proc.stdout.strip() == "cudnn-doctor %s" % __version__, proc.stderr
    root = tmp_path / "root"
    (root / "usr" / "lib").mkdir(parents=True)
    proc = _run([python, "-I", str(pyz), "check", "--json", "--root", str(root)], env)
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exit_code"] == 1 and doc["verdict"] == "error", proc.stderr  # an empty root
    # matrix reads only the knowledge base: the data inside the zip, parsed by tomllib or (3.9/3.10) tomli.
    proc = _run([python, "-I", str(pyz), "matrix", "--cuda", "12.4", "--json"], env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["command"] == "matrix", proc.stderr


def test_knowledge_comes_from_inside_the_zipapp(pyz, tmp_path):
    """The unpacked copy's own compat data is what a run reads (not a checkout's, not an installed package's)."""
    unpacked = tmp_path / "unpacked"
    env = {"CUDNN_DOCTOR_ZIPAPP_DIR": str(unpacked)}
    assert _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], env).returncode == 0
    home = unpacked / _build_id(pyz)
    shipped = {n for n in _payload(pyz) if n.startswith("cudnn_doctor/_compat/") and n.endswith(".toml")}
    repo = Path(__file__).resolve().parents[2]
    assert shipped == {"cudnn_doctor/_compat/%s" % p.name for p in (repo / "compat").glob("*.toml")}
    proc = _run([SYSTEM_PYTHON, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                 "from cudnn_doctor.knowledge.load import read_all; print(read_all()[1])", str(home)], env)
    assert proc.stdout.strip() == str(home / "cudnn_doctor" / "_compat"), proc.stderr


def test_only_pure_python_and_every_dependency_inside(pyz):
    files = _payload(pyz)
    names = list(files)
    metas = [email.message_from_bytes(files[n]) for n in names if n.endswith(".dist-info/METADATA")]
    assert not [n for n in names if n.endswith((".so", ".pyd", ".dll", ".dylib"))]
    have = {m["Name"].lower().replace("_", "-") for m in metas}
    assert {"cudnn-doctor", "typer", "rich", "packaging", "nvidia-ml-py", "pefile", "tomli", "requests"} <= have
    for meta in metas:  # what each package needs on any Python the project supports is packed too
        for line in meta.get_all("Requires-Dist") or []:
            req = Requirement(line)
            for minor in range(9, 14):
                env = {"python_version": "3.%d" % minor, "python_full_version": "3.%d.0" % minor, "extra": "",
                       "sys_platform": "linux", "platform_system": "Linux"}
                if req.marker is None or req.marker.evaluate(env):
                    assert req.name.lower().replace("_", "-") in have, (meta["Name"], line, minor)


def test_first_runs_at_once_share_one_unpacked_copy(pyz, tmp_path):
    env = {"CUDNN_DOCTOR_ZIPAPP_DIR": str(tmp_path / "unpacked")}
    results: List[subprocess.CompletedProcess] = []
    threads = [threading.Thread(target=lambda: results.append(_run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], env)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0] * 4, [r.stderr for r in results]
    assert [p.name for p in (tmp_path / "unpacked").iterdir()] == [_build_id(pyz)]  # no staging folder left


def test_unpacking_a_new_build_retires_builds_unused_for_two_weeks(pyz, tmp_path):
    base = tmp_path / "unpacked"
    weeks_ago = __import__("time").time() - 15 * 86400
    old, recent, killed = base / "0000000000000000", base / "1111111111111111", base / ".unpacking-dead"
    for folder in (old, recent, killed):
        folder.mkdir(parents=True)
        (folder / ".unpacked").touch()
    os.utime(old / ".unpacked", (weeks_ago, weeks_ago))
    os.utime(killed, (weeks_ago, weeks_ago))
    proc = _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], {"CUDNN_DOCTOR_ZIPAPP_DIR": str(base)})
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in base.iterdir()) == sorted([_build_id(pyz), recent.name])


def test_a_start_marks_its_build_as_used(pyz, tmp_path):
    base = tmp_path / "unpacked"
    env = {"CUDNN_DOCTOR_ZIPAPP_DIR": str(base)}
    assert _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], env).returncode == 0
    marker = base / _build_id(pyz) / ".unpacked"
    weeks_ago = __import__("time").time() - 15 * 86400
    os.utime(marker, (weeks_ago, weeks_ago))
    assert _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], env).returncode == 0
    assert marker.stat().st_mtime > weeks_ago + 86400


def test_unwritable_home_falls_back_to_a_private_temp_folder(pyz, tmp_path):
    if os.geteuid() == 0:
        home = Path("/proc/self")  # even root cannot create folders there
    else:
        home = tmp_path / "ro"
        home.mkdir(mode=0o500)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], {"HOME": str(home), "TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc.stderr
    private = tmp / ("cudnn-doctor-zipapp-%d" % os.getuid())
    assert (private / _build_id(pyz)).is_dir() and private.stat().st_mode & 0o077 == 0


def test_a_temp_folder_someone_else_can_write_is_refused(pyz, tmp_path):
    tmp = tmp_path / "tmp"
    planted = tmp / ("cudnn-doctor-zipapp-%d" % os.getuid())
    planted.mkdir(parents=True)
    planted.chmod(0o777)
    proc = _run([SYSTEM_PYTHON, "-I", str(pyz), "--version"], {"HOME": "/proc/self", "TMPDIR": str(tmp)})
    assert proc.returncode == 3 and "CUDNN_DOCTOR_ZIPAPP_DIR" in proc.stderr and "Traceback" not in proc.stderr
    assert list(planted.iterdir()) == []


def test_an_interpreter_older_than_the_dependencies_gets_one_line(tmp_path):
    main = Path(__file__).resolve().parents[2] / "scripts" / "zipapp_main.py"
    script = tmp_path / "__main__.py"
    script.write_text(main.read_text().replace("@MIN_PYTHON@", "3.99").replace("@BUILD_ID@", "test"))
    proc = _run([sys.executable, "-I", str(script), "--version"], {"CUDNN_DOCTOR_ZIPAPP_DIR": str(tmp_path / "u")})
    assert proc.returncode == 3 and proc.stderr.startswith("cudnn-doctor: this zipapp needs Python 3.99 or newer")
    assert not (tmp_path / "u").exists()  # refused before unpacking anything
