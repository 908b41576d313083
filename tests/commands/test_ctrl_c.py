"""Ctrl-C ends any command with one line on stderr and exit 130 (the shell's 128 + SIGINT): never a traceback, never
the silent 130 typer answers on its own."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudnn_doctor import cli

REPO = Path(__file__).resolve().parents[2]
LINE = "cudnn-doctor: interrupted\n"


def _waiting_on_stdin(pid: int) -> bool:
    """Whether the process sleeps in a read of its stdin pipe (Linux names the kernel function it waits in)."""
    try:
        return "pipe" in Path("/proc/%d/wchan" % pid).read_text()  # pipe_read, anon_pipe_read, pipe_wait
    except OSError:
        return False


def _as_a_terminal_starts_it() -> None:
    """SIGINT as an interactive shell leaves it: a suite started in the background of a script (`cmd &`) inherits it
    ignored, and Python keeps an inherited SIG_IGN, so Ctrl-C would never reach the command under test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not os.path.exists("/proc/self/wchan"), reason="needs Linux's /proc/PID/wchan")
@pytest.mark.parametrize("args", [["explain"], ["explain", "-", "--json"]])
def test_sigint_while_explain_reads_stdin_says_one_line_and_exits_130(args):
    proc = subprocess.Popen([sys.executable, "-m", "cudnn_doctor", *args], cwd=str(REPO), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)), preexec_fn=_as_a_terminal_starts_it)
    try:
        deadline = time.monotonic() + 60
        while not _waiting_on_stdin(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None and _waiting_on_stdin(proc.pid), "explain never waited on stdin"
        proc.send_signal(signal.SIGINT)
        # Wait with stdin still open: communicate() would close it at once, and under load the read could see that
        # end of file before the signal (an empty paste, exit 2) instead of the interruption being tested.
        proc.wait(timeout=30)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err, out) == (130, LINE, "")


def test_ctrl_c_inside_a_command_run_in_process(monkeypatch, capsys):
    from cudnn_doctor.commands import check

    def interrupted(options, early):
        raise KeyboardInterrupt

    monkeypatch.setattr(check, "run_check", interrupted)
    with pytest.raises(SystemExit) as stop:
        cli.main(["check", "--env", "PATH=/x"])
    assert stop.value.code == 130 and capsys.readouterr().err == LINE


def test_ctrl_c_before_the_command_runs(monkeypatch, capsys):
    """While the app is built (the command's imports): the same line."""
    def interrupted(only=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_app", interrupted)
    with pytest.raises(SystemExit) as stop:
        cli.main(["matrix"])
    assert stop.value.code == 130 and capsys.readouterr().err == LINE


def test_a_command_that_says_its_own_interruption_is_not_said_twice(monkeypatch, capsys):
    """install and rollback catch the signal themselves, say what state they left and exit 128+N (their line only)."""
    from cudnn_doctor import ui
    from cudnn_doctor.commands import check

    monkeypatch.setattr(check, "run_check", lambda options, early: ui.error_exit("interrupted by SIGINT; ...", 130))
    with pytest.raises(SystemExit) as stop:
        cli.main(["check", "--env", "PATH=/x"])
    assert stop.value.code == 130 and capsys.readouterr().err == "cudnn-doctor: error: interrupted by SIGINT; ...\n"
