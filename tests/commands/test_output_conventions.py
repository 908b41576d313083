"""Ecosystem conventions: stdout vs stderr, colour only where it belongs, -v/-q, stable JSON, no tracebacks."""
from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from clirunner import CliRunner

from cudnn_doctor import ui
from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[25];[0-9;]+)m")  # a foreground colour code
runner = CliRunner()


def _env(**changes: Optional[str]) -> Dict[str, str]:
    """This (hermetic) environment, with this checkout importable whether or not it is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("CUDNN_DOCTOR_DEBUG", None)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _command() -> List[str]:
    """The installed console script when this environment has one, else `python -m cudnn_doctor`."""
    installed = Path(sys.executable).parent / "cudnn-doctor"
    return [str(installed)] if installed.is_file() else [sys.executable, "-m", "cudnn_doctor"]


@pytest.fixture(autouse=True)
def _no_debug_env(monkeypatch):
    # A developer's own CUDNN_DOCTOR_DEBUG must not turn a test's one-line error into a traceback.
    monkeypatch.delenv("CUDNN_DOCTOR_DEBUG", raising=False)


@pytest.fixture
def root(tmp_path) -> Path:
    """A bare fake machine: no driver, no toolkit, so check has findings to print but needs no gcc."""
    import kit

    m = kit.FakeMachine(tmp_path / "root")
    m.mkdir("/usr/lib")
    return m.root


# --- ui.want_color: flag > NO_COLOR > FORCE_COLOR > TERM=dumb > isatty ---------------------------


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize("flag, env, tty, expected", [
    (None, {}, True, True),
    (None, {}, False, False),
    (None, {"TERM": "dumb"}, True, False),
    (None, {"FORCE_COLOR": "1", "TERM": "dumb"}, False, True),
    (None, {"NO_COLOR": "1"}, True, False),
    (None, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
    (None, {"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
    (True, {"NO_COLOR": "1", "TERM": "dumb"}, False, True),
    (False, {"FORCE_COLOR": "1"}, True, False),
])
def test_want_color_precedence(monkeypatch, flag, env, tty, expected):
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert ui.want_color(_Stream(tty), flag) is expected


def test_closed_or_odd_streams_mean_no_colour(monkeypatch):
    monkeypatch.delenv("TERM", raising=False)
    closed = io.StringIO()
    closed.close()
    assert ui.want_color(closed) is False
    assert ui.want_color(object()) is False  # type: ignore[arg-type]


def test_console_forced_colour_survives_term_dumb(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("FORCE_COLOR", "1")
    buf = _Stream(False)
    monkeypatch.setattr(sys, "stdout", buf)
    ui.console().print("[red]x[/red]")
    assert COLOUR.search(buf.getvalue())


def test_console_without_colour_writes_no_escape_codes_even_to_a_terminal(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    buf = _Stream(True)
    monkeypatch.setattr(sys, "stdout", buf)
    ui.console().print("[bold red]x[/bold red]")
    assert buf.getvalue() == "x\n"


# --- streams ------------------------------------------------------------------------------------


def test_report_on_stdout_nothing_on_stderr(root):
    result = runner.invoke(app, ["check", "--root", str(root)])
    assert "NVIDIA driver" in result.stdout and result.stderr == ""


def test_json_stdout_is_exactly_one_document(root):
    result = runner.invoke(app, ["check", "--json", "--root", str(root)])
    doc = json.loads(result.stdout)
    assert doc["exit_code"] == result.exit_code and result.stderr == ""


def test_usage_errors_go_to_stderr_only(tmp_path):
    for args in (["check", "--root", str(tmp_path / "missing")], ["check", "--format", "xml", "--root",
                                                                   str(tmp_path)], ["check", "--frobnicate"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and result.stdout == "" and result.stderr, args
        assert "Traceback" not in result.stderr


def test_help_and_version_go_to_stdout():
    for args in (["--help"], ["--version"], ["check", "--help"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and result.stdout and result.stderr == "", args


def test_lookup_commands_report_on_stdout_and_keep_json_width_free():
    """matrix and explain --no-check read only bundled data: report on stdout, stderr empty, JSON the same at any width."""
    for args in (["matrix", "--cuda", "12.4"], ["explain", "--no-check", "libcudnn_ops_infer.so.8: cannot open"]):
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1) and result.stdout.strip() and result.stderr == "", (args, result.output)
        assert not ANSI.search(result.stdout)
        docs = [runner.invoke(app, args + ["--json"], env={"COLUMNS": c}).stdout for c in ("40", "200")]
        assert docs[0] == docs[1] and json.loads(docs[0])["command"] == args[0]


def test_root_color_flags_are_values_that_end_with_their_command(root, monkeypatch):
    """`cudnn-doctor --color check` colours that one run; it writes nothing into os.environ (which child processes
    would inherit) and the next command in the same process decides afresh."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    before = dict(os.environ)
    coloured = runner.invoke(app, ["--color", "check", "--root", str(root)])
    assert ANSI.search(coloured.stdout) and dict(os.environ) == before
    plain = runner.invoke(app, ["check", "--root", str(root)])
    assert not ANSI.search(plain.stdout)  # not a terminal, and the earlier --color is gone
    assert ANSI.search(runner.invoke(app, ["--no-color", "check", "--root", str(root), "--color"]).stdout)  # own wins


