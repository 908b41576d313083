"""compat/theano.toml against Theano's own source: each release's sdist from PyPI is read (and its configuration
parser run) and must agree with every row; skipped when PyPI cannot be reached."""
from __future__ import annotations

import ast
import re
import shlex
import warnings
from pathlib import Path
from typing import Dict, Set

import pytest
from hypothesis import given, settings, strategies as st
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudnn_doctor.readers.theano_config import effective, parse_flags, parse_rc, rc_files
from hermetic import shipped_compat
from theano_sdist import RELEASES, sdist_tree

COMPAT = shipped_compat()


def tree(version: str) -> Path:
    found = sdist_tree(version)
    if found is None:
        pytest.skip("Theano %s's sdist cannot be downloaded from PyPI here" % version)
    return found


def strings(path: Path) -> Set[str]:
    """Every string literal of a Python file (adjacent literals joined, as Python joins them)."""
    with warnings.catch_warnings():  # Theano's source has escapes newer Pythons warn about
        warnings.simplefilter("ignore")
        module = ast.parse(path.read_text())
    return {node.value for node in ast.walk(module) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def function_source(path: Path, name: str) -> str:
    text = path.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = ast.parse(text)
    node = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return ast.get_source_segment(text, node)


@pytest.mark.parametrize("version", RELEASES)
def test_release_row_agrees_with_the_source(version):
    root = tree(version)
    row = COMPAT.theano_release(version)
    assert row is not None and row["theano"] == version
    assert "Theano %s (" % version in (root / "NEWS.txt").read_text()[:400]  # the release notes open with it
    defaults = (root / "theano/configdefaults.py").read_text()
    # The back-ends: the old one's code (1.0 keeps only an __init__.py that refuses), and gpuarray's cuDNN module.
    assert ("cuda" in row["backends"]) == (root / "theano/sandbox/cuda/dnn.py").exists()
    assert ("gpuarray" in row["backends"]) == (root / row["gpuarray_dir"] / "dnn.py").exists()
    assert ("'lib.cnmem'" in defaults) == row["lib_cnmem"]
    refuses_gpu = COMPAT.theano_config()["old_backend_text"] in " ".join(strings(root / "theano/configdefaults.py"))
    assert refuses_gpu == (row["device_gpu"] == "removed")
    if row["device_gpu"] == "deprecated":
        assert any("The cuda backend is deprecated" in s for s in strings(root / "theano/sandbox/cuda/__init__.py"))
    enabled = re.search(r"AddConfigVar\('dnn\.enabled',.*?(?:EnumStr|StrParam)\(([^)]*)\)", defaults, re.S)
    assert [s.strip().strip("\"'") for s in enabled.group(1).split(",")] == row["dnn_enabled"]
    assert ("AddConfigVar('dnn.base_path'" in defaults) == (row["dnn_paths"] == "dnn.base_path")
    root_fn = "get_cuda_root" if "def get_cuda_root" in defaults else "default_cuda_root"
    env_vars = re.findall(r"os\.getenv\('([A-Z_]+)'", function_source(root / "theano/configdefaults.py", root_fn))
    assert env_vars == row["cuda_root_env"]


def _thresholds(path: Path, backend: str) -> Dict[str, int]:
    text = path.read_text()
    if backend == "cuda":
        refuse = re.search(r"v\[0\] < (\d+)", text)
        warn = re.search(r"cudnn_version (>=|>) (\d+)", text)
        out = {"refuse_below": int(refuse.group(1))}
        if warn:
            out["warn_from"] = int(warn.group(2)) + (1 if warn.group(1) == ">" else 0)
        return out
    check = function_source(path, "_dnn_check_version")
    out = {"refuse_below": int(re.search(r"if v < (\d+)", check).group(1))}
    warn = re.search(r"if v (>=|>) (\d+)", check)
    if warn:
        out["warn_from"] = int(warn.group(2)) + (1 if warn.group(1) == ">" else 0)
    volta = re.search(r"version\(\) < (\d+):\s*\n\s*if int\(ctx\.bin_id\[-2:\]\) >= 70", text)
    if volta:
        out["volta_min"] = int(volta.group(1))
    return out


@pytest.mark.parametrize("version", RELEASES)
def test_cudnn_checks_agree_with_the_source(version):
    root = tree(version)
    for backend in COMPAT.theano_release(version)["backends"]:
        row = COMPAT.theano_cudnn_check(version, backend)
        assert row is not None, (version, backend)
        path = root / row["check_file"]
        found = _thresholds(path, backend)
        assert found == {k: row[k] for k in ("refuse_below", "warn_from", "volta_min") if k in row}, (version, backend)
        texts = strings(path)
        for key in ("refuse_text", "warn_text", "volta_text"):
            if key in row:
                assert row[key] in texts, (version, backend, key)


@pytest.mark.parametrize("version", RELEASES)
def test_removed_cudnn_functions_are_called_by_that_release(version):
    root = tree(version)
    rows = [r for table in ("cudnn_api_removed",) for r in COMPAT.table("theano", table)["rows"]
            if Version(version) in SpecifierSet(r["theano"])]
    assert {r["backend"] for r in rows} == set(COMPAT.theano_release(version)["backends"])
    for row in rows:
        assert re.search(r"\b%s\s*\(" % row["function"], (root / row["file"]).read_text()), (version, row)


def test_config_table_agrees_with_configparser():
    for version in RELEASES:
        source = (tree(version) / "theano/configparser.py").read_text()
        table = COMPAT.theano_config()
        assert "os.getenv('%s', '%s').split(os.pathsep)" % (table["rc_env"], table["rc_default"]) in source
        assert "sys.platform == \"win32\"" in source and "'%s'" % table["rc_windows_extra"] in source
        assert 'os.getenv("%s", "")' % table["flags_env"] in source
        assert "key.rsplit('.', 1)" in source  # section.option split at the last dot
    newest = tree("1.0.5")
    assert COMPAT.theano_config()["unknown_flag_text"].replace("%s", "{0}") in strings(
        newest / "theano/configdefaults.py")
    assert COMPAT.theano_config()["mixed_text"] in strings(newest / "theano/gpuarray/dnn.py")


def _theano_function(version: str, name: str, env: Dict[str, str]):
    """One function of Theano's own configparser.py, run as Theano runs it (its module globals stubbed)."""
    path = tree(version) / "theano/configparser.py"
    namespace: Dict[str, object] = {"shlex": shlex, "sys": type("S", (), {"platform": "linux"}),
                                    "TheanoConfigWarning": type("W", (), {"warn": staticmethod(lambda *a, **k: None)})}
    fake_os = type("O", (), {"getenv": staticmethod(lambda k, d=None: env.get(k, d)), "pathsep": ":",
                             "path": type("P", (), {"expanduser": staticmethod(
                                 lambda p: env["HOME"] + p[1:] if p.startswith("~/") or p == "~" else p)})})
    namespace["os"] = fake_os
    exec(compile(function_source(path, name), str(path), "exec"), namespace)  # noqa: S102 - Theano's own code
    return namespace[name]


flag_text = st.lists(st.tuples(st.sampled_from(["device", "dnn.enabled", "dnn.library_path", "lib.cnmem", "x"]),
                               st.text(alphabet="ab/ .=,'\"0", max_size=8), st.booleans()), max_size=5)


@settings(max_examples=150, deadline=None)
@given(flag_text)
def test_flags_split_like_theano_itself(items):
    theano_parse = _theano_function("1.0.5", "parse_config_string", {})
    text = ",".join("%s=%s" % (k, v) if with_value else k for k, v, with_value in items)
    try:
        expected = theano_parse(text)
    except ValueError:  # an unbalanced quote: Theano's import fails; ours reports it
        assert parse_flags(text)[1] is not None
        return
    assert parse_flags(text) == (expected, None)


@pytest.mark.parametrize("theanorc", [None, "~/.theanorc", "/etc/theanorc:~/.theanorc", "~/a:~/b:/c"])
def test_rc_files_like_theano_itself(theanorc):
    env = {"HOME": "/home/u"} if theanorc is None else {"HOME": "/home/u", "THEANORC": theanorc}
    for version in ("0.8.2", "1.0.5"):
        files = _theano_function(version, "config_files_from_theanorc", env)()
        assert rc_files(theanorc, "/home/u") == files


@pytest.mark.parametrize("version,backends", [("0.9.0", ["cuda", "gpuarray"]), ("1.0.5", ["gpuarray"])])
def test_probe_reads_a_real_pip_install(machine, check_json, version, backends):
    """The sdist installed by pip itself (its own dist-info and tree), copied into a machine's site-packages."""
    import shutil

    from theano_sdist import installed_tree

    installed = installed_tree(version)
    if installed is None:
        pytest.skip("Theano %s cannot be installed from PyPI here" % version)
    site = machine.mkdir("/usr/lib/python3/dist-packages")
    for entry in installed.iterdir():
        if entry.name.lower().startswith("theano"):
            shutil.copytree(entry, site / entry.name, symlinks=True)
    machine.file("/root/.theanorc", "[global]\ndevice = cuda0\n")
    _, doc = check_json(machine, "--env", "HOME=/root", "--env", "PATH=/usr/bin")
    [inst] = doc["facts"]["theano"]["installs"]
    assert inst["version"] == version and inst["backends"] == backends
    assert inst["metadata"].endswith(".dist-info")
    [info] = [f for f in doc["findings"] if f["id"] == "CD760"]
    assert "finds no cuDNN" in info["title"]  # nothing else on this machine


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=12)
       .filter(lambda v: v == v.strip()))  # Theano strips each key=value pair: no value can end in a space
