"""Probes stay within their own budget: a FIFO, socket or device where a library belongs is never handed to the
native child, CD002 names only the call that stalled, and CD003 names the path met first, then what it resolved to."""
from __future__ import annotations

import os
import socket
import stat

import pytest
from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

from kit import Gpu

MA = "/usr/lib/x86_64-linux-gnu"
TK = "/usr/local/cuda-13.0"


@pytest.fixture
def sent_to_child(monkeypatch):
    """Every library path the run hands to the native child."""
    from cudnn_doctor.native.session import NativeSession

    sent, real = [], NativeSession.submit

    def submit(self, tasks):
        sent.extend(str(t.get("lib")) for t in tasks)
        return real(self, tasks)

    monkeypatch.setattr(NativeSession, "submit", submit)
    return sent


def _cudart(machine):
    [lib] = [p for p in machine.p(TK + "/lib64").iterdir() if p.name.startswith("libcudart.so.13.") and
             not p.is_symlink()]
    return lib


def _replace(path, kind):
    path.unlink()
    if kind == "fifo":
        os.mkfifo(str(path))
    elif kind == "socket":
        here = os.getcwd()
        os.chdir(str(path.parent))  # a socket's path must fit 108 bytes: bind the bare name
        try:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(path.name)
            sock.close()
        finally:
            os.chdir(here)
    elif kind == "slash":
        os.symlink("/", str(path))
    elif kind == "device":
        try:
            os.mknod(str(path), stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
        except PermissionError:
            pytest.skip("making a device node needs root")


@pytest.mark.parametrize("kind, what", [("fifo", "named pipe (FIFO)"), ("socket", "socket"),
                                        ("device", "character device"), ("slash", "folder")])
def test_a_non_file_library_is_never_sent_to_the_native_child(gpu_machine, check_json, sent_to_child, kind, what):
    lib = _cudart(gpu_machine)
    _replace(lib, kind)
    code, doc = check_json(gpu_machine, "--timeout", "10")
    assert not any(os.path.realpath(p) == os.path.realpath(str(lib)) or p == str(lib) for p in sent_to_child)
    assert not [f for f in doc["findings"] if f["id"] == "CD002"]  # nothing stalled: nothing was waited for
    [cd003] = [f for f in doc["findings"] if f["id"] == "CD003"]
    assert cd003["evidence"]["kind"] == what
    inside = TK + "/lib64/" + lib.name
    assert inside in (cd003["evidence"]["path"], cd003["evidence"]["resolved"]) or kind == "slash"
    assert doc["facts"]["cudnn"]  # the other native calls still ran


def test_a_link_resolving_to_slash_is_named_by_its_own_path(gpu_machine, check_json):
    _replace(_cudart(gpu_machine), "slash")
    code, doc = check_json(gpu_machine)
    [cd003] = [f for f in doc["findings"] if f["id"] == "CD003"]
    assert cd003["evidence"]["resolved"] == "/" and cd003["evidence"]["path"].startswith("/usr/local/cuda")
    assert cd003["title"].startswith(cd003["evidence"]["path"] + " (resolves to /) is a folder")


def test_cd002_names_only_the_call_that_stalled(gpu_machine, check_json):
    """The toolkit's libcudart hangs in its load; cuDNN's call, queued behind it, never started: not blamed."""
    lib = _cudart(gpu_machine)
    lib.unlink()
    gpu_machine.lib(TK + "/lib64/" + lib.name, "cudnn", soname="libcudart.so.13", HANG_ON_LOAD=True)
    code, doc = check_json(gpu_machine, "--timeout", "3")
    stalled = [f["evidence"] for f in doc["findings"] if f["id"] == "CD002" and f["evidence"].get("path")]
    assert [(e["probe"], e["path"]) for e in stalled] == [("toolkits", TK + "/lib64/" + lib.name)], stalled
    assert doc["incomplete"] is True


@given(kinds=st.lists(st.sampled_from(["fifo", "socket", "slash", "device", "file"]), min_size=1, max_size=3))
@budget(8)
def test_any_mix_of_odd_libraries_never_reaches_the_child(tmp_path_factory, kinds):
    from clirunner import CliRunner

    from kit import FakeMachine, have_gcc

    from cudnn_doctor.cli import app
    from cudnn_doctor.native.session import NativeSession

    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    m = FakeMachine(tmp_path_factory.mktemp("odd") / "root")
    m.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.cudnn("9.14.0", MA, None, cuda=13000)
    libs = sorted(p for p in m.p(MA).iterdir() if p.name.startswith("libcudnn") and not p.is_symlink())
    odd = []
    for lib, kind in zip(libs, kinds):
        if kind != "file":
            _replace(lib, kind)
            odd.append(str(lib))
    sent, real = [], NativeSession.submit
    NativeSession.submit = lambda self, tasks: (sent.extend(str(t.get("lib")) for t in tasks), real(self, tasks))[1]
    try:
        result = CliRunner().invoke(app, ["check", "--json", "--root", str(m.root), "--timeout", "10"])
    finally:
        NativeSession.submit = real
    assert result.exit_code in (0, 1, 4), result.output
    assert not set(odd) & {os.path.realpath(p) for p in sent}