# --- -v / -q ----------------------------------------------------------------------------------


def test_verbose_and_quiet_levels(root):
    def out(*flags: str) -> Tuple[str, int]:
        result = runner.invoke(app, ["check", "--root", str(root), "--no-color", *flags])
        return result.stdout, result.exit_code

    normal, code = out()
    verbose, vcode = out("-v")
    quiet, qcode = out("-q")
    silent, scode = out("-qq")
    assert code == vcode == qcode == scode
    assert len(verbose.splitlines()) > len(normal.splitlines()) > len(quiet.splitlines()) > 0
    heads = re.compile(r"^\[[✓·!✗]\] ", re.M)  # the section marks
    assert heads.search(normal) and heads.search(verbose) and not heads.search(quiet)
    assert silent == ""
    # -q keeps every problem (errors and warnings) from the normal report.
    for line in normal.splitlines():
        if re.match(r"^  [✗!] CD\d+", line):
            assert line in quiet.splitlines()


# --- JSON does not depend on the terminal -----------------------------------------------------


def _strip_timings(doc):
    if isinstance(doc, dict):
        return {k: _strip_timings(v) for k, v in doc.items() if k not in ("timings_ms", "started_at", "duration_s")}
    if isinstance(doc, list):
        return [_strip_timings(v) for v in doc]
    return doc


def test_json_is_width_and_terminal_independent(root):
    docs = []
    for columns, extra in (("40", {}), ("200", {"FORCE_COLOR": "1"})):
        proc = subprocess.run(_command() + ["check", "--json", "--root", str(root)], capture_output=True,
                              text=True, timeout=120, env=_env(COLUMNS=columns, **extra))
        assert proc.returncode in (0, 1), proc.stderr
        assert "\x1b[" not in proc.stdout
        docs.append(proc.stdout)
    first, second = (_strip_timings(json.loads(d)) for d in docs)
    assert first == second
    # And the text itself, timings aside, is byte-identical: no wrapping, no width-dependent layout.
    times = r'"timings_ms": \{[^}]*\}|"started_at": "[^"]*"|"duration_s": [0-9.]+'
    assert re.sub(times, "", docs[0]) == re.sub(times, "", docs[1])


# --- no traceback without --debug ---------------------------------------------------------------


def _boom(*args, **kwargs):
    raise RuntimeError("probe exploded")


def test_internal_error_is_one_line_and_exit_3(monkeypatch, capsys, root):
    import cudnn_doctor.diagnose as check_mod
    from cudnn_doctor.cli import main

    monkeypatch.setattr(check_mod, "collect_facts", _boom)
    with pytest.raises(SystemExit) as exc:
        main(["check", "--root", str(root)])
    captured = capsys.readouterr()
    assert exc.value.code == 3
    assert captured.err.count("\n") == 1 and "RuntimeError: probe exploded" in captured.err
    assert "--debug" in captured.err and "Traceback" not in captured.err + captured.out


def test_debug_shows_the_traceback(monkeypatch, root):
    import cudnn_doctor.diagnose as check_mod
    from cudnn_doctor.cli import main

    monkeypatch.setenv("CUDNN_DOCTOR_DEBUG", "")  # restored afterwards, since --debug sets it
    monkeypatch.setattr(check_mod, "collect_facts", _boom)
    with pytest.raises(RuntimeError, match="probe exploded"):
        main(["--debug", "check", "--root", str(root)])


CRASH = ("import sys, cudnn_doctor.diagnose as c\n"
         "def boom(*a, **k): raise RuntimeError('probe exploded')\n"
         "c.collect_facts = boom\n"
         "from cudnn_doctor.cli import main\nmain()\n")


