"""Shortcuts taken for speed give the same answers as the long way."""
from __future__ import annotations

import pytest
from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

from kit import Gpu

MA = "/usr/lib/x86_64-linux-gnu"


def test_smoke_finds_the_same_copy_from_the_loader_view_alone(machine):
    from cudnn_doctor import which_cudnn as libraries_cmd
    from cudnn_doctor.diagnose import collect_facts
    from cudnn_doctor.smoke.choose import choose_libraries, driver_library

    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000)
    machine.cudnn("8.9.7", "/opt/old/lib", None, cuda=12020)
    assert machine.ld_cache()
    quick = libraries_cmd._loader_facts(str(machine.root))
    full = collect_facts(str(machine.root), env={"PATH": "/bin"})
    assert choose_libraries(quick) == choose_libraries(full) == [MA + "/libcudnn.so.9"]
    assert driver_library(quick) == driver_library(full) and driver_library(full)


def test_check_json_imports_no_terminal_renderer_and_no_pydantic(machine):
    """A --json run pays for neither rich nor pydantic nor importlib.metadata (issue 12's start-up cost)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "cudnn_doctor", "check", "--json", "--root",
                           str(machine.root)], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(repo)))
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "cudnn_doctor.cli" in modules
    heavy = sorted(m for m in modules if m.split(".")[0] in ("rich", "pydantic", "pydantic_core")
                   or m.startswith("importlib.metadata"))
    assert heavy == []
    # Only the command being run is imported: `check` does not pay for bench, fleet, install, explain or matrix.
    # check_run: the run itself; options, bounds and completion: the typer options' callbacks and value lists
    shared = ("cudnn_doctor.commands", "cudnn_doctor.commands.check", "cudnn_doctor.commands.check_run",
              "cudnn_doctor.commands.options", "cudnn_doctor.commands.bounds", "cudnn_doctor.commands.completion")
    others = sorted(m for m in modules if m.startswith("cudnn_doctor.commands.") and m not in shared)
    assert others == []
    assert not any(m.startswith(("cudnn_doctor.bench", "cudnn_doctor.fleet", "cudnn_doctor.install")) for m in modules)


def test_every_command_is_reached_through_the_lazy_entry_point():
    """main() registers only the named command's module; each name must map to the module that defines it."""
    from cudnn_doctor.cli import COMMANDS, build_app

    import typer.main

    for name in COMMANDS:
        group = typer.main.get_command(build_app(name))
        assert name in group.commands, name
    assert set(typer.main.get_command(build_app()).commands) == set(COMMANDS)


def test_realpath_memo_lives_only_inside_a_snapshot(tmp_path):
    """Host.snapshot resolves each path once; outside it (and after it) a changed link is seen at once."""
    import os

    from cudnn_doctor.host import Host

    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    os.symlink("a", str(tmp_path / "cur"))
    host = Host(str(tmp_path))
    assert host.realpath("/cur") == ("/a", False)
    with host.snapshot():
        assert host.realpath("/cur") == ("/a", False)
        with host.snapshot():  # nested: the outer block's memo stays
            os.remove(str(tmp_path / "cur"))
            os.symlink("b", str(tmp_path / "cur"))
        assert host.realpath("/cur") == ("/a", False)  # the run's snapshot, taken once
    assert host.realpath("/cur") == ("/b", False)  # the memo is gone with the block
    with host.snapshot():
        assert host.realpath("/cur") == ("/b", False)
        assert host.realpath("/missing") == ("/missing", True)


def test_listdir_memo_lives_only_inside_a_snapshot(tmp_path):
    """Host.snapshot lists each folder once (by its real path, whatever link names it); outside it, and after it,
    a new file is seen at once, and a caller changing its list changes no later answer."""
    import os

    from cudnn_doctor.host import Host

    (tmp_path / "lib").mkdir()
    os.symlink("lib", str(tmp_path / "lib64"))
    (tmp_path / "lib" / "a.so").write_text("")
    host = Host(str(tmp_path))
    with host.snapshot():
        names = host.listdir("/lib")
        names.append("mine")
        (tmp_path / "lib" / "b.so").write_text("")
        assert host.listdir("/lib") == host.listdir("/lib64") == ["a.so"]
    assert host.listdir("/lib") == ["a.so", "b.so"]
    with host.snapshot():
        assert host.listdir("/lib64") == ["a.so", "b.so"] and host.listdir("/missing") == []


def test_realpath_memo_changes_no_fact(machine):
    """A whole collect with the memo gives the same facts as one that resolves every path afresh."""
    import contextlib
    import dataclasses
    import json

    from cudnn_doctor.host import Host
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.probes import collect

    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000)
    machine.cudnn("8.9.7", "/opt/old/lib", None, cuda=12020)
    machine.link("/usr/local/cuda", "/opt/old")
    assert machine.ld_cache()

    def facts(memo: bool) -> dict:
        host = Host(str(machine.root), env={"PATH": "/bin"})
        if not memo:
            host.snapshot = contextlib.nullcontext  # every realpath resolves afresh
        out = dataclasses.asdict(collect(host, compat=load_compat()))
        out.pop("timings_ms")
        return json.loads(json.dumps(out, default=str))

    assert facts(memo=True) == facts(memo=False)


