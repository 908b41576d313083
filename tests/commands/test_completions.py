"""Shell completions: the committed scripts match the generator, and TAB completion really reaches the program."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMPLETIONS = REPO / "completions"
REGENERATE = "python scripts/gen_completions.py"

sys.path.insert(0, str(REPO / "scripts"))
import gen_completions  # noqa: E402


def _env(**extra: str) -> dict:
    """The test process's (hermetic) environment, with this checkout importable whether or not it is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def bindir(tmp_path_factory) -> Path:
    """A folder holding a `cudnn-doctor` command: the installed console script when this environment has one,
    else a wrapper around `python -m cudnn_doctor`. Either way it runs this checkout's code (PYTHONPATH)."""
    d = tmp_path_factory.mktemp("bin")
    installed = Path(sys.executable).parent / "cudnn-doctor"
    if installed.is_file():
        (d / "cudnn-doctor").symlink_to(installed)
    else:
        wrapper = d / "cudnn-doctor"
        wrapper.write_text('#!/bin/sh\nexec "%s" -m cudnn_doctor "$@"\n' % sys.executable)
        wrapper.chmod(0o755)
    return d


def _commands() -> list:
    import typer

    from cudnn_doctor.cli import app

    return sorted(typer.main.get_command(app).commands)


# --- the committed files ------------------------------------------------------------------------


def test_committed_completions_match_the_generator(tmp_path):
    written = gen_completions.generate(tmp_path)
    assert {p.name for p in written} == {"cudnn-doctor.bash", "_cudnn-doctor", "cudnn-doctor.fish",
                                         "cudnn-doctor.ps1"}
    drift = [p.name for p in written
             if not (COMPLETIONS / p.name).is_file() or (COMPLETIONS / p.name).read_bytes() != p.read_bytes()]
    assert not drift, "completions/%s out of date with the CLI; regenerate with `%s` and commit the result" % (
        ", completions/".join(drift), REGENERATE)


def test_generator_is_deterministic(tmp_path):
    first = {p.name: p.read_bytes() for p in gen_completions.generate(tmp_path / "a")}
    second = {p.name: p.read_bytes() for p in gen_completions.generate(tmp_path / "b")}
    assert first == second


def test_bash_script_parses():
    proc = subprocess.run(["bash", "-n", str(COMPLETIONS / "cudnn-doctor.bash")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("shell, check", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])])
def test_other_shells_parse_when_installed(shell, check):
    if not shutil.which(check[0]):
        pytest.skip("%s is not installed" % shell)
    name = gen_completions.SHELLS[shell][0]
    proc = subprocess.run(check + [str(COMPLETIONS / name)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_zsh_compdef_stays_on_the_first_line():
    assert (COMPLETIONS / "_cudnn-doctor").read_text().splitlines()[0] == "#compdef cudnn-doctor"


# --- the completion protocol --------------------------------------------------------------------


def _complete_bash(bindir: Path, words: str, cword: int) -> list:
    proc = subprocess.run(["cudnn-doctor"], capture_output=True, text=True, timeout=60,
                          env=_env(PATH="%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", "")),
                                   _CUDNN_DOCTOR_COMPLETE="complete_bash", COMP_WORDS=words,
                                   COMP_CWORD=str(cword)))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_protocol_offers_subcommands(bindir):
    assert _complete_bash(bindir, "cudnn-doctor ch", 1) == ["check"]
    assert set(_complete_bash(bindir, "cudnn-doctor ", 1)) >= set(_commands())


def test_protocol_offers_options(bindir):
    offered = _complete_bash(bindir, "cudnn-doctor check --r", 2)
    assert "--root" in offered and "--require" in offered


def test_protocol_through_python_dash_m():
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor"], capture_output=True, text=True, timeout=60,
                          env=_env(_CUDNN_DOCTOR_COMPLETE="complete_bash", COMP_WORDS="cudnn-doctor ch",
                                   COMP_CWORD="1"))
    assert proc.stdout.split() == ["check"]