@pytest.mark.parametrize("debug", [False, True])
def test_internal_error_in_a_real_process(root, debug):
    args = (["--debug"] if debug else []) + ["check", "--root", str(root)]
    proc = subprocess.run([sys.executable, "-c", CRASH] + args, capture_output=True, text=True, timeout=120,
                          env=_env())
    if debug:
        assert proc.returncode == 1 and "Traceback (most recent call last)" in proc.stderr
        assert "RuntimeError: probe exploded" in proc.stderr
    else:
        assert proc.returncode == 3 and proc.stdout == ""
        assert proc.stderr.startswith("cudnn-doctor: internal error: RuntimeError: probe exploded")
        assert proc.stderr.count("\n") == 1


# --- colour in a real terminal, and not in a pipe -----------------------------------------------


def _run_in_pty(args: List[str], env: Dict[str, str]) -> Tuple[int, str]:
    """Run with stdout and stderr on a pseudo-terminal; return (exit code, what the terminal received)."""
    import pty  # noqa: F401  (POSIX only; the import documents the dependency)

    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env,
                                close_fds=True)
    finally:
        os.close(slave)
    chunks = []
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed its end of the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
    code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8", "replace")


def _run_piped(args: List[str], env: Dict[str, str]) -> Tuple[int, str]:
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    return proc.returncode, proc.stdout


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a POSIX pseudo-terminal")
def test_colour_only_where_it_belongs(root):
    """The command as a user runs it: coloured in a terminal, plain in a pipe, and the variables obeyed."""
    args = _command() + ["check", "--root", str(root)]
    term = _env(TERM="xterm-256color", NO_COLOR=None, FORCE_COLOR=None)

    code, tty_out = _run_in_pty(args, term)
    assert code in (0, 1) and "NVIDIA driver" in tty_out and COLOUR.search(tty_out), tty_out

    pcode, piped = _run_piped(args, term)
    assert pcode == code and "NVIDIA driver" in piped and not ANSI.search(piped)

    _, no_color = _run_in_pty(args, dict(term, NO_COLOR="1"))
    assert "NVIDIA driver" in no_color and not ANSI.search(no_color)

    _, dumb = _run_in_pty(args, dict(term, TERM="dumb"))
    assert "NVIDIA driver" in dumb and not ANSI.search(dumb)

    _, forced = _run_piped(args, dict(term, FORCE_COLOR="1"))
    assert COLOUR.search(forced)

    _, flag = _run_in_pty(args + ["--no-color"], term)
    assert "NVIDIA driver" in flag and not ANSI.search(flag)

    # The same words either way: colour is decoration, never content.
    assert [ln.strip() for ln in ANSI.sub("", tty_out).splitlines() if ln.strip()][:3] == \
           [ln.strip() for ln in piped.splitlines() if ln.strip()][:3]


# --- python -m -------------------------------------------------------------------------------


def test_python_dash_m_is_the_command(root):
    """`python -m cudnn_doctor` against the console script (or the call the script makes): same output, same code,
    but for the words each form names itself by in a fix (issue 29: `sudo /abs/python -m cudnn_doctor ...` or
    `sudo /abs/bin/cudnn-doctor ...`), which are put back to `cudnn-doctor` before comparing."""
    via_m = [sys.executable, "-m", "cudnn_doctor"]
    installed = Path(sys.executable).parent / "cudnn-doctor"
    script = [str(installed)] if installed.is_file() else [
        sys.executable, "-c", "import sys; from cudnn_doctor.cli import main; sys.argv[0] = 'cudnn-doctor'; main()"]
    for args in (["--version"], ["--help"], ["check", "--help"], ["check", "--json", "--root", str(root)],
                 ["check", "--root", str(root), "-v"], ["check", "--frobnicate"]):
        got = [subprocess.run(cmd + args, capture_output=True, text=True, timeout=120, env=_env())
               for cmd in (via_m, script)]
        for proc in got:
            for words in ("%s -m cudnn_doctor" % sys.executable, str(installed)):
                proc.stdout = proc.stdout.replace(words, "cudnn-doctor")
        assert got[0].returncode == got[1].returncode, (args, got[0].stderr, got[1].stderr)
        if "--json" in args:
            assert _strip_timings(json.loads(got[0].stdout)) == _strip_timings(json.loads(got[1].stdout))
        else:
            assert got[0].stdout == got[1].stdout and got[0].stderr == got[1].stderr, args
    assert "Usage: cudnn-doctor check" in got[0].stderr and got[0].returncode == 2
