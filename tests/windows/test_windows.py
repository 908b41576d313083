"""check on Windows: PE reading, the DLL search model, --root as drive C:, --env, and the six scenarios of
issue 15 on drives built from NVIDIA's real win_amd64 DLLs (versions and import tables as NVIDIA ships them)."""
from __future__ import annotations

import json
import shutil

import pytest

import winfakes
import winkit
from powershell_lexer import quoted_arguments
from realdata import WIN_CUDART11, WIN_CUDART12, WIN_CUDNN8, WIN_CUDNN9, win_files

from cudnn_doctor.probes.windows.machine import driver_version_from_file
from cudnn_doctor.probes.windows.state import split_path
from cudnn_doctor.probes.windows.search import (ERROR_BAD_EXE_FORMAT, ERROR_MOD_NOT_FOUND, PYTHON_EXTENSION_FLAGS,
                                                SEARCH_DEFAULT_DIRS, Candidate, Process)
from cudnn_doctor.readers.pe import PeInfo, product_version, read_pe


# --- units: no files needed --------------------------------------------------------------------------------


def _process(files, **kw):
    """A Process over an in-memory drive: {folder: {name: (machine, imports)}}."""
    def lookup(folder, name):
        for f, names in files.items():
            if f.lower() == folder.lower():
                for n, (machine, imports) in names.items():
                    if n.lower() == name.lower():
                        return Candidate(path=f + "\\" + n, machine=machine, imports=imports)
        return None
    return Process(lookup, system32=r"C:\Windows\System32", windows_dir=r"C:\Windows", **kw)


def test_standard_order_path_and_shadowing():
    files = {r"C:\a": {"cudnn64_9.dll": ("x64", [])}, r"C:\b": {"cudnn64_9.dll": ("x64", [])}}
    load = _process(files, path=[r"C:\a", r"C:\b"]).load_library("cudnn64_9.dll")
    assert load.path == r"C:\a\cudnn64_9.dll" and load.via == "PATH"
    assert load.shadowed == [{"path": r"C:\b\cudnn64_9.dll", "via": "PATH"}]


def test_program_folder_before_path_and_imports_resolved_by_the_same_search():
    files = {r"C:\app": {"cudnn_cnn64_9.dll": ("x64", ["cudnn_ops64_9.dll", "KERNEL32.dll"])},
             r"C:\p": {"cudnn_ops64_9.dll": ("x64", ["cudnn_graph64_9.dll"]), "cudnn_cnn64_9.dll": ("x64", [])}}
    load = _process(files, app_dir=r"C:\app", path=[r"C:\p"]).load_library("cudnn_cnn64_9.dll")
    # cudnn_cnn64_9.dll comes from the program's folder, its import cudnn_ops64_9.dll from PATH, whose own import
    # is nowhere: the whole call fails with 126, naming the file that was missing.
    assert load.path is None and load.error == ERROR_MOD_NOT_FOUND and load.missing == "cudnn_graph64_9.dll"
    assert load.shadowed == [{"path": r"C:\p\cudnn_cnn64_9.dll", "via": "PATH"}]


def test_failed_load_unloads_everything_it_mapped():
    files = {r"C:\p": {"cudnn_ops64_9.dll": ("x64", ["cudnn_graph64_9.dll"])}}
    proc = _process(files, path=[r"C:\p"])
    assert proc.load_library("cudnn_ops64_9.dll").error == ERROR_MOD_NOT_FOUND
    assert proc.loaded == {}


def test_search_flags_skip_path_and_use_added_folders_last_added_first():
    files = {r"C:\p": {"x.dll": ("x64", [])}, r"C:\u1": {"x.dll": ("x64", [])}, r"C:\u2": {"x.dll": ("x64", [])}}
    assert _process(files, path=[r"C:\p"]).load_library("x.dll", SEARCH_DEFAULT_DIRS).error == ERROR_MOD_NOT_FOUND
    load = _process(files, path=[r"C:\p"], user_dirs=[r"C:\u1", r"C:\u2"]).load_library("x.dll", SEARCH_DEFAULT_DIRS)
    assert load.path == r"C:\u2\x.dll"


