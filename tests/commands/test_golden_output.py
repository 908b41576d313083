"""Golden files: the exact output of `check` (human, JSON, verbose, GitHub, Prometheus) and `install` on fixed fake
machines, so a refactor proves it changed no byte a user or a parser sees.

After an intended change, rewrite them with ``CUDNN_DOCTOR_UPDATE_GOLDEN=1 python -m pytest
tests/commands/test_golden_output.py`` and review the diff. Only what differs between two runs is normalised: the
temporary folder, timings, time stamps and the installer's history entry names (time and process id).

The JSON's `rules_run` is not written out: it is every check-stage rule in registry order (asserted here on every
machine, and pinned by tests/rules/test_rule_registry.py), so a new rule changes no golden file. Nor does a new
optional fact: the JSON's facts are compared with their empty fields dropped (None, "", [], {}, and False where that
is the field's default), so a field a machine leaves empty is in no golden file (tests/commands/test_schemas.py
checks every field against schema/), and `facts.searched` is a placeholder, so a probe that reads one more place
changes none either (the verbose goldens still count each probe's places).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import json
import os
import platform
import re
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest

import archive_factory as af
import test_check_on_fake_machines as sm
from clirunner import CliRunner
from kit import FakeMachine, have_gcc, ldconfig_available

from cudnn_doctor import model, model_image, model_windows
from cudnn_doctor.cli import app

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")
# The files were recorded on x86_64 as root, where glibc's ldconfig writes each fake root's ld.so.cache; elsewhere
# the same machines read differently (no cache, another architecture), so they are not compared there.
recorded_here = pytest.mark.skipif(not ldconfig_available() or platform.machine() != "x86_64",
                                   reason="golden files are recorded on x86_64 as root (ldconfig writes the caches)")

GOLDEN = Path(__file__).parent.parent / "golden"
UPDATE = os.environ.get("CUDNN_DOCTOR_UPDATE_GOLDEN") == "1"


def _windows_tensorflow(root: Path) -> List[str]:
    (root / "Windows" / "System32").mkdir(parents=True)
    dist = root / "Python311" / "Lib" / "site-packages" / "tensorflow-2.15.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorflow\nVersion: 2.15.0\n\n")
    (root / "Python311" / "python.exe").write_bytes(b"MZ")
    return ["--env", r"PATH=C:\Python311"]


def _windows_bare(root: Path) -> List[str]:
    (root / "Windows" / "System32").mkdir(parents=True)
    return ["--env", r"PATH=C:\nothing"]


def _no_driver(m: FakeMachine) -> None:
    m.mkdir("/usr/lib/x86_64-linux-gnu")


# name -> (builder, environment, extra arguments, whether to also render verbose/github/prometheus)
LINUX: Dict[str, Tuple[Callable, Dict[str, str], List[str], bool]] = {
    "cuda12.4-cudnn9.1-a100": (sm.cuda12_cudnn9, {}, [], True),
    "cuda11.8-cudnn8.9-a100": (sm.cuda11_cudnn8, {}, [], False),
    "cuda13.0-cudnn9.14-h100-require": (sm.cuda13_cudnn9_cc90, {}, ["--require", "cudnn>=9,<10",
                                                                      "--require", "cc>=9.0"], False),
    "dl4j-cuda10.2-cudnn7.6": (sm.dl4j_pair("10.2.89", "7.6.5", "440.33", 10020), {},
                               ["--for", "dl4j==1.0.0-beta6"], False),
    "no-driver": (_no_driver, {}, [], False),
    "module-not-built": (sm.a1_module_missing, {}, [], False),
    "driver-library-mismatch": (sm.a4_mismatch, {}, [], True),
    "gpu-too-old-for-cudnn": (sm.b2_gpu_too_old, {}, [], False),
    "driver-too-old": (sm.c1_driver_too_old, {}, [], False),
    "stub-libcuda": (sm.c3_stub, {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}, [], False),
    "cudnn-mixed-versions": (sm.d3_mixed, {}, [], False),
    "tf-built-with-newer-cudnn": (sm.e1_tf_older_runtime, {}, [], False),
    "ld-library-path-shadows-torch": (sm.e2_shadowed, {"LD_LIBRARY_PATH": "/opt/cudnn/lib64"}, [], True),
    "ld-library-path-stray-colon": (lambda m: m.driver(), {"LD_LIBRARY_PATH": "/opt/cudnn/lib64:"}, [], False),
    "conflicting-pins": (sm.g4_pins, {}, [], False),
    "javacpp-preset-needs-cudnn7": (sm.g7_javacpp, {}, [], False),
    "container-without-gpu": (sm.h1_container, {}, [], False),
    "wsl-native-driver-wins": (sm.h4_wsl_native_driver, {"LD_LIBRARY_PATH": sm.MA}, [], False),
    "conda-cudnn-too-old": (sm.i1_conda, {"CONDA_PREFIX": "/opt/conda"}, [], True),
    "policy-require-unmet": (sm.cuda12_cudnn9, {}, ["--require", "cudnn>=9.5"], False),
}
WINDOWS: Dict[str, Callable[[Path], List[str]]] = {
    "windows-tensorflow-after-2.10": _windows_tensorflow,
    "windows-system32-only": _windows_bare,
}
FORMATS = {"human": [], "json": ["--json"]}
EXTRA_FORMATS = {"verbose": ["-v"], "github": ["--format", "github"], "prometheus": ["--format", "prometheus"]}

_JSON_TIMINGS = re.compile(r'("(?:duration_s|started_at|ms|first_result_ms|cache_mtime)": )("[^"]*"|[-0-9.e]+)')
_JSON_TIMING_TABLE = re.compile(r'"timings_ms": \{[^}]*\}')
_PROMETHEUS_TIMES = re.compile(r"^(cudnn_doctor_(?:check_duration_seconds|last_run_timestamp_seconds)) \S+$", re.M)
_HISTORY_ENTRY = re.compile(r"\d{8}T\d{6}-\d+")
_RULES_RUN = re.compile(r'"rules_run": (\[[^\]]*\])')
RULES_RUN = '"rules_run": "<every check-stage rule, in registry order>"'


def _rules_run(match: "re.Match[str]") -> str:
    """The placeholder, once the list is seen to be what test_rule_registry pins: every check rule, in order."""
    from cudnn_doctor.rules import CHECK, registered

    assert json.loads(match.group(1)) == [r.id for r in registered(CHECK)]
    return RULES_RUN


def normalise(text: str, tmp: Path) -> str:
    text = text.replace(str(tmp), "<TMP>")
    text = _JSON_TIMINGS.sub(r'\1"<varies>"', text)
    text = _JSON_TIMING_TABLE.sub('"timings_ms": "<varies>"', text)
    text = _PROMETHEUS_TIMES.sub(r"\1 <varies>", text)
    text = _RULES_RUN.sub(_rules_run, text)
    return _HISTORY_ENTRY.sub("<STAMP>", text)


_EMPTY: Tuple[Any, ...] = (None, "", [], {})
SEARCHED = "<the places each probe searched>"


def _lean(value: Any, tp: Any) -> Any:
    """``value`` (the JSON of a ``tp``) without the empty fields of its objects; a mapping's own keys are data and
    stay (an environment variable set to "" is a fact)."""
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) is typing.Union:
        return _lean(value, args[0] if len(args) == 1 else Any)
    if isinstance(value, list):
        return [_lean(v, args[0] if args else Any) for v in value]
    if not isinstance(value, dict):
        return value
    if typing.get_origin(tp) in (dict, typing.Dict):
        return {k: _lean(v, args[1] if len(args) == 2 else Any) for k, v in value.items()}
    if not (dataclasses.is_dataclass(tp) or typing.is_typeddict(tp)):
        return value
    hints, defaults = _fields(tp)
    lean = {k: _lean(v, hints.get(k, Any)) for k, v in value.items()}
    return {k: v for k, v in lean.items() if v not in _EMPTY and not (v is False and defaults.get(k) is False)}


@functools.lru_cache(maxsize=None)
def _fields(tp: Any) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """A dataclass's (or TypedDict's) field types and defaults; model.py names the Windows and image facts only for
    the type checker, so their modules are the namespace too."""
    namespace = {**vars(model_windows), **vars(model_image), **vars(sys.modules[tp.__module__])}
    defaults = {f.name: f.default for f in dataclasses.fields(tp)} if dataclasses.is_dataclass(tp) else {}
    return typing.get_type_hints(tp, namespace), defaults


def lean_facts(text: str) -> str:
    """A JSON report's text with its facts' empty fields dropped and `searched` as a placeholder (the verbose goldens
    count each probe's places; the rest as render/envelope.py writes it)."""
    head, newline, body = text.partition("\n")
    try:
        data = json.loads(body)
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get("facts"), dict):
        return text
    data["facts"] = _lean(data["facts"], model.Facts)
    if "searched" in data["facts"]:  # where each probe looked: a probe reading one more place changes no golden file
        data["facts"]["searched"] = SEARCHED
    return head + newline + json.dumps(data, indent=2, sort_keys=True) + body[len(body.rstrip("\n")):]


