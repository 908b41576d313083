"""deploy/ansible with the real ansible-playbook: the zipapp copied to several local hosts and run there by a bare
python3, each checking its own fake machine root, reports fetched to the controller, `fleet` (the same zipapp)
grouping them, and ansible_local.cudnn_doctor from the facts.d script."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engines import REPO, doctor_command, tool_venv
from kit import FakeMachine, Gpu, have_gcc
from zipapp_build import built_zipapp

MA = "/usr/lib/x86_64-linux-gnu"
PLAYBOOK = REPO / "deploy" / "ansible" / "cudnn-doctor.yml"
ANSIBLE = ["ansible-core>=2.15,<2.18"]  # 2.17 is the last line supporting Python 3.10 on the controller
NODE_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable  # no pip needed


def fake_node(root, uuid, kernel_module="same"):
    m = FakeMachine(root)
    m.driver("580.95.05", cuda=13000, gpus=[Gpu(uuid=uuid)], kernel_module=kernel_module)
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.toolkit("13.0.2", layout="deb")
    m.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    m.ld_cache()
    return m


def test_playbook_checks_every_host_and_fleet_groups_them(tmp_path):
    if not have_gcc():
        pytest.skip("gcc is needed to build the fake NVIDIA libraries")
    venv_bin, why = tool_venv("ansible", ANSIBLE)
    if venv_bin is None:
        pytest.skip(why)
    pyz, why = built_zipapp()
    if pyz is None:
        pytest.skip(why)
    hosts = {"gpu001": "same", "gpu002": "same", "gpu003": "same", "gpu004": "575.57.08"}
    lines = ["[gpu]"]
    for i, (name, module) in enumerate(hosts.items()):
        node = fake_node(tmp_path / "roots" / name, "GPU-0000000%d-0000-4000-8000-000000000000" % i, module)
        lines.append(
            "%s ansible_connection=local ansible_python_interpreter=%s cudnn_doctor_python=%s "
            "cudnn_doctor_args='--root %s' cudnn_doctor_remote_dir=%s cudnn_doctor_facts_dir=%s"
            % (name, sys.executable, NODE_PYTHON, node.root, tmp_path / "remote" / name,
               tmp_path / "remote" / name / "facts.d"))
    (tmp_path / "inventory").write_text("\n".join(lines) + "\n")
    reports = tmp_path / "controller-reports"
    env = dict(os.environ, ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="False", ANSIBLE_INVENTORY_UNPARSED_WARNING="False",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, CUDNN_DOCTOR_ZIPAPP_DIR=str(tmp_path / "controller-unpacked"))
    env.pop("PYTHONPATH", None)  # nothing of this checkout reaches the nodes: only the copied zipapp runs there
    proc = subprocess.run(
        [str(venv_bin / "ansible-playbook"), "-i", str(tmp_path / "inventory"), str(PLAYBOOK),
         "-e", "cudnn_doctor_zipapp=%s" % pyz, "-e", "cudnn_doctor_reports=%s" % reports],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    print("$ ansible-playbook -i inventory deploy/ansible/cudnn-doctor.yml -e cudnn_doctor_zipapp=%s\n" % pyz
          + proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in hosts:  # the zipapp was copied to each node and ran from there, unpacked beside it
        remote = tmp_path / "remote" / name
        assert (remote / "cudnn-doctor.pyz").read_bytes() == pyz.read_bytes()
        assert len(list((remote / "unpacked").iterdir())) == 1
    assert "gpu004: error CD104" in proc.stdout  # ansible_local.cudnn_doctor from the facts.d script
    assert "gpu001: error" not in proc.stdout
    assert "4 nodes: " in proc.stdout and ", 1 error" in proc.stdout
    assert sorted(p.name for p in reports.iterdir()) == ["gpu001.json", "gpu002.json", "gpu003.json", "gpu004.json"]

    fleet = subprocess.run([*doctor_command().split(), "fleet", str(reports), "--json"], capture_output=True, text=True)
    doc = json.loads(fleet.stdout)
    assert fleet.returncode == 1  # gpu004 has an error
    groups = {g["hosts"]: g for g in doc["groups"]}
    assert set(groups) == {"gpu[001-003]", "gpu004"}
    assert groups["gpu[001-003]"]["majority"] and groups["gpu004"]["differs"] == ["kernel_module"]
    assert {f["id"]: f["hosts"] for f in doc["findings"]}["CD104"] == "gpu004"