def test_dll_load_dir_serves_dependencies_of_a_full_path_load():
    files = {r"C:\lib": {"a.dll": ("x64", ["b.dll"]), "b.dll": ("x64", [])}}
    load = _process(files).load_library(r"C:\lib\a.dll", PYTHON_EXTENSION_FLAGS)
    assert load.path == r"C:\lib\a.dll" and load.modules["b.dll"] == r"C:\lib\b.dll"
    assert _process(files).load_library(r"C:\lib\a.dll").error == ERROR_MOD_NOT_FOUND  # plain: not its folder


def test_wrong_machine_is_passed_over_and_reported():
    files = {r"C:\x86": {"zlibwapi.dll": ("x86", [])}}
    load = _process(files, path=[r"C:\x86"]).load_library("zlibwapi.dll")
    assert load.error == ERROR_BAD_EXE_FORMAT and load.skipped[0]["machine"] == "x86"


def test_windows_helpers():
    assert driver_version_from_file("32.0.15.6094") == "560.94"
    assert driver_version_from_file("31.0.15.3667") == "536.67"
    assert split_path('C:\\a\\;"C:\\Program Files\\b";;C:\\') == [r"C:\a", r"C:\Program Files\b", "C:\\"]
    assert read_pe(b"MZ not a pe").error and read_pe(b"").error
    assert product_version(PeInfo(strings={"ProductName": "NVIDIA CUDA 12.4.127 Runtime"})) == "12.4.127"


# --- --env and --root -----------------------------------------------------------------------------------------


def _check(args, env=None):
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    result = CliRunner().invoke(app, ["check", *args], env=env)
    return result


def test_env_must_be_name_value(tmp_path):
    result = _check(["--root", str(tmp_path), "--env", "PATH"])
    assert result.exit_code == 2 and "NAME=VALUE" in result.output


def test_env_replaces_this_process_environment_on_a_linux_root(tmp_path):
    lib = tmp_path / "opt" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    result = _check(["--json", "--root", str(tmp_path), "--env", "LD_LIBRARY_PATH=/opt/cudnn/lib",
                     "--env", "CUDA_HOME=/opt/cuda"], env={"LD_LIBRARY_PATH": "/elsewhere"})
    doc = json.loads(result.stdout)
    assert doc["facts"]["loader"]["ld_library_path"] == ["/opt/cudnn/lib"]
    assert doc["facts"]["windows"] is None


def test_root_with_windows_system32_is_read_as_drive_c(tmp_path):
    (tmp_path / "Windows" / "System32").mkdir(parents=True)
    result = _check(["--no-color", "--root", str(tmp_path), "--env", r"PATH=C:\nothing"])
    assert "read as drive C: of a Windows machine" in result.stdout
    assert "CD150" in result.stdout and "ld.so" not in result.stdout  # Linux-only rules stay silent


# --- the scenarios on NVIDIA's real DLLs ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    kinds = {"cudnn9": win_files(*WIN_CUDNN9), "cudnn8": win_files(*WIN_CUDNN8),
             "cudart12": win_files(*WIN_CUDART12), "cudart11": win_files(*WIN_CUDART11)}
    if any(v is None for v in kinds.values()):
        pytest.skip("NVIDIA's win_amd64 wheels could not be downloaded (offline?)")
    work = tmp_path_factory.mktemp("realwin")
    (work / "zlib32" / "bin").mkdir(parents=True)  # NVIDIA's own 32-bit DLL, named like zlib's
    shutil.copyfile(kinds["cudart11"] / "bin" / "cudart32_110.dll", work / "zlib32" / "bin" / "zlibwapi.dll")
    kinds["zlib32"] = work / "zlib32"
    if winfakes.available() is None:  # an older cuDNN 9 than any wheel here: compiled, with its own version
        kinds["cudnn9-old"] = winfakes.build_kind("cudnn9-old", work / "old")
        kinds["ort-cu11"] = winfakes.build_kind("ort-cu11", work / "ort")  # no real ORT DLL: a stand-in
    return kinds


