"""Proof against a real PE loader: check's DLL-search prediction equals what Wine's LoadLibraryExW maps."""
from __future__ import annotations

import ntpath
import os
import shutil
import subprocess
import sys

import pytest

import winfakes
import winkit
from realdata import CACHE, WIN_CUDART11, win_files

WINE_CACHE = CACHE / "wine"


def _ensure_tools() -> str:
    """Install wine64 and mingw-w64 when missing (as root, apt); '' when ready, else why not."""
    if not sys.platform.startswith("linux"):
        return "Wine and mingw-w64 are the Linux stand-ins for Windows' own loader"
    if shutil.which("wine") and winfakes.available() is None:
        return ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "wine64/gcc-mingw-w64-x86-64 missing and cannot be installed here (needs root and apt-get)"
    apt_env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=900", "wine64", "wine",
               "gcc-mingw-w64-x86-64"]
    proc = subprocess.run(install, capture_output=True, text=True, env=apt_env)
    if proc.returncode != 0:  # a fresh machine may have no package lists yet
        subprocess.run(["apt-get", "update", "-q", "-o", "DPkg::Lock::Timeout=900"], capture_output=True, env=apt_env)
        proc = subprocess.run(install, capture_output=True, text=True, env=apt_env)
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


def run_program(wine, app: str, mode: str, env_path: str, preload: str, user_dirs, loads) -> dict:
    """Run the loader test program as ``app\\<exe>``; {request: path or 'ERR n'} from Wine's answers."""
    exe_name = "python.exe" if app.lower() != r"c:\loadtest" else "loadtest.exe"
    target = winkit.win_to_host(wine["drive"], app) / exe_name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(wine["exe"], target)
    argv = ["wine", "%s\\%s" % (app, exe_name), mode, env_path, preload, ";".join(user_dirs) or "-"] + loads
    proc = subprocess.run(argv, env=wine["env"], capture_output=True, text=True, timeout=120)
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.rstrip("\r\n").split("\t")  # tab-separated: paths hold spaces
        if parts[0] == "LOAD":
            out[parts[1].lower()] = parts[3] if parts[2] == "OK" else "ERR %s" % parts[3]
    assert out, "the loader test program printed nothing: %s %s" % (proc.stdout, proc.stderr[-500:])
    return out


def programs(facts):
    """One loader test program per consumer check predicted for, set up the way the probe models it."""
    consumers = list(dict.fromkeys(ld.consumer for ld in facts.windows.loads))
    torch = {"torch %s" % fw.version: fw.location for fw in facts.python.frameworks if fw.name == "torch"}
    for consumer in consumers:
        loads = [ld for ld in facts.windows.loads if ld.consumer == consumer]
        want = {ld.request.lower(): ld.path if ld.path else "ERR %s" % ld.error for ld in loads}
        names = [ld.request for ld in loads]
        if consumer in torch:
            site = torch[consumer]
            lib = site + "\\torch\\lib"
            yield consumer, want, dict(app=ntpath.dirname(ntpath.dirname(site)), mode="torch", preload=lib,
                                       user_dirs=[lib], loads=names)
        elif consumer.startswith("Python 3.8+ in "):
            yield consumer, want, dict(app=consumer[len("Python 3.8+ in "):], mode="plain", preload="-",
                                       user_dirs=[], loads=["+" + names[0]] + names[1:])
        elif consumer == "a program started from a shell":
            yield consumer, want, dict(app=r"C:\loadtest", mode="plain", preload="-", user_dirs=[], loads=names)
        else:  # a framework library loaded as an extension module: LoadLibraryExW(path, 0x1100)
            site = next(fw.location for fw in facts.python.frameworks if consumer == "%s %s" % (fw.name, fw.version))
            yield consumer, want, dict(app=ntpath.dirname(ntpath.dirname(site)), mode="plain", preload="-",
                                       user_dirs=[], loads=["*" + n for n in names])


VERDICTS = {}  # scenario -> [(consumer, request, predicted, wine)] for the closing table


@pytest.mark.parametrize("name", winkit.SCENARIOS)
def test_prediction_equals_wine(wine, name):
    from cudnn_doctor.diagnose import collect_facts

    drive = wine["drive"]
    for rel in SCENARIO_DIRS:
        shutil.rmtree(drive / rel, ignore_errors=True)
    if name == "zlib-32bit" and "zlib32" not in wine["kinds"]:
        pytest.skip("no 32-bit DLL: the nvidia-cuda-runtime-cu11 win_amd64 wheel could not be downloaded")
    scenario = winkit.build(name, drive, lambda kind: wine["kinds"][kind])
    facts = collect_facts(str(drive), scenario.env)
    assert not facts.probe_errors, facts.probe_errors
    compared = 0
    for consumer, want, program in programs(facts):
        got = run_program(wine, env_path=scenario.env["PATH"], **program)
        for request, answer in want.items():
            assert request in got, (request, got)
            assert answer.lower() == got[request].lower(), (name, consumer, request, answer, got[request])
            VERDICTS.setdefault(name, []).append((consumer, request, answer, got[request]))
            compared += 1
    assert compared >= 2


