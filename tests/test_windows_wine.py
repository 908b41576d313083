"""Proof against a real PE loader: check's DLL-search prediction equals what Wine's LoadLibraryExW maps."""
from __future__ import annotations

import ntpath
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import winfakes
import winkit
from realdata import CACHE, WIN_CUDART11, win_files

WINE_CACHE = CACHE / "wine"


def _ensure_tools() -> str:
    """Install wine64 and mingw-w64 when missing (as root, apt); '' when ready, else why not."""
    if shutil.which("wine") and winfakes.available() is None:
        return ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "wine64/gcc-mingw-w64-x86-64 missing and cannot be installed here (needs root and apt-get)"
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=900", "wine64", "wine",
                           "gcc-mingw-w64-x86-64"], capture_output=True, text=True,
                          env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if proc.returncode != 0 or not shutil.which("wine") or winfakes.available():
        return "installing wine64/gcc-mingw-w64-x86-64 failed: %s" % proc.stderr.strip()[-300:]
    return ""


@pytest.fixture(scope="module")
def wine(tmp_path_factory):
    why = _ensure_tools()
    if why:
        pytest.skip(why)
    prefix = WINE_CACHE / "prefix"
    env = dict(os.environ, WINEPREFIX=str(prefix), WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=",
               DISPLAY="")
    if not (prefix / "drive_c" / "windows" / "system32").is_dir():
        prefix.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["wineboot", "-i"], env=env, capture_output=True, text=True, timeout=300)
        if not (prefix / "drive_c" / "windows" / "system32").is_dir():
            pytest.skip("wine cannot start here: wineboot rc=%s %s" % (proc.returncode, proc.stderr[-300:]))
    work = tmp_path_factory.mktemp("fakes")
    kinds = {k: winfakes.build_kind(k, work / k) for k in winfakes.KINDS}
    real32 = win_files(*WIN_CUDART11)
    if real32 is not None:  # NVIDIA's own 32-bit cudart32_110.dll stands in for a 32-bit zlibwapi.dll
        (work / "zlib32" / "bin").mkdir(parents=True)
        shutil.copyfile(real32 / "bin" / "cudart32_110.dll", work / "zlib32" / "bin" / "zlibwapi.dll")
        kinds["zlib32"] = work / "zlib32"
    exe = winfakes.build_loadtest(work)
    yield {"env": env, "drive": prefix / "drive_c", "kinds": kinds, "exe": exe}
    subprocess.run(["wineserver", "-k"], env=env, capture_output=True)


SCENARIO_DIRS = ["Program Files/NVIDIA GPU Computing Toolkit", "Program Files/NVIDIA", "tools", "cudnn-9.0",
                 "Python311", "loadtest"]


def run_program(wine, program: dict, env_path: str) -> dict:
    """Run the loader test program as the scenario's consumer; {request: path or 'ERR n'}."""
    drive = wine["drive"]
    app = program.get("app", r"C:\loadtest")
    exe_name = "python.exe" if "app" in program else "loadtest.exe"
    target = winkit.win_to_host(drive, app) / exe_name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wine["exe"], target)
    argv = ["wine", "%s\\%s" % (app, exe_name), "torch" if program.get("preload") else "plain", env_path,
            program.get("preload", "-"), ";".join(program["user_dirs"]) or "-"] + program["loads"]
    proc = subprocess.run(argv, env=wine["env"], capture_output=True, text=True, timeout=120)
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.strip().split(" ", 3)
        if parts[0] == "LOAD":
            out[parts[1].lower()] = parts[3] if parts[2] == "OK" else "ERR %s" % parts[3]
    assert out, "the loader test program printed nothing: %s %s" % (proc.stdout, proc.stderr[-500:])
    return out


def predicted(facts, consumer: str) -> dict:
    loads = [ld for ld in facts.windows.loads if ld.consumer.startswith(consumer) and not ntpath.isabs(ld.request)]
    return {ld.request.lower(): ld.path if ld.path else "ERR %s" % ld.error for ld in loads}


@pytest.mark.parametrize("name", winkit.SCENARIOS)
def test_prediction_equals_wine(wine, name, record_property):
    from cudnn_doctor.commands.check import collect_facts

    drive = wine["drive"]
    for rel in SCENARIO_DIRS:
        shutil.rmtree(drive / rel, ignore_errors=True)
    if name == "zlib-32bit" and "zlib32" not in wine["kinds"]:
        pytest.skip("no 32-bit DLL: the nvidia-cuda-runtime-cu11 win_amd64 wheel could not be downloaded")
    scenario = winkit.build(name, drive, lambda kind: wine["kinds"][kind])
    facts = collect_facts(str(drive), scenario.env)
    assert not facts.probe_errors, facts.probe_errors
    for program in scenario.programs:
        consumer = "torch" if program.get("preload") else "a program started from a shell"
        want = predicted(facts, consumer)
        assert want, "check predicted no loads for %s" % consumer
        extra = [r for r in want if r not in {n.lower() for n in program["loads"]}]  # cudart64_*.dll
        got = run_program(wine, dict(program, loads=program["loads"] + extra), scenario.env["PATH"])
        for request, answer in want.items():
            assert request in got, (request, got)
            assert answer.lower() == got[request].lower(), (name, consumer, request, answer, got[request])
        record_property("%s:%s" % (name, consumer), repr(sorted(want.items())))
