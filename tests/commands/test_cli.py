"""The command line: options, exit codes, output streams, and the installed command end to end."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from clirunner import CliRunner

from cudnn_doctor import __version__
from cudnn_doctor.cli import app

runner = CliRunner()


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == "cudnn-doctor %s" % __version__


def test_help_lists_commands_with_examples():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("check", "matrix", "explain", "smoke", "install"):
        assert cmd in result.stdout
    assert "Examples" in result.stdout
    check_help = runner.invoke(app, ["check", "--help"])
    assert "--root" in check_help.stdout and "Exit codes" in check_help.stdout


def test_missing_root_is_a_usage_error_in_one_line(tmp_path):
    result = runner.invoke(app, ["check", "--root", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "does not exist" in result.stderr  # the reason (issue 22)
    assert "Traceback" not in result.output


def test_unknown_option_is_a_usage_error():
    result = runner.invoke(app, ["check", "--frobnicate"])
    assert result.exit_code == 2


def test_human_report_sections(machine):
    machine.mkdir("/usr/lib")
    result = runner.invoke(app, ["check", "--root", str(machine.root), "--no-color"])
    out = result.stdout
    for section in ("NVIDIA driver", "GPUs", "CUDA toolkits", "cuDNN copies", "What a plain process loads"):
        assert section in out
    assert "no NVIDIA driver found" in out
    assert "\x1b[" not in out


def test_quiet_twice_prints_nothing_but_keeps_the_exit_code(machine, check_json):
    machine.mkdir("/usr/lib")
    code, _ = check_json(machine)
    result = runner.invoke(app, ["check", "-qq", "--root", str(machine.root)])
    assert result.stdout == "" and result.exit_code == code


def test_github_format_and_step_summary(machine, tmp_path):
    machine.mkdir("/usr/lib")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    result = runner.invoke(app, ["check", "--format", "github", "--root", str(machine.root)],
                           env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert "cudnn-doctor:" in result.stdout
    for line in result.stdout.splitlines()[:-1]:
        assert line.startswith(("::error ", "::warning ", "::notice "))
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "## cudnn-doctor" in text


def test_junit_xml(machine, tmp_path):
    import xml.etree.ElementTree as ET

    machine.mkdir("/usr/lib")
    out = tmp_path / "reports" / "doctor.xml"
    result = runner.invoke(app, ["check", "--root", str(machine.root), "--junit-xml", str(out), "-qq"])
    root = ET.parse(out).getroot()
    cases = root.findall(".//testcase")
    assert root.tag == "testsuites" and len(cases) >= 1
    failures = root.findall(".//failure")
    assert (len(failures) > 0) == (result.exit_code == 1) or result.exit_code == 0


@pytest.mark.live
def test_installed_command_runs_end_to_end():
    """The console script as a real process on this (GPU-less) machine: one JSON object, no traceback."""
    exe = shutil.which("cudnn-doctor")
    cmd = [exe] if exe else [sys.executable, "-m", "cudnn_doctor"]
    proc = subprocess.run(cmd + ["check", "--json"], capture_output=True, text=True, timeout=60)
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exit_code"] and proc.returncode in (0, 1)
    assert "Traceback" not in proc.stderr
    human = subprocess.run(cmd + ["check"], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, NO_COLOR="1"))
    assert "NVIDIA driver" in human.stdout and "\x1b[" not in human.stdout


@pytest.mark.live
def test_python_dash_m_matches_the_command():
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "cudnn-doctor %s" % __version__


def test_list_checks_and_skip(machine, check_json):
    listed = runner.invoke(app, ["check", "--list-checks"])
    assert listed.exit_code == 0 and "CD101  no-nvidia-driver" in listed.stdout
    machine.mkdir("/usr/lib/x86_64-linux-gnu")
    code, doc = check_json(machine)
    assert code == 1 and "CD101" in [f["id"] for f in doc["findings"]]
    code, doc = check_json(machine, "--skip", "CD1*", "--skip", "cudnn-not-found")
    ids = [f["id"] for f in doc["findings"]]
    assert not any(i.startswith("CD1") for i in ids) and "CD401" not in ids and "CD101" not in doc["rules_run"]
    bad = runner.invoke(app, ["check", "--skip", "CD999", "--root", str(machine.root)])
    assert bad.exit_code == 2 and "matches no check" in bad.stderr


def test_unwritable_junit_path_is_a_usage_error(machine):
    machine.mkdir("/usr/lib")
    result = runner.invoke(app, ["check", "--root", str(machine.root), "--junit-xml", "/proc/nope/x.xml", "-qq"])
    assert result.exit_code == 2 and "cannot be written" in result.stderr and "Traceback" not in result.output
