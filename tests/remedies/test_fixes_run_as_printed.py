"""Every printed command runs as printed where it is printed (issue 29, item 2): for a venv, a zipapp and a system
install, as root and not, each command parses (`bash -n`) and its first word resolves the way the shell or sudo
would (sudo's secure_path never holds a venv's bin; a zipapp has no command at all); root gets no sudo."""
from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from cudnn_doctor.host import Host, start_form
from facts_factory import real_machine
from shellcheck_kit import (SECURE_PATH, bash_accepts, is_executable, quoted_commands, resolves, simple_commands,
                            without_sudo)

USER_PATH = "/usr/local/bin:/usr/bin:/bin"


def _install(tmp: Path, kind: str) -> Tuple[str, str, str]:
    """(argv[0], python, the user's PATH) of a cudnn-doctor installed ``kind``-wise under ``tmp``."""
    if kind == "venv":
        bin_dir = tmp / "home" / "u" / "venv" / "bin"
        bin_dir.mkdir(parents=True)
        script = bin_dir / "cudnn-doctor"
        script.write_text("#!%s\nfrom cudnn_doctor.cli import main\nmain()\n" % (bin_dir / "python"))
        script.chmod(0o755)
        (bin_dir / "python").symlink_to(sys.executable)
        return str(script), str(bin_dir / "python"), "%s:%s" % (bin_dir, USER_PATH)  # the venv is activated
    if kind == "zipapp":
        app = tmp / "home" / "u" / "cudnn-doctor.pyz"
        app.parent.mkdir(parents=True)
        with zipfile.ZipFile(app, "w") as z:
            z.writestr("__main__.py", "import cudnn_doctor.cli\n")
        return str(app), sys.executable, USER_PATH
    bin_dir = tmp / "usr" / "local" / "bin"  # pip install as root: the command lands on sudo's secure_path
    bin_dir.mkdir(parents=True)
    script = bin_dir / "cudnn-doctor"
    script.write_text("#!/usr/bin/python3\n")
    script.chmod(0o755)
    return str(script), sys.executable, "%s:%s" % (bin_dir, USER_PATH)


def _here(text: str) -> str:
    return text.split("on the host")[0]


def _fixes(monkeypatch, argv0: str, python: str, path: str, euid: int) -> List[str]:
    """Every command the scenario machines' fixes print, built for this start form and user."""
    from test_fixes_runnable import FACT_SCENARIOS

    from cudnn_doctor.diagnose import collect_report

    form = start_form(argv0, python, path)
    monkeypatch.setattr(Host, "doctor_start", staticmethod(lambda: form))
    commands: List[str] = []
    for name, (build, options) in sorted(FACT_SCENARIOS.items()):
        facts = build()
        facts.host.euid = euid
        report = collect_report(facts=facts, requires=list(options.get("requires", [])), target=options.get("target"))
        for f in report.findings:
            if f.remedy and f.remedy.shell in ("sh", ""):
                commands += list(f.remedy.commands) + ([f.remedy.doctor] if f.remedy.doctor else [])
                # Words "on the host" address the machine outside a container, whose user this run cannot know.
                commands += quoted_commands(_here(f.remedy.text)) + quoted_commands(_here(f.remedy.manual))
    return commands


def _problems(command: str, path: str, doctor_words: Tuple[str, ...], root_user: bool) -> List[str]:
    out = []
    if not bash_accepts(command):
        out.append("bash -n refuses it")
    for words in simple_commands(command):
        sudo = words[0] == "sudo"
        if sudo and root_user:
            out.append("sudo for root")
        words = without_sudo(words)
        if not words or "=" in words[0] or words[1:2] == ["="]:
            continue
        first = words[0]
        doctor = first == "cudnn-doctor" or first in doctor_words
        if first.startswith("/"):
            if not is_executable(first):
                out.append("%s is not a program" % first)
            elif doctor and doctor_words[1:2] == ("-I",) and not os.path.isfile(words[2]):
                out.append("no zipapp at %s" % words[2])
        elif doctor and sudo:
            out.append("sudo cannot find %s on its secure_path" % first)
        elif doctor and resolves(first, path) != doctor_words[0]:
            out.append("%s on PATH is %s, not this cudnn-doctor" % (first, resolves(first, path)))
        elif sudo and resolves(first, SECURE_PATH) is None and resolves(first, path) is not None:
            out.append("only the user's PATH has %s; sudo's secure_path does not" % first)
    return out