def test_bash_tab_completion_end_to_end(bindir):
    """Source the committed script in a real bash and press TAB: the shim calls the program back."""
    script = (
        'source "$1"\n'
        'complete -p cudnn-doctor >/dev/null || exit 9\n'
        'COMP_WORDS=(cudnn-doctor ch); COMP_CWORD=1; _cudnn_doctor_completion cudnn-doctor\n'
        'printf "one:%s\\n" "${COMPREPLY[@]}"\n'
        'COMP_WORDS=(cudnn-doctor check --js); COMP_CWORD=2; _cudnn_doctor_completion cudnn-doctor\n'
        'printf "two:%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script, "bash",
                           str(COMPLETIONS / "cudnn-doctor.bash")], capture_output=True, text=True, timeout=60,
                          env=_env(PATH="%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", ""))))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["one:check", "two:--json"], proc.stdout + proc.stderr


# --- typer's own options still work -------------------------------------------------------------


def test_show_completion_prints_the_script(bindir):
    """`cudnn-doctor --show-completion bash` typed in bash prints the same shim we commit."""
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", "cudnn-doctor --show-completion bash; true"],
                          capture_output=True, text=True, timeout=60,
                          env=_env(PATH="%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", ""))))
    assert proc.returncode == 0, proc.stderr
    assert "_CUDNN_DOCTOR_COMPLETE=complete_bash" in proc.stdout
    committed = (COMPLETIONS / "cudnn-doctor.bash").read_text()
    assert proc.stdout.strip() in committed


def test_show_completion_for_a_named_shell():
    for shell in ("zsh", "fish", "powershell"):
        proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "--show-completion", shell],
                              capture_output=True, text=True, timeout=60,
                              env=_env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"))
        assert proc.returncode == 0, proc.stderr
        assert "complete_%s" % shell in proc.stdout
        assert proc.stdout.strip().splitlines()[-1] in (COMPLETIONS / gen_completions.SHELLS[shell][0]).read_text()


def test_install_completion_writes_under_home(bindir, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", "cudnn-doctor --install-completion; true"],
                          capture_output=True, text=True, timeout=60,
                          env=_env(HOME=str(home), PATH="%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", ""))))
    assert proc.returncode == 0, proc.stderr
    assert "completion installed" in proc.stdout
    installed = home / ".bash_completions" / "cudnn-doctor.sh"
    assert "_CUDNN_DOCTOR_COMPLETE=complete_bash" in installed.read_text()
    assert str(installed) in (home / ".bashrc").read_text()


# --- option values, in every shell's protocol -----------------------------------------------------------------


def _complete(shell: str, line: str) -> str:
    """What the program answers the `shell` shim for the command line `line` (TAB pressed at its end)."""
    extra = {"_CUDNN_DOCTOR_COMPLETE": "complete_%s" % shell}
    words = line.split(" ")
    if shell == "bash":
        extra.update(COMP_WORDS=line, COMP_CWORD=str(len(words) - 1))
    else:
        extra["_TYPER_COMPLETE_ARGS"] = line
    if shell == "fish":
        extra["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    if shell == "powershell":
        extra["_TYPER_COMPLETE_WORD_TO_COMPLETE"] = words[-1]
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor"], capture_output=True, text=True, timeout=60,
                          env=_env(**extra))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_option_values_complete_in_every_shell(shell):
    out = _complete(shell, "cudnn-doctor check --format ")
    for value in ("human", "json", "github", "prometheus"):
        assert value in out, (shell, out)
    narrowed = _complete(shell, "cudnn-doctor check --format g")
    assert "github" in narrowed and "human" not in narrowed, (shell, narrowed)
    assert "fp16" in _complete(shell, "cudnn-doctor bench --dtype ")
    cuda = _complete(shell, "cudnn-doctor install --cuda ")
    assert "12" in cuda and "13" in cuda
    assert "8.9.7" in _complete(shell, "cudnn-doctor install --version 8.9")
    assert "CD401" in _complete(shell, "cudnn-doctor check --skip CD40")


def test_bash_tab_completes_an_option_value_end_to_end(bindir):
    script = ('source "$1"\n'
              'COMP_WORDS=(cudnn-doctor check --format j); COMP_CWORD=3; _cudnn_doctor_completion cudnn-doctor\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-c", script, "bash",
                           str(COMPLETIONS / "cudnn-doctor.bash")], capture_output=True, text=True, timeout=60,
                          env=_env(PATH="%s%s%s" % (bindir, os.pathsep, os.environ.get("PATH", ""))))
    assert proc.stdout.split() == ["json"], proc.stdout + proc.stderr
