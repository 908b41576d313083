"""`check` never hangs: FIFOs where files belong are reported (CD003), a stalled read is abandoned (CD002),
the rest of the report is still produced, and the exit code says the check was incomplete (4)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


MA = "/usr/lib/x86_64-linux-gnu"
REPO = Path(__file__).resolve().parents[2]
HEADER = "/usr/include/x86_64-linux-gnu/cudnn_version.h"

# The five files issue 16 found hanging `check` when each was a FIFO.
FIFO_PLACES = [MA + "/libcudnn_ops.so.9", HEADER, "/usr/local/cuda-13.0/version.json", "/etc/ld.so.conf",
               "/proc/driver/nvidia/version"]


def _check_process(root: Path, *args: str, limit: float = 30.0):
    """`check --root R --json` as a whole process; fails the test (instead of hanging it) past ``limit``."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--root", str(root), "--json", *args],
                          capture_output=True, text=True, env=env, timeout=limit, stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - start


@pytest.mark.parametrize("place", FIFO_PLACES, ids=[os.path.basename(p) for p in FIFO_PLACES])
def test_fifo_where_a_file_belongs_is_reported_not_read(gpu_machine, place):
    target = gpu_machine.p(place)
    assert target.is_file()
    target.unlink()
    os.mkfifo(target)
    proc, took = _check_process(gpu_machine.root, "--timeout", "5")
    assert took < 5 + 3, took  # within its deadline (plus the interpreter's start)
    assert proc.returncode in (1, 4), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["incomplete"] is True and doc["exit_code"] == proc.returncode
    [cd003] = [f for f in doc["findings"] if f["id"] == "CD003"]
    # Named by the path the probe met (a link to the FIFO, say), then what that resolved to (issue 22).
    assert place in (cd003["evidence"]["path"], cd003["evidence"]["resolved"])
    assert cd003["evidence"]["kind"] == "named pipe (FIFO)"
    assert place in cd003["title"] and "ls -l" in cd003["fix"] and str(gpu_machine.root) + place in cd003["fix"]
    # The rest of the report is still there: the driver and the toolkit were still observed.
    assert doc["facts"]["driver"]["version"] == "580.95.05"
    assert doc["facts"]["toolkits"]
    if proc.returncode == 4:
        assert not any(f["severity"] == "error" for f in doc["findings"])


def test_healthy_machine_is_complete(gpu_machine, check_json):
    code, doc = check_json(gpu_machine)
    assert doc["incomplete"] is False and code in (0, 1)
    assert not [f for f in doc["findings"] if f["id"] in ("CD002", "CD003")]


def _hang_on(monkeypatch, part: str) -> threading.Event:
    """Make every open of a path containing ``part`` block until released (a hung NFS read, simulated)."""
    from cudnn_doctor import bounded_io

    release = threading.Event()
    real_open = bounded_io.open_regular

    def open_regular(path):
        if part in path:
            release.wait(60)
        return real_open(path)

    monkeypatch.setattr(bounded_io, "open_regular", open_regular)
    return release


def _check_while_hung(monkeypatch, check_json, machine, part: str, timeout: str):
    """`check --timeout T` while opens of paths containing ``part`` hang: (exit code, report, seconds taken).
    The hung opens are released afterwards, whatever happened."""
    release = _hang_on(monkeypatch, part)
    try:
        start = time.monotonic()
        code, doc = check_json(machine, "--timeout", timeout)
        took = time.monotonic() - start
    finally:
        release.set()
    return code, doc, took


def test_a_read_that_never_returns_is_abandoned(gpu_machine, check_json, monkeypatch):
    code, doc, took = _check_while_hung(monkeypatch, check_json, gpu_machine, "/version.json", "2")
    assert took < 2 + 1.5, took
    [cd002] = [f for f in doc["findings"] if f["id"] == "CD002"]
    assert cd002["evidence"]["probe"] == "toolkits"
    assert cd002["evidence"]["path"] == "/usr/local/cuda-13.0/version.json"
    assert "stat" in cd002["fix"] and "ls -l" in cd002["fix"] and "findmnt" in cd002["fix"]
    assert doc["incomplete"] is True
    # Later probes still ran: the cuDNN copy and the driver are in the report.
    assert [c["version"] for c in doc["facts"]["cudnn"]] == ["9.14.0"]
    assert doc["facts"]["driver"]["version"] == "580.95.05"
    assert code == (1 if any(f["severity"] == "error" for f in doc["findings"]) else 4)