def _model(wine, **kw):
    from cudnn_doctor.probes.windows.search import Candidate, Process
    from cudnn_doctor.readers.pe import read_pe

    drive = wine["drive"]

    def lookup(folder, name):
        base = winkit.win_to_host(drive, folder)
        hits = [p for p in (base.iterdir() if base.is_dir() else []) if p.name.lower() == name.lower()]
        if not hits:
            return None
        info = read_pe(hits[0].read_bytes())
        return Candidate(path=folder.rstrip("\\") + "\\" + hits[0].name, machine=info.machine, imports=info.imports)

    return Process(lookup, system32=r"C:\windows\system32", windows_dir=r"C:\windows", **kw)


VARIANTS = {
    # SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS) + AddDllDirectory: PATH no longer counts.
    "default-dirs-with-added-folder": ("installer-bin-only", "default",
                                       [r"C:\Program Files\NVIDIA\CUDNN\v9.1\bin\12.4"]),
    "default-dirs-without-folder": ("dl4j-manual-copy", "default", []),
    # Two AddDllDirectory folders with the same DLL: Microsoft leaves the order unspecified; Wine's is checked.
    "two-added-folders": ("torch-bundle-shadowed", "default",
                          [r"C:\cudnn-9.0\bin", r"C:\Python311\Lib\site-packages\torch\lib"]),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_search_flags_equal_wine(wine, variant):
    """The resolver under SetDefaultDllDirectories/AddDllDirectory, against Wine's answer."""
    from cudnn_doctor.probes.windows.search import SEARCH_DEFAULT_DIRS

    scenario_name, mode, added = VARIANTS[variant]
    drive = wine["drive"]
    for rel in SCENARIO_DIRS:
        shutil.rmtree(drive / rel, ignore_errors=True)
    scenario = winkit.build(scenario_name, drive, lambda kind: wine["kinds"][kind])
    path = scenario.env["PATH"]
    proc = _model(wine, app_dir=r"C:\loadtest", path=path.split(";"), user_dirs=added,
                  default_flags=SEARCH_DEFAULT_DIRS)
    names = winkit.CUDNN9
    want = {}
    for name in names:
        load = proc.load_library(name)
        want[name.lower()] = load.path if load.path else "ERR %s" % load.error
    got = run_program(wine, r"C:\loadtest", mode, path, "-", added, names)
    assert {k: v.lower() for k, v in want.items()} == {k: got[k].lower() for k in want}


def test_wrong_machine_is_skipped_like_wine(wine, tmp_path):
    """A 32-bit zlibwapi.dll first on PATH and an x64 one later: the loader passes over the 32-bit one."""
    if "zlib32" not in wine["kinds"]:
        pytest.skip("no 32-bit DLL: the nvidia-cuda-runtime-cu11 win_amd64 wheel could not be downloaded")
    drive = wine["drive"]
    for rel in SCENARIO_DIRS:
        shutil.rmtree(drive / rel, ignore_errors=True)
    x64 = tmp_path / "zlib64"
    (x64 / "bin").mkdir(parents=True)
    shutil.copyfile(wine["kinds"]["cudart12"] / "bin" / "cudart64_12.dll", x64 / "bin" / "zlibwapi.dll")
    winkit.put(drive, wine["kinds"]["zlib32"], ["zlibwapi.dll"], r"C:\tools\x86")
    winkit.put(drive, x64, ["zlibwapi.dll"], r"C:\tools\x64")
    path = r"C:\tools\x86;C:\tools\x64"
    load = _model(wine, app_dir=r"C:\loadtest", path=path.split(";")).load_library("zlibwapi.dll")
    got = run_program(wine, r"C:\loadtest", "plain", path, "-", [], ["zlibwapi.dll"])
    assert load.skipped and load.skipped[0]["machine"] == "x86"
    assert (load.path or "ERR %s" % load.error).lower() == got["zlibwapi.dll"].lower()


@pytest.mark.parametrize("mark, flags", [("", 0), ("!", 0x8), ("*", 0x1100)])
def test_a_full_path_load_searches_the_dlls_folder_only_when_asked(wine, mark, flags):
    """LoadLibrary of ...\\bin\\12.4\\cudnn_cnn64_9.dll: its imports beside it are found only with
    LOAD_WITH_ALTERED_SEARCH_PATH or LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR, not by a plain call."""
    drive = wine["drive"]
    for rel in SCENARIO_DIRS:
        shutil.rmtree(drive / rel, ignore_errors=True)
    scenario = winkit.build("installer-bin-only", drive, lambda kind: wine["kinds"][kind])
    path = scenario.env["PATH"]
    target = r"C:\Program Files\NVIDIA\CUDNN\v9.1\bin\12.4\cudnn_cnn64_9.dll"
    load = _model(wine, app_dir=r"C:\loadtest", path=path.split(";")).load_library(target, flags)
    got = run_program(wine, r"C:\loadtest", "plain", path, "-", [], [mark + target])
    assert (load.path or "ERR %s" % load.error).lower() == got[target.lower()].lower()
    assert (load.path is None) == (flags == 0)