# scenario -> (exit code, {finding id: severity}, {file name: version check reports})
EXPECT = {
    "dl4j-manual-copy": (1, {"CD150": "error"}, {"cudnn64_9.dll": "9.1.0.70", "cudnn_graph64_9.dll": "9.1.0"}),
    "installer-bin-only": (1, {"CD150": "error", "CD650": "error"}, {"cudnn64_9.dll": "9.1.0.70"}),
    "cudnn89-no-zlib": (1, {"CD150": "error", "CD652": "error"}, {"cudnn64_8.dll": "8.9.5.29"}),
    "two-copies-wrong-order": (1, {"CD150": "error", "CD651": "error", "CD653": "warning", "CD450": "warning"},
                               {"cudnn64_9.dll": "9.0.0.312"}),
    "torch-bundle-shadowed": (1, {"CD150": "error", "CD653": "warning", "CD654": "info"},
                              {"cudnn64_9.dll": "9.1.0.70"}),
    "zlib-32bit": (1, {"CD150": "error", "CD652": "error"}, {"zlibwapi.dll": None}),
    "ort-needs-cudnn8": (1, {"CD150": "error", "CD654": "warning", "CD655": "error"}, {"cudnn64_9.dll": "9.1.0.70"}),
}


@pytest.mark.realdata
@pytest.mark.parametrize("name", winkit.SCENARIOS)
def test_scenario_on_real_nvidia_dlls(real, name, tmp_path):
    if name in ("two-copies-wrong-order", "torch-bundle-shadowed", "ort-needs-cudnn8") and "cudnn9-old" not in real:
        pytest.skip("the older cuDNN 9 copy and the ONNX Runtime stand-in are compiled with mingw-w64, not installed")
    drive = tmp_path / "C"
    scenario = winkit.build(name, drive, lambda kind: real[kind])
    args = ["--json", "--root", str(drive)] + [a for kv in scenario.env.items() for a in ("--env", "%s=%s" % kv)]
    result = _check(args)
    doc = json.loads(result.stdout)
    code, findings, versions = EXPECT[name]
    got = {f["id"]: f["severity"] for f in doc["findings"]}
    assert result.exit_code == code, result.stdout
    assert got == findings, [(f["id"], f["title"]) for f in doc["findings"]]
    dlls = {d["path"].rsplit("\\", 1)[-1]: d for d in doc["facts"]["windows"]["dlls"]}
    for dll, version in versions.items():
        if version is not None:
            assert any(d["version"] == version for d in doc["facts"]["windows"]["dlls"]
                       if d["path"].lower().endswith("\\" + dll)), (dll, dlls.get(dll))
    for f in doc["findings"]:
        assert "sudo" not in f["fix"] and "ldconfig" not in f["fix"], f  # Windows fixes only
        remedy = f["remedy"]
        if remedy["commands"]:  # commands on a Windows drive are PowerShell, each read whole and shown in the line
            assert remedy["shell"] == "powershell", f
            for command in remedy["commands"] + [remedy["doctor"]]:
                quoted_arguments(command)  # fails on what PowerShell would not read
            assert "; ".join(remedy["commands"]) in remedy["text"], f
            if any("'Machine')" in c for c in remedy["commands"]):
                assert remedy["root"], f  # the machine-wide PATH: an administrator shell
        else:
            assert remedy["manual"], f  # words only: the manual way, for a person to do


@pytest.mark.realdata
def test_real_versions_and_fallbacks(real, tmp_path):
    """Versions as NVIDIA's DLLs carry them; cudnn_graph64_9.dll 9.1.0 has no version resource."""
    drive = tmp_path / "C"
    scenario = winkit.build("installer-bin-only", drive, lambda kind: real[kind])
    from cudnn_doctor.diagnose import collect_facts

    facts = collect_facts(str(drive), scenario.env)
    by_name = {d.path.rsplit("\\", 1)[-1]: d for d in facts.windows.dlls}
    assert by_name["cudnn64_9.dll"].version_source == "PE version resource"
    assert by_name["cudnn_graph64_9.dll"].version == "9.1.0"
    assert by_name["cudnn_graph64_9.dll"].version_source.startswith("cudnn_version.h beside it")
    assert by_name["cudnn_cnn64_9.dll"].imports[:2] == ["cudnn_ops64_9.dll", "cudnn_graph64_9.dll"]
    assert by_name["cudart64_12.dll"].version == "12.4.127"
    tk = facts.toolkits[0]
    assert tk.version == "12.4.127" and tk.path == r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4"
    copy = facts.cudnn[0]
    assert copy.cuda_version == "12.4" and copy.header_path.endswith(r"include\12.4\cudnn_version.h")