def compare(name: str, text: str) -> None:
    path = GOLDEN / name
    if name.endswith(".json.txt"):
        text = lean_facts(text)
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), "no golden file %s: run with CUDNN_DOCTOR_UPDATE_GOLDEN=1" % path
    expected = path.read_text(encoding="utf-8")
    assert text == expected, "output of %s changed (rewrite with CUDNN_DOCTOR_UPDATE_GOLDEN=1 if intended)" % name


def _check(root: Path, args: List[str], env: Dict[str, str]) -> str:
    """The typer app's output; for the JSON report, the console script's too (cli.main, which also starts the
    native child early) must be the same. Both parse with the same app and differ only in how the probes start, so
    the report that carries every fact is the one compared; the other formats render those facts."""
    line = ["check", "--no-color", "--timeout", "120", "--root", str(root), *args]
    result = CliRunner().invoke(app, line, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    typed = "exit %d\n%s" % (result.exit_code, result.stdout)
    if "--json" in args:
        assert normalise(_plain(line, env), root) == normalise(typed, root), "cli.main printed another report"
    return typed


def _plain(line: List[str], env: Dict[str, str]) -> str:
    """``line`` run by cli.main, as the console script runs it."""
    from unittest import mock

    from cudnn_doctor import cli

    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            pytest.raises(SystemExit) as stop:
        cli.main(line)
    out.flush()
    return "exit %d\n%s" % (stop.value.code, out.buffer.getvalue().decode("utf-8"))


@recorded_here
@pytest.mark.parametrize("name", sorted(LINUX))
def test_check_output_of_a_linux_machine_is_unchanged(tmp_path, name):
    build, env, args, extra = LINUX[name]
    machine = FakeMachine(tmp_path / "root")
    build(machine)
    formats = dict(FORMATS, **(EXTRA_FORMATS if extra else {}))
    for fmt, fmt_args in formats.items():
        compare("%s.%s.txt" % (name, fmt), normalise(_check(machine.root, args + fmt_args, env), tmp_path))


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_check_output_of_a_windows_drive_is_unchanged(tmp_path, name):
    drive = tmp_path / "C"
    args = WINDOWS[name](drive)
    for fmt, fmt_args in FORMATS.items():
        compare("%s.%s.txt" % (name, fmt), normalise(_check(drive, args + fmt_args, {}), tmp_path))


@recorded_here
def test_install_output_is_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict",
                        lambda cudnn, built, toolkit: (True, "accepted by the test"))
    machine = FakeMachine(tmp_path / "root")
    for fmt, fmt_args in FORMATS.items():
        home = machine.p(machine.toolkit("12.4.1" if fmt == "human" else "12.6.1"))
        archive = af.make("linux-xz", tmp_path / ("dl-" + fmt))
        result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke", *fmt_args,
                           env={af.MACHINE_ENV: str(machine.root)})
        text = "exit %d\n%s\n--- stderr\n%s" % (result.exit_code, result.stdout, result.stderr)
        compare("install-cuda-home.%s.txt" % fmt, normalise(text, tmp_path))


