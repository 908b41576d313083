"""`pick` for this machine builds its install commands for this machine's fix target, as check does: under sudo
this cudnn-doctor is named by its absolute start words (a venv's bin is not on sudo's secure_path), and root gets
no sudo; a node asked about with --against keeps the plain words (its install is not known)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pick_nodes import node_report  # noqa: E402

from cudnn_doctor.host import Host  # noqa: E402
from cudnn_doctor.knowledge import load_compat  # noqa: E402
from cudnn_doctor.model import Facts  # noqa: E402
from cudnn_doctor.pick.answer import answer  # noqa: E402
from cudnn_doctor.pick.cudnn import pick_cudnn  # noqa: E402
from cudnn_doctor.pick.machine import from_report  # noqa: E402

VENV = ("/home/u/venv/bin/cudnn-doctor",)
H100 = ("580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")])


def _installer_line(facts):
    compat = load_compat()
    machine = from_report(node_report(*H100), "node.json", compat)
    return answer(compat, pick_cudnn(compat, "", machine), facts)["install"]["cudnn-doctor"]


@pytest.mark.parametrize("euid,expect", [(1000, "sudo /home/u/venv/bin/cudnn-doctor install --version "),
                                         (0, "/home/u/venv/bin/cudnn-doctor install --version ")])
def test_this_machine_gets_commands_built_for_it(monkeypatch, euid, expect):
    monkeypatch.setattr(Host, "doctor_start", staticmethod(lambda: (VENV, False)))
    facts = Facts()
    facts.host.euid = euid
    assert _installer_line(facts).startswith(expect)


def test_a_node_asked_about_keeps_the_plain_words(monkeypatch):
    monkeypatch.setattr(Host, "doctor_start", staticmethod(lambda: (VENV, False)))
    assert _installer_line(None).startswith("sudo cudnn-doctor install --version ")