def test_a_printed_flags_line_gives_theano_the_value(value):
    """The export line a fix prints, run by bash, then split by Theano's own parser, yields the value unchanged."""
    import subprocess

    from cudnn_doctor.model_theano import TheanoFacts
    from cudnn_doctor.remedies import theano_flags_line

    theano_parse = _theano_function("1.0.5", "parse_config_string", {})
    for before in (None, "device=cuda0"):
        line = theano_flags_line(TheanoFacts(flags=before), {"dnn.library_path": value})
        env = {"PATH": "/usr/bin:/bin", **({"THEANO_FLAGS": before} if before else {})}
        out = subprocess.run(["bash", "-ec", line + '\nprintf "%s" "$THEANO_FLAGS"'], capture_output=True,
                             text=True, env=env, check=True).stdout
        assert theano_parse(out)["dnn.library_path"] == value, (line, out)


ini_line = st.one_of(
    st.sampled_from(["[global]", "[dnn]", "[dnn.conv]", "[lib]", "", "# a comment"]),
    st.builds("{} = {}".format, st.sampled_from(["device", "library_path", "enabled", "cnmem", "algo_fwd"]),
              st.text(alphabet="abc/%()s01 .", max_size=10)))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(ini_line, max_size=8), min_size=1, max_size=2), flag_text)
