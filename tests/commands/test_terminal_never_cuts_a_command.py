"""A terminal never gets a fix cut in two (issue 29, item 2): `check` in a real pseudo-terminal 60 columns wide
prints every command of every fix, and every URL, whole on one line (the terminal folds a long line for the eye;
a paste of it is still one command)."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from typing import List

import pytest

import test_check_on_fake_machines as scenarios
from kit import FakeMachine

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_URL = re.compile(r"https?://\S+")
COLUMNS = 60


def _run(args: List[str], env: dict, tty: bool) -> str:
    """`python -m cudnn_doctor ARGS`, in a pseudo-terminal of COLUMNS columns when ``tty``."""
    command = [sys.executable, "-m", "cudnn_doctor"] + args
    if not tty:
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180).stdout
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, COLUMNS, 0, 0))
    child = subprocess.Popen(command, env=env, stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    child.wait(timeout=180)
    os.close(leader)
    return _ANSI.sub("", out.decode("utf-8", "replace")).replace("\r\n", "\n")


@pytest.mark.parametrize("name", ["c1_driver_too_old", "b2_gpu_too_old", "d3_mixed"])
def test_every_command_and_url_is_whole_on_one_line_at_60_columns(tmp_path, name):
    machine = FakeMachine(tmp_path / "root")
    getattr(scenarios, name)(machine)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(COLUMNS=str(COLUMNS), LINES="40", TERM="xterm-256color", PYTHONPATH=os.pathsep.join(sys.path))
    args = ["check", "--root", str(machine.root)]
    doc = json.loads(_run(args + ["--json"], env, tty=False))
    screen = _run(args, env, tty=True)
    lines = screen.splitlines()
    wanted = [c for f in doc["findings"] if f.get("remedy") for c in f["remedy"]["commands"]]
    wanted += [u.rstrip(".,;)`'") for f in doc["findings"] for u in _URL.findall(f.get("fix") or "")]
    assert wanted
    cut = [w for w in wanted if not any(w in line for line in lines)]
    assert cut == [], screen
    assert any(len(line) > COLUMNS for line in lines)  # the report has long lines: the terminal is the narrow one
