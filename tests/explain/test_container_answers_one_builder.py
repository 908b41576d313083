"""explain's container answers and check's node and container fixes come from one builder each: the CDI spec from
remedies/node.cdi_generate_fix, the NVIDIA runtime's registration from node.runtime_configure_fix, the toolkit's
install from containers.container_toolkit_fix. Before, paste_runtime wrote both commands again."""
from __future__ import annotations

import json

import pytest

from clirunner import CliRunner

from cudnn_doctor.cli import app
from cudnn_doctor.remedies import node
from cudnn_doctor.remedies.containers import container_gpu_fix, container_toolkit_fix

# The builders called here write their commands for Target(), as explain writes a paste's answer.
pytestmark = pytest.mark.usefixtures("fix_target")


def _fix(text: str) -> dict:
    result = CliRunner().invoke(app, ["explain", "--no-check", "--json", "-"], input=text)
    return json.loads(result.stdout)


def _commands(doc) -> list:
    """Every command list under the answer's remedies."""
    found = []

    def walk(node_):
        if isinstance(node_, dict):
            if isinstance(node_.get("commands"), list):
                found.extend(node_["commands"])
            for value in node_.values():
                walk(value)
        elif isinstance(node_, list):
            for value in node_:
                walk(value)
    walk(doc)
    return found


def test_the_cdi_answer_is_the_nodes_command(monkeypatch):
    monkeypatch.setattr(node, "CDI_SPEC", "/var/run/cdi/nvidia.yaml")  # one place says where the spec goes
    doc = _fix('docker: Error response from daemon: could not select device driver "cdi" with capabilities: '
               '[]: unresolvable CDI devices nvidia.com/gpu=all.')
    assert "sudo nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml" in _commands(doc), doc


def test_the_docker_runtime_answer_registers_as_the_node_fix_does():
    doc = _fix('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].')
    toolkit = container_toolkit_fix()
    assert toolkit.commands[1:] == node.runtime_configure_fix("docker").commands
    assert toolkit.commands[0] in _commands(doc) and toolkit.commands[1] in _commands(doc), doc


def test_the_container_words_name_the_same_registration():
    assert "`%s`" % node.runtime_configure_fix("docker").text in container_gpu_fix().text
    # The host's commands are the fix's commands (its words say where they run): the registration is node's.
    assert container_gpu_fix().commands[1:] == node.runtime_configure_fix("docker").commands