def test_settings_are_what_theano_itself_looks_up(tmp_path_factory, files, flags):
    """parse_rc + effective against Theano's own fetch_val_for_key over the same files and flags."""
    import configparser

    folder = tmp_path_factory.mktemp("rc")
    paths = []
    for i, lines in enumerate(files):
        path = folder / ("rc%d" % i)
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    defaults = {"USER": "ann", "LSCRATCH": "", "TMPDIR": "", "TEMP": "", "TMP": "", "PID": "0"}
    flag_line = ",".join("%s=%s" % (k, v) if with_value else k for k, v, with_value in flags)
    ours_flags, error = parse_flags(flag_line)
    if error:
        return  # Theano's import fails on an unbalanced quote; test_flags_split_like_theano_itself covers it
    ours, problems = parse_rc([(p, Path(p).read_text()) for p in paths], defaults)
    theirs_cfg, theirs_raw = configparser.ConfigParser(defaults), configparser.RawConfigParser()
    try:
        theirs_cfg.read(paths)
        theirs_raw.read(paths)
    except configparser.Error:
        assert problems  # Theano cannot be imported with these files, and we say so
        return
    assert not problems
    fetch = _theano_function("1.0.5", "fetch_val_for_key", {})
    fetch.__globals__.update(THEANO_FLAGS_DICT=dict(ours_flags), theano_cfg=theirs_cfg, theano_raw_cfg=theirs_raw,
                             ConfigParser=configparser)
    keys = {k for k in ours} | set(ours_flags) | {"device", "dnn.library_path", "dnn.conv.algo_fwd", "lib.cnmem"}
    for key in keys:
        try:
            expected = fetch(key)
        except KeyError:
            expected = None
        got = effective(ours_flags, ours, key)
        assert (got[0] if got else None) == expected, key


@pytest.mark.parametrize("version,record", [("0.9.0", "generated_version.py"), ("1.0.5", "_version.py")])
def test_a_theano_folder_without_metadata_says_its_version(machine, check_json, version, record):
    """A source tree's theano/ copied into site-packages (no dist-info): the version its own files record."""
    import shutil

    site = machine.mkdir("/usr/local/lib/python3.6/site-packages")
    shutil.copytree(tree(version) / "theano", site / "theano")
    _, doc = check_json(machine, "--env", "HOME=/root", "--env", "PATH=/usr/bin")
    [inst] = doc["facts"]["theano"]["installs"]
    assert inst["version"] == version and inst["metadata"].endswith("/theano/" + record)


def test_explain_patterns_are_theanos_own_words():
    files = ("theano/configdefaults.py", "theano/configparser.py", "theano/gpuarray/dnn.py",
             "theano/sandbox/gpuarray/dnn.py", "theano/sandbox/cuda/__init__.py", "theano/sandbox/cuda/dnn_base.c")
    said = []
    for version in RELEASES:
        root = tree(version)
        for rel in files:
            if (root / rel).exists():
                path = root / rel
                said.append(" ".join(strings(path)) if rel.endswith(".py") else path.read_text())
    text = "\n".join(said)
    for symptom in COMPAT.data["theano"]["symptom"]:
        for pattern in symptom["patterns"]:
            if pattern.startswith("re:"):
                continue  # the compiler's words, not Theano's
            # Theano fills in the flag's name: 'for configuration variable "%s"', 'this flag: {0}'.
            template = pattern.replace('"dnn.enabled"', '"%s"').replace("flag: lib.cnmem", "flag: {0}")
            assert template in text, (symptom["id"], pattern)
