"""The `check --json` contract other tools rely on: these keys exist with these types (adding keys is fine)."""
from __future__ import annotations

import pytest

from kit import Gpu

MA = "/usr/lib/x86_64-linux-gnu"

ENVELOPE = {"schema_version": str, "tool": dict, "command": str, "exit_code": int, "verdict": str,
            "incomplete": bool, "facts": dict, "findings": list, "rules_run": list,
            # Added within schema 1 for `fleet` (issue 11): node name, run time and the configuration fingerprint.
            "host": str, "started_at": str, "duration_s": float, "fingerprint": dict}
FINGERPRINT_FIELDS = {"arch", "kernel", "driver", "driver_cuda", "kernel_module", "gpus", "toolkits", "cudnn",
                      "frameworks", "loads_cudnn"}
DRIVER = {"version", "cuda_version", "kernel_module_version"}
GPU = {"index": int, "name": str, "uuid": str, "compute_capability": str, "memory_total_mib": int}
TOOLKIT = {"path", "version", "version_source"}
CUDNN = {"path", "version", "cuda_version", "header_path", "header_version", "origin", "package"}
FINDING = {"id": str, "severity": str, "title": str, "detail": str, "fix": str}
REMEDY = {"text": str, "commands": list, "root": bool, "shell": str, "doctor": str, "manual": str, "writes": list}


@pytest.fixture
def full_machine(machine):
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.toolkit("13.0.2", layout="deb")
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    machine.pip_cudnn("/opt/venv/lib/python3.12/site-packages", "9.19.0.56", cuda_major=13, cudart=13010)
    return machine


def test_envelope_and_fact_keys(full_machine, check_json):
    code, doc = check_json(full_machine)
    for key, typ in ENVELOPE.items():
        assert isinstance(doc[key], typ), key
    assert doc["schema_version"] == "1"
    assert doc["tool"]["name"] == "cudnn-doctor" and doc["tool"]["version"]
    assert doc["verdict"] in ("ok", "warning", "error")
    assert doc["exit_code"] == code and code in (0, 1)
    assert doc["incomplete"] is False and doc["facts"]["blocked"] == []
    facts = doc["facts"]
    assert DRIVER <= set(facts["driver"])
    assert facts["driver"]["version"] == "580.95.05" and facts["driver"]["cuda_version"] == "13.0"
    assert facts["driver"]["kernel_module_version"] == "580.95.05"
    [gpu] = facts["gpus"]
    for key, typ in GPU.items():
        assert isinstance(gpu[key], typ), key
    assert gpu["compute_capability"] == "9.0"
    assert all(TOOLKIT <= set(t) for t in facts["toolkits"])
    assert facts["toolkits"][0]["version"] == "13.0" and facts["toolkits"][0]["version_source"]
    assert len(facts["cudnn"]) == 2 and all(CUDNN <= set(c) for c in facts["cudnn"])
    origins = {c["origin"] for c in facts["cudnn"]}
    assert origins == {"system", "pip"}
    assert {c["version"] for c in facts["cudnn"]} == {"9.14.0", "9.19.0"}
    assert facts["loader"]["paths"]["libcudnn.so.9"] == MA + "/libcudnn.so.9"
    assert facts["loader"]["resolved"]["libcudnn.so.9"]["via"] in ("ld.so.cache", "default path")
    for finding in doc["findings"]:
        for key, typ in FINDING.items():
            assert isinstance(finding[key], typ), key
        assert finding["severity"] in ("error", "warning", "info")
        remedy = finding["remedy"]
        if finding["fix"]:
            for key, typ in REMEDY.items():
                assert isinstance(remedy[key], typ), key
            assert remedy["text"] == finding["fix"]
            assert all(isinstance(c, str) and c for c in remedy["commands"])
            assert remedy["shell"] in (("sh", "cmd", "powershell") if remedy["commands"] else ("",))
        else:
            assert remedy is None


def test_paths_are_reported_as_seen_inside_the_root(full_machine, check_json):
    _, doc = check_json(full_machine)
    text = repr(doc["facts"]["cudnn"]) + repr(doc["facts"]["toolkits"]) + repr(doc["facts"]["loader"])
    assert str(full_machine.root) not in text


def test_json_is_the_only_thing_on_stdout(full_machine):
    import json

    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    result = CliRunner().invoke(app, ["check", "--json", "--root", str(full_machine.root)])
    json.loads(result.stdout)  # raises if anything else was printed


def _node(machine_factory, name, uuid):
    m = machine_factory(name)
    m.driver("580.95.05", cuda=13000, gpus=[Gpu(uuid=uuid)])
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    m.file("/etc/hostname", name + "\n")
    return m


def test_merge_fields_and_a_fingerprint_equal_across_identical_nodes(tmp_path, check_json):
    import re
    from datetime import datetime

    from kit import FakeMachine, have_gcc

    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")

    def factory(name):
        return FakeMachine(tmp_path / name)

    _, a = check_json(_node(factory, "gpu001", "GPU-aaaaaaaa-0000-4000-8000-000000000001"))
    _, b = check_json(_node(factory, "gpu002", "GPU-bbbbbbbb-0000-4000-8000-000000000002"))
    assert (a["host"], b["host"]) == ("gpu001", "gpu002")  # from the root's /etc/hostname
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", a["started_at"])
    assert datetime.fromisoformat(a["started_at"].replace("Z", "+00:00")).tzinfo is not None
    assert 0 <= a["duration_s"] < 120
    fp = a["fingerprint"]
    assert set(fp) == {"id", "version", "fields"} and re.match(r"^[0-9a-f]{16}$", fp["id"]) and fp["version"] == 1
    assert set(fp["fields"]) == FINGERPRINT_FIELDS
    assert fp == b["fingerprint"]  # other host name, GPU UUID and time: same configuration
    assert "GPU-aaaa" not in repr(fp) and "gpu001" not in repr(fp)
    other = _node(factory, "gpu003", "GPU-cccccccc-0000-4000-8000-000000000003")
    other.driver("570.86.10", cuda=12080, gpus=[Gpu()])
    _, c = check_json(other)
    assert c["fingerprint"]["id"] != fp["id"] and c["fingerprint"]["fields"]["driver"] == "570.86.10"


def test_node_name_option_overrides_the_host_name(full_machine, check_json):
    _, doc = check_json(full_machine, "--node-name", "gpu042")
    assert doc["host"] == "gpu042"
