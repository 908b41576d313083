"""The node verdicts travel: a GPU with a pending row remap shows in fleet's findings with its host, makes the
node-problem-detector plugin report a problem that says so, and sets the Prometheus sample for that GPU."""
from __future__ import annotations

import json

from clirunner import CliRunner
from kit import Health
from node_kit import node

from cudnn_doctor.cli import app
from cudnn_doctor.fleet.npd import NPD_OK, NPD_PROBLEM, npd_status


def reports(tmp_path, machine, check_json):
    """check --json of a healthy and of a broken node (one GPU of two waits for a reset to remap a row)."""
    out = {}
    for host, health in (("gpu-ok", ()), ("gpu-remap", [Health(), Health(remap_pending=1)])):
        node(machine, gpus=2, health=health)
        _, doc = check_json(machine, "--node-name", host, "--ready")
        (tmp_path / ("%s.json" % host)).write_text(json.dumps(doc))
        out[host] = doc
    return out


def test_fleet_npd_and_prometheus_carry_a_pending_row_remap(tmp_path, machine, check_json):
    docs = reports(tmp_path, machine, check_json)
    assert [r["ok"] for r in docs["gpu-ok"]["facts"]["node"]["ready"]] == [True, True]

    fleet = CliRunner().invoke(app, ["fleet", str(tmp_path), "--json"])
    merged = json.loads(fleet.stdout)
    [remap] = [f for f in merged["findings"] if f["id"] == "CD212"]
    assert remap["hosts"] == "gpu-remap" and "GPU 1: a row remap is pending" in remap["title"]

    assert npd_status(docs["gpu-ok"])[0] == NPD_OK
    code, message = npd_status(docs["gpu-remap"])
    assert code == NPD_PROBLEM and message.startswith("CD212: GPU 1: a row remap is pending")

    text = CliRunner().invoke(app, ["check", "--root", str(machine.root), "--format", "prometheus", "--ready"]).stdout
    assert 'cudnn_doctor_gpu_row_remap_pending{gpu="1"} 1' in text
    assert 'cudnn_doctor_gpu_row_remap_pending{gpu="0"} 0' in text
    assert 'cudnn_doctor_gpu_ready{gpu="0"} 1' in text
