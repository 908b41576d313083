"""The published JSON Schemas (schema/*.json): generated from the model, and every --json output validates."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

import archive_factory as af
import fleet_factory
import test_check_on_fake_machines as sm
from clirunner import CliRunner
from kit import FakeMachine, commands_run_native_here, have_gcc

from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = {p.name: json.loads(p.read_text()) for p in (REPO / "schema").glob("*.json")}


def _strict(node):
    """A copy in which every object closes over the fields it lists: the published schemas let readers meet fields
    added later, but our own output must name none the schema does not."""
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out and "$defs" not in out:
        out["additionalProperties"] = False
    return out


SCHEMAS = {name: _strict(s) for name, s in PUBLISHED.items()}
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS.values())
needs_gcc = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


def errors(name: str, doc: dict) -> list:
    """Each way ``doc`` breaks the schema; for the envelope's either-or, the reasons of the branch it meant."""
    validator = Draft202012Validator(SCHEMAS[name], registry=REGISTRY)
    out = []
    for e in validator.iter_errors(doc):
        reasons = [c for c in e.context if ("error" in doc) == (c.schema_path[0] == 1)] or [e]
        out += ["%s: %s" % ("/".join(map(str, c.absolute_path)), c.message[:200]) for c in reasons]
    return out


def _json(*args: str, env=None) -> dict:
    result = CliRunner().invoke(app, list(args), env=env)
    return json.loads(result.stdout)


def test_the_schemas_are_what_the_model_says():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "write_schemas.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for schema in PUBLISHED.values():
        Draft202012Validator.check_schema(schema)


@needs_gcc
@pytest.mark.parametrize("build, env", [(sm.cuda12_cudnn9, {}), (sm.e2_shadowed, {"LD_LIBRARY_PATH": "/opt/cudnn/lib64"}),
                                        (sm.i1_conda, {"CONDA_PREFIX": "/opt/conda"}), (sm.a1_module_missing, {})],
                         ids=["healthy", "shadowed", "conda", "no-module"])
def test_check_json_validates(tmp_path, build, env):
    machine = FakeMachine(tmp_path / "root")
    build(machine)
    assert errors("report-v1.json", _json("check", "--json", "--root", str(machine.root), env=env)) == []


def test_check_json_of_a_windows_drive_validates(tmp_path):
    (tmp_path / "Windows" / "System32").mkdir(parents=True)
    doc = _json("check", "--json", "--root", str(tmp_path), "--env", r"PATH=C:\nothing")
    assert doc["facts"]["windows"] is not None
    assert errors("report-v1.json", doc) == []


def test_a_finding_with_a_string_remedy_or_an_unknown_severity_is_rejected(tmp_path):
    doc = _json("check", "--json", "--root", str(tmp_path))
    finding = doc["findings"][0]
    assert errors("report-v1.json", doc) == []
    finding["remedy"] = "sudo ldconfig"
    assert errors("report-v1.json", doc)
    finding["remedy"], finding["severity"] = None, "fatal"
    assert errors("report-v1.json", doc)


@needs_gcc
def test_smoke_json_validates(monkeypatch):
    from test_smoke_cli import fake_cuda, fake_cudnn

    commands_run_native_here(monkeypatch)

    doc = _json("smoke", "--library", fake_cudnn(), "--driver-library", fake_cuda(), "--json")
    assert doc["results"] and errors("smoke-v1.json", doc) == []
    failed = _json("smoke", "--library", fake_cudnn(FAIL_AT='"create"', FAIL_STATUS=4), "--driver-library",
                   fake_cuda(), "--json")
    assert failed["results"][0]["ok"] is False and errors("smoke-v1.json", failed) == []


@needs_gcc
def test_bench_json_validates(monkeypatch):
    from test_bench_fake import SHAPE, bench_cli

    commands_run_native_here(monkeypatch)

    doc = json.loads(bench_cli("--json", "--shape", SHAPE, "--dtype", "fp32").stdout)
    assert doc["findings"] is not None and errors("bench-v1.json", doc) == []


@needs_gcc
def test_install_json_validates(tmp_path, monkeypatch):
    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict",
                        lambda cudnn, built, toolkit: (True, "accepted by the test"))
    machine = FakeMachine(tmp_path / "root")
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    for extra in (["--dry-run"], []):
        result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--json", *extra,
                           env={af.MACHINE_ENV: str(machine.root)})
        assert errors("install-v1.json", json.loads(result.stdout)) == []
    refused = af.invoke("install", str(tmp_path / "missing.tar.xz"), "--cuda-home", home, "--json")
    doc = json.loads(refused.stdout)
    assert refused.exit_code != 0 and doc["error"] and errors("install-v1.json", doc) == []


def test_fleet_json_validates(tmp_path):
    for name, doc in fleet_factory.fleet_reports(6):
        (tmp_path / (name + ".json")).write_text(json.dumps(doc))
    doc = _json("fleet", "--json", str(tmp_path))
    assert doc["nodes"] == 6 and errors("fleet-v1.json", doc) == []


def test_the_smoke_threshold_is_the_one_the_child_checks_against():
    from cudnn_doctor.run_results import SMOKE_THRESHOLD
    from cudnn_doctor.smoke.conv_math import THRESHOLD

    assert SMOKE_THRESHOLD == THRESHOLD