INSTALLS = ["venv", "zipapp", "system"]


@pytest.mark.parametrize("kind", INSTALLS)
@pytest.mark.parametrize("euid", [1000, 0], ids=["user", "root"])
def test_every_printed_command_starts_as_printed(tmp_path, monkeypatch, kind, euid):
    argv0, python, path = _install(tmp_path, kind)
    words = start_form(argv0, python, path)[0]
    commands = _fixes(monkeypatch, argv0, python, path, euid)
    assert any("install --version" in c for c in commands)  # the doctor's own command is among them
    bad: Dict[str, List[str]] = {}
    for command in sorted(set(commands)):
        found = _problems(command, path, words, euid == 0)
        if found:
            bad[command] = found
    assert bad == {}


def test_the_start_forms():
    here = os.path.dirname(os.path.abspath(__file__))
    assert start_form(os.path.join(here, "nothing", "__main__.py"), "/usr/bin/python3", USER_PATH) == (
        ("/usr/bin/python3", "-m", "cudnn_doctor"), False)


@pytest.mark.parametrize("kind", INSTALLS)
def test_a_start_form_is_absolute(tmp_path, kind):
    argv0, python, path = _install(tmp_path, kind)
    words, on_path = start_form(argv0, python, path)
    assert all(w.startswith("/") for w in words[:1]) and os.path.exists(words[-1] if kind != "venv" else words[0])
    assert on_path == (kind != "zipapp")  # a zipapp has no command on PATH
    if kind == "zipapp":
        assert words == (python, "-I", argv0)


def test_root_gets_no_sudo_and_a_user_gets_the_absolute_doctor(monkeypatch, tmp_path):
    argv0, python, path = _install(tmp_path, "venv")
    user = [c for c in _fixes(monkeypatch, argv0, python, path, 1000) if "install --version" in c]
    root = [c for c in _fixes(monkeypatch, argv0, python, path, 0) if "install --version" in c]
    assert user and all(c.startswith("sudo %s install " % argv0) for c in user), user
    assert root and all(c.startswith("cudnn-doctor install ") for c in root), root
    assert real_machine().host.euid is None


@pytest.mark.parametrize("kind", INSTALLS)
@pytest.mark.parametrize("euid,sudo_uid", [(1000, None), (0, None), (0, 1000)], ids=["user", "root", "sudo"])
def test_the_installers_undo_line_runs_as_printed(tmp_path, monkeypatch, kind, euid, sudo_uid):
    """"Installed. Undo with: ..." for each start form: root's install undone by root as printed, a user's own
    install by that user, and the install a user ran through sudo (its files are root's) with sudo and this
    cudnn-doctor's absolute words (sudo's secure_path has no venv's bin; a zipapp has no command)."""
    import json

    import archive_factory as af
    from kit import FakeMachine

    argv0, python, path = _install(tmp_path, kind)
    form = start_form(argv0, python, path)
    monkeypatch.setattr(Host, "doctor_start", staticmethod(lambda: form))
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    if sudo_uid is not None:
        monkeypatch.setenv("SUDO_UID", str(sudo_uid))
    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict",
                        lambda cudnn, built, toolkit: (True, "accepted by the test"))
    machine = FakeMachine(tmp_path / "root")
    home = machine.p(machine.toolkit("12.6.1"))
    result = af.invoke("install", af.make("linux-xz", tmp_path / "dl"), "--cuda-home", home, "--no-smoke", "--json",
                       env={af.MACHINE_ENV: str(machine.root)})
    hint = json.loads(result.stdout)["rollback_hint"]
    assert hint.endswith(" rollback --cuda-home %s" % home), hint
    assert hint.startswith("sudo %s " % " ".join(form[0])) == (sudo_uid is not None), hint
    assert _problems(hint, path, form[0], euid == 0 and sudo_uid is None) == [], hint