REAL_WINDOWS = ["dl4j-manual-copy", "installer-bin-only", "cudnn89-no-zlib", "zlib-32bit"]


@pytest.fixture(scope="module")
def real_windows_dlls(tmp_path_factory):
    import shutil

    from realdata import WIN_CUDART11, WIN_CUDART12, WIN_CUDNN8, WIN_CUDNN9, win_files

    kinds = {"cudnn9": win_files(*WIN_CUDNN9), "cudnn8": win_files(*WIN_CUDNN8),
             "cudart12": win_files(*WIN_CUDART12), "cudart11": win_files(*WIN_CUDART11)}
    if any(v is None for v in kinds.values()):
        pytest.skip("NVIDIA's win_amd64 wheels could not be downloaded (offline?)")
    zlib = tmp_path_factory.mktemp("zlib32")
    (zlib / "bin").mkdir()
    shutil.copyfile(kinds["cudart11"] / "bin" / "cudart32_110.dll", zlib / "bin" / "zlibwapi.dll")
    kinds["zlib32"] = zlib
    return kinds


@pytest.mark.realdata
@pytest.mark.parametrize("name", REAL_WINDOWS)
def test_check_output_of_a_windows_drive_with_nvidia_dlls_is_unchanged(real_windows_dlls, tmp_path, name):
    import winkit

    drive = tmp_path / "C"
    scenario = winkit.build(name, drive, lambda kind: real_windows_dlls[kind])
    args = [a for kv in scenario.env.items() for a in ("--env", "%s=%s" % kv)]
    for fmt, fmt_args in dict(FORMATS, verbose=["-v"]).items():
        compare("windows-%s.%s.txt" % (name, fmt), normalise(_check(drive, args + fmt_args, {}), tmp_path))
