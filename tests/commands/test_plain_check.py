"""A plain `check` line, run as the console script runs it (cli.main, the one parser: typer), reaches the run with
the options the line says, and ends as typer's standalone mode ends it (exit code, --json error envelope, closed
stdout)."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

from cudnn_doctor import cli, ui
from cudnn_doctor.commands.check_run import CheckOptions

REPO = Path(__file__).resolve().parents[2]


def options_of(monkeypatch, args: List[str], code: int = 0) -> CheckOptions:
    """The CheckOptions cli.main hands the run for ``args`` (the run itself replaced)."""
    from cudnn_doctor.commands import check

    seen: List[CheckOptions] = []
    monkeypatch.setattr(check, "run_check", lambda options, early: seen.append(options) or code)
    monkeypatch.setattr(cli, "_early_native", lambda args: None)  # the native child of the real machine
    with pytest.raises(SystemExit) as stop:
        cli.main(args)
    assert stop.value.code == code and len(seen) == 1, args
    return seen[0]


@pytest.mark.parametrize("args, expected", [
    (["check"], CheckOptions()),
    (["check", "--json"], CheckOptions(as_json=True)),
    (["check", "-vv", "--strict", "--root=/", "--timeout", "120"], CheckOptions(verbose=2, strict=True, timeout=120)),
    (["check", "-vq", "--format", "github", "--skip", "CD8*", "--skip=CD1*", "--for", "torch"],
     CheckOptions(verbose=1, quiet=1, fmt="github", skip=["CD8*", "CD1*"], target="torch")),
    (["check", "--env", "PATH=/x", "--require", "cudnn>=9,<10", "--node-name", "n1", "--no-color"],
     CheckOptions(env=["PATH=/x"], require=["cudnn>=9,<10"], node_name="n1", color=False)),
])
def test_a_plain_line_reaches_the_run_with_its_options(monkeypatch, args, expected):
    assert options_of(monkeypatch, args) == expected


def test_the_root_flags_are_set_for_the_run_and_reset_after_it(monkeypatch):
    """--no-color before `check` reaches ui.console for the run only."""
    from cudnn_doctor.commands import check

    seen = []
    monkeypatch.setattr(check, "run_check", lambda options, early: seen.append(ui.ROOT_OPTIONS.get()) or 3)
    with pytest.raises(SystemExit) as stop:
        cli.main(["--no-color", "check", "--env", "PATH=/x"])
    assert stop.value.code == 3 and seen == [ui.RootFlags(color=False)]
    assert ui.ROOT_OPTIONS.get() == ui.RootFlags()


def run(*args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", *args], cwd=str(REPO), env=full,
                          capture_output=True, text=True, timeout=120)


def test_a_bad_root_under_json_says_one_line_and_prints_the_envelope(tmp_path):
    missing = str(tmp_path / "nope")
    done = run("check", "--json", "--root", missing)
    assert done.returncode == 2
    assert done.stderr == "cudnn-doctor: error: --root %s does not exist\n" % missing
    assert json.loads(done.stdout)["error"] == "--root %s does not exist" % missing


def test_a_closed_stdout_exits_1_quietly(monkeypatch):
    """EPIPE while rendering (`check | head -1`): exit 1 with later flushes silenced, as click's standalone mode
    ends it."""
    from cudnn_doctor.commands import check

    def broken(options, early):
        raise OSError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(check, "run_check", broken)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    with pytest.raises(SystemExit) as stop:
        cli.main(["check", "--env", "PATH=/x"])
    assert stop.value.code == 1
    assert type(sys.stdout).__name__ == "PacifyFlushWrapper"