def test_check_help_documents_root_and_env():
    result = _check(["--help"])
    assert "--env" in result.stdout and "Windows/System32" in result.stdout


# --- the native runner used on Windows (no select on pipes, no process groups): runs anywhere -----------------

CHILD = r'''
import json, os, sys, time
tasks = json.loads(sys.stdin.read())
for i, t in enumerate(tasks):
    print(json.dumps({"task": i, "state": "start"}), flush=True)
    if t["op"] == "hang":
        time.sleep(60)
    if t["op"] == "crash":
        os._exit(7)
    print(json.dumps({"task": i, "result": {"echo": t["op"]}}), flush=True)
'''


def test_portable_runner_survives_hangs_and_crashes(tmp_path):
    from cudnn_doctor.native.portable import run_native_portable

    script = tmp_path / "child.py"
    script.write_text(CHILD)
    groups = [[{"op": "a"}, {"op": "hang"}, {"op": "b"}], [{"op": "crash"}, {"op": "c"}]]
    out = run_native_portable(groups, timeout=8, task_timeout=1, envs=[{}, {}], script=str(script))
    assert out[0][0] == {"echo": "a"} and out[0][1] == {"timeout": 1} and out[0][2] == {"echo": "b"}
    assert out[1][0] == {"crashed": "exit status 7"} and out[1][1] == {"echo": "c"}


def test_a_drive_without_env_ignores_this_process_posix_path(tmp_path, monkeypatch):
    from cudnn_doctor.diagnose import collect_facts

    (tmp_path / "Windows" / "System32").mkdir(parents=True)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    facts = collect_facts(str(tmp_path))
    assert facts.windows.path == [] and facts.host.platform == "windows"


def test_tensorflow_after_2_10_on_native_windows_is_flagged(tmp_path):
    (tmp_path / "Windows" / "System32").mkdir(parents=True)
    dist = tmp_path / "Python311" / "Lib" / "site-packages" / "tensorflow-2.15.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.15.0\n\n")
    (tmp_path / "Python311" / "python.exe").write_bytes(b"MZ")
    result = _check(["--json", "--root", str(tmp_path), "--env", r"PATH=C:\Python311"])
    found = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert "CD703" in found and "WSL2" in found["CD703"]["fix"]


def test_a_copy_missing_sub_libraries_everywhere_gets_an_install_fix(tmp_path):
    """Only cudnn64_9.dll was copied: its sub-libraries are nowhere, so the fix installs cuDNN 9."""
    if winfakes.available() is not None:
        pytest.skip(winfakes.available())
    kind = winfakes.build_kind("cudnn9", tmp_path / "fake")
    drive = tmp_path / "C"
    winkit.base(drive)
    winkit.put(drive, kind, ["cudnn64_9.dll"], r"C:\app\bin")
    result = _check(["--json", "--root", str(drive), "--env", r"PATH=C:\app\bin"])
    found = [f for f in json.loads(result.stdout)["findings"] if f["id"] in ("CD650", "CD450")]
    assert {f["id"] for f in found} == {"CD650", "CD450"}, found
    cd650 = next(f for f in found if f["id"] == "CD650")
    assert "cudnn_graph64_9.dll" in cd650["title"] and "no copy on this machine has it" in cd650["title"]
    assert "Copy-Item bin\\cudnn*.dll 'C:\\app\\bin'" in cd650["fix"] and "9.1.0" in cd650["fix"]


