"""Under --json every command answers bad input with one JSON object on stdout (the envelope with the error) as well
as its one line on stderr, so a CI step that parses stdout never gets an empty string."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clirunner import CliRunner
from test_schemas import errors

from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parents[2]

# command line -> (command in the envelope, schema it must validate against, or None where none is published)
BAD_OPTION = [
    (["check", "--json", "--no-such-option"], "check", "report-v1.json"),
    (["smoke", "--json", "--no-such-option"], "smoke", "smoke-v1.json"),
    (["bench", "--json", "--no-such-option"], "bench", "bench-v1.json"),
    (["install", "--json", "--no-such-option"], "install", "install-v1.json"),
    (["fleet", "--json", "--no-such-option"], "fleet", "fleet-v1.json"),
    (["explain", "--json", "--no-such-option"], "explain", None),
    (["matrix", "--json", "--no-such-option"], "matrix", None),
]

BAD_VALUE = [
    (["check", "--json", "--root", "/nonexistent/cudnn-doctor-root"], "check", "report-v1.json",
     "--root /nonexistent/cudnn-doctor-root does not exist"),
    (["smoke", "--json", "--library", "/nonexistent/libcudnn.so.9"], "smoke", "smoke-v1.json",
     "--library /nonexistent/libcudnn.so.9: no such file"),
    (["bench", "--json", "--dtype", "fp64"], "bench", "bench-v1.json", "--dtype fp64: choose from"),
    (["install", "--json", "/nonexistent/cudnn.tar.xz"], "install", "install-v1.json", "no such archive"),
    (["matrix", "--json", "--cuda", "12.x"], "matrix", None, "--cuda wants a CUDA version"),
]


def _check_envelope(stdout: str, command: str, schema, code: int) -> dict:
    doc = json.loads(stdout)
    assert doc["command"] == command and doc["exit_code"] == code and doc["schema_version"] == "1"
    assert doc["error"]
    if schema:
        assert errors(schema, doc) == []
    return doc


@pytest.mark.parametrize("argv, command, schema", BAD_OPTION, ids=lambda v: v[0] if isinstance(v, list) else None)
def test_a_usage_error_under_json_prints_the_error_envelope(argv, command, schema):
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    doc = _check_envelope(result.stdout, command, schema, 2)
    assert "--no-such-option" in doc["error"]
    assert "No such option" in result.stderr  # the usage line still goes to stderr


@pytest.mark.parametrize("argv, command, schema, words", BAD_VALUE, ids=lambda v: v[0] if isinstance(v, list) else None)
def test_bad_input_under_json_prints_the_error_envelope_once(argv, command, schema, words):
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    doc = _check_envelope(result.stdout, command, schema, 2)
    assert words in doc["error"]
    assert result.stdout.count('"schema_version"') == 1  # one object, not one from the command and one from the app
    assert result.stderr.strip().splitlines() == ["cudnn-doctor: error: " + doc["error"]]


def test_without_json_stdout_stays_empty():
    result = CliRunner().invoke(app, ["check", "--root", "/nonexistent/cudnn-doctor-root"])
    assert result.exit_code == 2 and result.stdout == ""


def test_json_after_double_dash_is_an_argument_not_the_option():
    result = CliRunner().invoke(app, ["explain", "--no-such-option", "--", "--json"])
    assert result.exit_code == 2 and result.stdout == ""


def test_the_installed_entry_point_does_the_same():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--json", "--no-such-option"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    _check_envelope(proc.stdout, "check", "report-v1.json", 2)
    assert "Traceback" not in proc.stderr
