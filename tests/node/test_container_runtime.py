"""The container runtime's side (CD770, CD771): the toolkit configured for docker and containerd, and CDI specs that
match the live driver and device nodes."""
from __future__ import annotations

import json

import pytest

from node_kit import node
from test_gpu_health import judge

SPEC = """cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
%s
containerEdits:
  deviceNodes:
  - path: /dev/nvidiactl
  - path: /dev/nvidia-uvm
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.%s
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.%s
"""


def spec(driver: str, gpus: int) -> str:
    devices = "".join("- name: \"%d\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia%d\n" % (i, i)
                      for i in range(gpus))
    return SPEC % (devices, driver, driver)


def toolkit(m, *runtimes: str) -> None:
    m.file("/usr/bin/nvidia-ctk", "#!/bin/sh\n", mode=0o755)
    for program in runtimes:
        m.file("/usr/bin/%s" % program, "#!/bin/sh\n", mode=0o755)


@pytest.mark.parametrize("runtime, program, config, configured", [
    ("docker", "dockerd", ("/etc/docker/daemon.json", json.dumps({"runtimes": {"nvidia": {
        "path": "nvidia-container-runtime", "args": []}}})), True),
    ("docker", "dockerd", ("/etc/docker/daemon.json", json.dumps({"log-driver": "json-file"})), False),
    ("docker", "dockerd", None, False),
    ("containerd", "containerd", ("/etc/containerd/conf.d/99-nvidia.toml",
                                  '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]\n'
                                  'BinaryName = "/usr/bin/nvidia-container-runtime"\n'), True),
    ("containerd", "containerd", ("/etc/containerd/config.toml", "version = 2\n"), False),
])
def test_a_runtime_without_the_nvidia_runtime_is_named_with_nvidia_ctk(machine, runtime, program, config, configured):
    node(machine, gpus=1)
    toolkit(machine, program)
    if config:
        machine.file(*config)
    facts, found = judge(machine)
    assert facts.node.container["runtimes"] == {runtime: {"configured": configured}}
    if configured:
        assert "CD770" not in found
    else:
        [hit] = found["CD770"]
        assert hit.remedy.commands[0].endswith("nvidia-ctk runtime configure --runtime=%s" % runtime)


def test_no_toolkit_no_judgement(machine):
    node(machine, gpus=1)
    machine.file("/usr/bin/dockerd", "", mode=0o755)
    _, found = judge(machine)
    assert "CD770" not in found and "CD771" not in found


@pytest.mark.parametrize("text, problem", [
    (spec("580.95.05", 2), None),
    (spec("570.172.08", 2), "names driver 570.172.08, the node runs 580.95.05"),
    (spec("580.95.05", 3), "/dev/nvidia2 no longer exists"),
    (spec("580.95.05", 1), "it lacks /dev/nvidia1"),
])
def test_a_cdi_spec_must_match_the_live_driver_and_device_nodes(machine, text, problem):
    node(machine, gpus=2)
    toolkit(machine, "podman")
    machine.file("/etc/cdi/nvidia.yaml", text)
    facts, found = judge(machine)
    assert facts.node.container["cdi"][0]["path"] == "/etc/cdi/nvidia.yaml"
    if problem is None:
        assert "CD771" not in found
    else:
        [hit] = found["CD771"]
        assert problem in hit.title and "nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml" in hit.remedy.text


def test_podman_without_any_cdi_spec_is_told_to_generate_one(machine):
    node(machine, gpus=1)
    toolkit(machine, "podman")
    _, found = judge(machine)
    assert "podman" in found["CD771"][0].title


@pytest.mark.parametrize("spec_nodes, host_lacks, expected", [
    (["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"], [], None),  # all there: nothing to say
    (["/dev/nvidia-uvm"], ["nvidia-modeset"], None),  # CUDA never needs nvidia-modeset: no finding for its absence
    (["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"], ["nvidia-uvm", "nvidia-uvm-tools"],
     ["sudo nvidia-modprobe -u -c=0"]),
    (["/dev/nvidia-uvm", "/dev/nvidia-modeset"], ["nvidia-modeset"], ["sudo nvidia-modprobe -m"]),
    ([], [], ["sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"]),  # a spec made before the node was
    ([], ["nvidia-uvm"], ["sudo nvidia-modprobe -u -c=0",
                          "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"]),
])
def test_on_demand_device_nodes_a_spec_names_or_lacks(machine, spec_nodes, host_lacks, expected):
    node(machine, gpus=1)
    toolkit(machine, "podman")
    for name in ("nvidia-uvm-tools", "nvidia-modeset"):
        machine.file("/dev/" + name)
    for name in host_lacks:
        (machine.root / "dev" / name).unlink()
    text = spec("580.95.05", 1).replace("  - path: /dev/nvidia-uvm\n", "".join(
        "  - path: %s\n" % n for n in spec_nodes))
    machine.file("/etc/cdi/nvidia.yaml", text)
    facts, found = judge(machine)
    assert set(spec_nodes) <= set(facts.node.container["cdi"][0]["device_nodes"])
    assert "CD771" not in found  # on-demand nodes are CD772's: regenerating would drop them
    if expected is None:
        assert "CD772" not in found
        return
    [hit] = found["CD772"]
    assert hit.severity.value == "error" and hit.remedy.commands == expected