@pytest.mark.realdata
def test_pip_wheel_copy_is_versioned_and_not_put_on_path(real, tmp_path):
    """A pip wheel's cuDNN is the frameworks' own: versioned from its DLLs and its wheel, never a PATH fix."""
    drive = tmp_path / "C"
    winkit.base(drive)
    site = r"C:\Python311\Lib\site-packages"
    winkit.put(drive, real["cudnn9"], winkit.CUDNN9, site + r"\nvidia\cudnn\bin")
    dist = winkit.win_to_host(drive, site + r"\nvidia_cudnn_cu12-9.1.0.70.dist-info")
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n\n")
    (winkit.win_to_host(drive, r"C:\Python311") / "python.exe").write_bytes(b"MZ")
    doc = json.loads(_check(["--json", "--root", str(drive), "--env", r"PATH=C:\Python311"]).stdout)
    copy = doc["facts"]["cudnn"][0]
    assert (copy["origin"], copy["version"], copy["cuda_version"]) == ("pip", "9.1.0.70", "12")
    assert copy["package"] == "nvidia-cudnn-cu12 9.1.0.70"
    assert {f["id"] for f in doc["findings"]} == {"CD150"}


@pytest.mark.parametrize("kind, version", [("driver536", "536.67"), ("driver456", "456.71")])
def test_driver_version_from_nvcuda_dll_feeds_the_driver_rules(tmp_path, kind, version):
    if winfakes.available() is not None:
        pytest.skip(winfakes.available())
    drive = tmp_path / "C"
    winkit.base(drive)
    winkit.put(drive, winfakes.build_kind(kind, tmp_path / kind), ["nvcuda.dll"], r"C:\Windows\System32")
    cudart = winfakes.build_kind("cudart12", tmp_path / "rt")
    tk = winkit.toolkit(drive, "12.4.127", cudart, "cudart64_12.dll")
    doc = json.loads(_check(["--json", "--root", str(drive), "--env", "PATH=%s\\bin" % tk]).stdout)
    assert doc["facts"]["driver"]["version"] == version
    ids = {f["id"]: f for f in doc["findings"]}
    assert "CD150" not in ids
    if version == "456.71":  # CUDA 12.4 needs a newer driver on Windows
        assert "CD301" in ids and "sudo" not in ids["CD301"]["fix"], ids.get("CD301")
    else:
        assert "CD301" not in ids


@pytest.mark.parametrize("path_names_x64", [False, True])
def test_cuda_13_keeps_its_runtime_in_bin_x64_which_path_must_name(tmp_path, path_names_x64):
    """CUDA 13.0 moved the toolkit's DLLs to bin\\x64 (pytorch#162383; cuda-pathfinder searches it first); its runtime
    is found there, and a PATH that names only bin cannot load cudart64_13.dll (CD656, its folder put on PATH)."""
    if winfakes.available() is not None:
        pytest.skip(winfakes.available())
    drive = tmp_path / "C"
    winkit.base(drive)
    winkit.put(drive, winfakes.build_kind("driver536", tmp_path / "drv"), ["nvcuda.dll"], r"C:\Windows\System32")
    cudart = winfakes.build_kind("cudart13", tmp_path / "rt")
    tk = winkit.toolkit(drive, "13.0.48", cudart, "cudart64_13.dll", dlls="bin\\x64")
    path = "%s\\bin;%s" % (tk, "%s\\bin\\x64" % tk if path_names_x64 else r"C:\Windows\System32")
    doc = json.loads(_check(["--json", "--root", str(drive), "--env", "PATH=%s" % path]).stdout)
    toolkit = doc["facts"]["toolkits"][0]
    assert toolkit["cudart_path"] == tk + "\\bin\\x64\\cudart64_13.dll" and toolkit["version"] == "13.0.48"
    ids = {f["id"]: f for f in doc["findings"]}
    if path_names_x64:
        assert "CD656" not in ids
    else:
        assert tk + "\\bin\\x64" in ids["CD656"]["title"], ids.get("CD656")
        assert ids["CD656"]["remedy"]["commands"] == [
            "[Environment]::SetEnvironmentVariable('Path', [Environment]::GetEnvironmentVariable('Path', 'Machine') "
            "+ ';' + '%s\\bin\\x64', 'Machine')" % tk]