def test_a_budget_spent_leaves_later_probes_named(gpu_machine, check_json, monkeypatch):
    """Two hung places use up the run's budget: what could not start is named too, and the run still ends."""
    # "version": /proc/driver/nvidia/version, the toolkit's version.json, ...
    code, doc, took = _check_while_hung(monkeypatch, check_json, gpu_machine, "version", "1")
    assert took < 1 + 2.5, took
    titles = [f["title"] for f in doc["findings"] if f["id"] == "CD002"]
    assert any("driver probe stalled on /proc/driver/nvidia/version" in t for t in titles), titles
    assert any("toolkits probe stalled on /usr/local/cuda-13.0/version.json" in t for t in titles), titles
    # With the budget spent, later probes are named as not run (or as stalled, if a sliver of time was left).
    assert len(titles) >= 3, titles
    assert doc["incomplete"] is True


def test_exit_code_4_only_without_errors():
    from cudnn_doctor.commands.check_run import exit_code_for
    from cudnn_doctor.model import BlockedPath, Facts, Finding, Severity
    from cudnn_doctor.results import Report

    facts = Facts()
    facts.blocked.append(BlockedPath(probe="cudnn", path="/x", reason="timed-out", seconds=5.0))
    warn = Finding(id="CD002", severity=Severity.WARNING, title="t")
    err = Finding(id="CD501", severity=Severity.ERROR, title="t")
    assert exit_code_for(Report(facts=facts, findings=[warn]), strict=False) == 4
    assert exit_code_for(Report(facts=facts, findings=[warn]), strict=True) == 4
    assert exit_code_for(Report(facts=facts, findings=[warn, err]), strict=False) == 1
    assert exit_code_for(Report(facts=Facts(), findings=[warn]), strict=False) == 0
    assert exit_code_for(Report(facts=Facts(), findings=[warn]), strict=True) == 1


def test_open_regular_refuses_fifo_socket_and_device_without_blocking(tmp_path):
    import socket

    from cudnn_doctor.bounded_io import NotRegularFile, open_regular

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        for path, kind in ((fifo, "named pipe (FIFO)"), (sock_path, "socket"), ("/dev/zero", "character device"),
                           (tmp_path, "folder")):
            with pytest.raises(NotRegularFile) as info:
                open_regular(str(path))
            assert info.value.kind == kind
    finally:
        sock.close()
    (tmp_path / "f").write_bytes(b"abc")
    with open_regular(str(tmp_path / "f")) as fh:
        assert fh.read() == b"abc"


def test_check_help_documents_timeout_and_exit_code_4():
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    out = CliRunner().invoke(app, ["check", "--help"], env={"COLUMNS": "200"}).output
    assert "--timeout" in out and "4 no error found but something could not be checked" in " ".join(out.split())


def test_a_library_whose_load_never_returns_is_named(machine, check_json):
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, None, cuda=13000, HANG_ON_LOAD=True)
    start = time.monotonic()
    code, doc = check_json(machine, "--timeout", "3")
    assert time.monotonic() - start < 3 + 1.5
    [cd002] = [f for f in doc["findings"] if f["id"] == "CD002"]
    assert cd002["evidence"]["probe"] == "cudnn" and cd002["evidence"]["path"].startswith(MA + "/libcudnn.so.9")
    assert doc["incomplete"] is True and code in (1, 4)
    # The steps after the native calls still ran: the loader's choice is in the report.
    assert doc["facts"]["loader"]["paths"]["libcudnn.so.9"] == MA + "/libcudnn.so.9"
