"""`check`'s plain path (cli.main runs plain command lines without typer, commands/check_argv.py) reads every line
it takes exactly as typer does, hands every other line to typer, and ends a run the way typer's standalone mode
would (exit code, --json error envelope, closed stdout). The oracle is typer itself, on generated command lines;
tests/commands/test_golden_output.py runs every golden machine through both paths."""
from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from fuzz_support import budget
from hypothesis import example, given
from hypothesis import strategies as st

from cudnn_doctor import cli
from cudnn_doctor.commands.check_argv import plain_check
from cudnn_doctor.commands.check_run import CheckOptions

REPO = Path(__file__).resolve().parents[2]

# Words a command line is drawn from: every option the plain path knows, its neighbours it must refuse, and values
# that typer converts, checks or refuses.
OPTIONS = ["--json", "--strict", "--ready", "--smoke", "--color", "--no-color", "-v", "-vv", "-q", "-qq", "-vq",
           "--verbose", "--quiet", "--root", "--node-name", "--format", "--for", "--timeout", "--require", "--skip",
           "--env", "--json=1", "--root=/", "--timeout=5", "--format=json", "--skip=CD1*", "-x", "-vx", "--", "-",
           "--help", "-h", "--debug", "--list-checks", "--image", "-o", "--output-file", "--junit-xml",
           "--verbose=2", "--jso", "check", "smoke"]
VALUES = ["/", "json", "human", "5", "0.05", "1e3", "1_000", " 7 ", "inf", "nan", "-1", "", "x=y", "CD1*",
          "cudnn>=9", "torch", "--json", "-v"]
ROOT = ["--color", "--no-color", "--debug", "--version", "check"]


def typer_reading(args: List[str]) -> Optional[Tuple[Optional[bool], CheckOptions]]:
    """What typer makes of ``args``: (the root --color, check's options), or None where it would not run check."""
    import typer.main

    group = typer.main.get_command(cli.build_app("check"))
    try:
        with group.make_context("cudnn-doctor", list(args), resilient_parsing=False) as ctx:
            rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]
            if not rest or rest[0] != "check":
                return None
            command = group.get_command(ctx, "check")
            with command.make_context("check", rest[1:], parent=ctx) as sub:
                params = sub.params
    except (Exception, SystemExit):  # a usage error, --help, --version, error_exit's typer.Exit
        return None
    options = CheckOptions(**{f.name: params[f.name] for f in dataclasses.fields(CheckOptions)})
    for name in ("env", "require", "skip"):
        setattr(options, name, list(getattr(options, name)))
    return ctx.params.get("color"), options


@given(st.lists(st.sampled_from(ROOT), max_size=2),
       st.lists(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(VALUES)), max_size=8))
@budget(300)
@example([], ["--json"])
@example(["--no-color"], ["--timeout", "120", "--root", "/", "--require", "cudnn>=9,<10", "-v"])
@example([], ["--timeout", "0.05"])
@example([], ["-vq", "--format", "prometheus", "--env", "PATH=C:\\x", "--skip=CD1*"])
def test_a_plain_line_reads_as_typer_reads_it(root, words):
    args = [*root, "check", *words] if "check" not in root else [*root, *words]
    plain = plain_check(args)
    if plain is not None:
        assert plain == typer_reading(args), args


@pytest.mark.parametrize("args", [["check"], ["check", "--json"], ["--no-color", "check", "-v"],
                                  ["check", "--root", "/", "--timeout", "120", "--require", "cudnn>=9", "--json"],
                                  ["check", "--format", "github", "--skip", "CD8*", "--for", "torch"]])
def test_the_usual_lines_take_the_plain_path(args):
    assert plain_check(args) is not None and plain_check(args) == typer_reading(args)


@pytest.mark.parametrize("args", [["check", "--help"], ["--debug", "check"], ["check", "--timeout", "inf"],
                                  ["check", "-o", "r.json", "--json"], ["check", "--root"], ["check", "extra"],
                                  ["check", "--image", "oci:x"], ["smoke"], ["--version"], []])
def test_other_lines_go_the_typer_way(args):
    assert plain_check(args) is None


def run(*args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", *args], cwd=str(REPO), env=full,
                          capture_output=True, text=True, timeout=120)


def test_a_bad_root_under_json_ends_as_typer_ends_it(tmp_path):
    """error_exit inside the plain run: the one line, the --json envelope and exit 2, as through typer (where a
    completion request sends the same line)."""
    missing = str(tmp_path / "nope")
    plain = run("check", "--json", "--root", missing)
    typed = run("check", "--json", "--root", missing, env={cli.COMPLETE_VAR: ""})  # empty: typer runs the line
    assert plain.returncode == typed.returncode == 2
    assert plain.stderr == typed.stderr == "cudnn-doctor: error: --root %s does not exist\n" % missing
    assert json.loads(plain.stdout) == json.loads(typed.stdout)
    assert json.loads(plain.stdout)["error"] == "--root %s does not exist" % missing


def test_the_plain_run_sets_and_resets_the_root_flags(monkeypatch, tmp_path):
    """--no-color before `check` reaches ui.console for the run only, as the typer app's callback does."""
    from cudnn_doctor import ui
    from cudnn_doctor.commands import check_run

    seen = []
    monkeypatch.setattr(check_run, "run_check", lambda options, early: seen.append(ui.ROOT_OPTIONS.get()) or 3)
    monkeypatch.setattr(cli, "build_app", lambda only=None: pytest.fail("the typer app was built"))
    with pytest.raises(SystemExit) as stop:
        cli.main(["--no-color", "check", "--env", "PATH=/x"])
    assert stop.value.code == 3 and seen == [ui.RootFlags(color=False)]
    assert ui.ROOT_OPTIONS.get() == ui.RootFlags()


def test_a_closed_stdout_exits_1_quietly(monkeypatch):
    """EPIPE while rendering: click's standalone mode exits 1 with later flushes silenced; so does the plain run."""
    from cudnn_doctor.commands import check_run

    def broken(options, early):
        raise OSError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(check_run, "run_check", broken)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    with pytest.raises(SystemExit) as stop:
        cli.main(["check", "--env", "PATH=/x"])
    assert stop.value.code == 1
    assert type(sys.stdout).__name__ == "PacifyFlushWrapper"