def test_version_from_the_console_says_what_the_app_says(capsys):
    """`--version`, before or after the root flags, prints the app's one line."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from typer.testing import CliRunner

    from cudnn_doctor.cli import build_app

    repo = Path(__file__).resolve().parents[2]
    for argv in (["--version"], ["--debug", "--no-color", "--version"]):
        proc = subprocess.run([sys.executable, "-m", "cudnn_doctor"] + argv, capture_output=True,
                              text=True, env=dict(os.environ, PYTHONPATH=str(repo)))
        assert proc.returncode == 0 and proc.stdout.startswith("cudnn-doctor "), proc.stderr[-2000:]
        full = CliRunner().invoke(build_app(), argv)
        assert full.exit_code == 0 and proc.stdout == full.output


def test_rules_are_imported_while_the_native_child_works(monkeypatch, machine):
    """collect runs its ``meanwhile`` on the main thread after the file-system probes (they have sent the native
    child its tasks) and before reading the child's results; a failure there is ignored (the caller meets it
    again)."""
    import threading

    from cudnn_doctor import probes
    from cudnn_doctor.host import Host
    from cudnn_doctor.knowledge import load_compat

    order = []
    monkeypatch.setattr(probes.Context, "run_native", lambda self: order.append("native"))
    from cudnn_doctor.probes import machine_state
    monkeypatch.setattr(machine_state, "probe", lambda ctx: order.append("last file-system probe"))

    def meanwhile():
        order.append("meanwhile on %s" % threading.current_thread().name)
        raise RuntimeError("ignored")

    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    facts = probes.collect(Host(str(machine.root), env={"PATH": "/bin"}), meanwhile=meanwhile, compat=load_compat())
    assert order == ["last file-system probe", "meanwhile on MainThread", "native"] and not facts.probe_errors


def test_version_parsing_memo_answers_as_packaging_does():
    """ver/parse_version/release3 keep a memo keyed on the text alone: the same answers as packaging's."""
    from packaging.version import Version

    from cudnn_doctor.versions import parse_version, release3, ver

    for text in ("9.1.0.70", " 12.4 ", "r580.65.06", "N/A", "", "garbage!", "13", 580):
        for _ in range(2):  # the second answer comes from the memo
            got = ver(text)
            stripped = str(text).strip().lstrip("rR")
            try:
                want = Version(stripped) if stripped and stripped != "N/A" else None
            except Exception:
                want = None
            assert got == want and (got is None or str(got) == str(want))
    assert parse_version("9.1.0") is parse_version(" 9.1.0") and parse_version("x.y") is None
    assert release3("9.19.0.56") == Version("9.19.0") and release3("9") == Version("9.0.0")


# A tree of folders, files and links (relative, absolute, dangling, looping, through ".."), and the paths asked of it.
_NAMES = ["a", "b", "c", "lib", ".", "..", ""]
_ENTRIES = st.lists(st.tuples(st.sampled_from(["dir", "file", "link"]), st.lists(st.sampled_from(_NAMES[:4]),
                                                                                   min_size=1, max_size=3),
                              st.lists(st.sampled_from(_NAMES), min_size=0, max_size=4), st.booleans()),
                    max_size=12)


@pytest.mark.live  # the shortcut is the live root's: the tree sits in a temporary folder of this machine
@given(_ENTRIES, st.lists(st.lists(st.sampled_from(_NAMES), max_size=6), min_size=1, max_size=12))
@budget(200)
def test_the_live_realpath_in_a_snapshot_is_os_realpath(tmp_path_factory, entries, asked):
    """On the live root a snapshot resolves a path from its folder's remembered answer and one lstat of the last
    name; whatever was asked before, the answer is os.path.realpath's (and its dangling flag os.path.exists's)."""
    import os

    from cudnn_doctor.host import Host

    base = str(tmp_path_factory.mktemp("tree"))
    for kind, where, target, absolute in entries:
        path = os.path.join(base, *where)
        try:
            if kind == "dir":
                os.makedirs(path, exist_ok=True)
            elif kind == "file":
                with open(path, "w"):
                    pass
            else:
                os.symlink((base + "/" if absolute else "") + "/".join(target), path)
        except OSError:
            pass  # a parent that is a file, a name taken: the tree is what it is
    host = Host("/")
    with host.snapshot():
        for words in asked:
            path = base + "/" + "/".join(words)
            real = os.path.realpath(path)
            assert host.realpath(path) == (real, not os.path.exists(real)), path
