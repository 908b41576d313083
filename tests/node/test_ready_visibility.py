"""check --ready proves every GPU in one process after one cuInit, each found by its bus id; a GPU that process
cannot reach (its cuInit fails, CUDA does not list the GPU, the process hangs on it) is proven in a fork that sees
only that GPU (by the UUID the driver publishes in /proc, else by its place in PCI bus order), which checks that
CUDA opened that GPU. A GPU is never counted as ready when CUDA does not list it or opened another one."""
from __future__ import annotations

import pytest

from node_kit import gpu_address, node, proc_gpus
from test_gpu_health import judge

from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.probes import Context
from cudnn_doctor.probes.node import gpu_ready_task


def test_every_gpu_is_proven_after_one_cuinit_and_found_by_its_bus_id(machine):
    proc_gpus(node(machine, gpus=3), 3)
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.bus_id, r.ok) for r in facts.node.ready] == [(i, gpu_address(i), True) for i in range(3)]
    # The first GPU carries the node's load and cuInit; the others only their own context, module and kernel.
    assert [set(r.phases_ms) for r in facts.node.ready] == [{"load", "init", "context", "module", "kernel"}] + [
        {"context", "module", "kernel"}] * 2
    assert "CD218" not in found


@pytest.mark.parametrize("uuids", [True, False])
def test_where_the_nodes_cuinit_fails_each_gpu_is_proven_alone(machine, uuids):
    proc_gpus(node(machine, gpus=3, cuda={"INIT_ALL_RC": 999}), 3, uuids=uuids)
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.bus_id, r.ok) for r in facts.node.ready] == [(i, gpu_address(i), True) for i in range(3)]
    assert all(set(r.phases_ms) == {"load", "init", "context", "module", "kernel"} for r in facts.node.ready)
    assert "CD218" not in found


def test_a_gpu_the_shared_process_hangs_on_fails_and_the_gpus_after_it_are_proven_alone(machine):
    proc_gpus(node(machine, gpus=3, cuda={"HANG_ON_GPU": 1}), 3)
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.ok) for r in facts.node.ready] == [(0, True), (1, False), (2, True)]
    assert "did not answer" in (facts.node.ready[1].error or "")
    assert "GPU 1" in found["CD218"][0].title and "GPU 2" not in found["CD218"][0].title


def test_the_tasks_name_each_gpu_by_uuid_where_the_driver_publishes_it(machine):
    proc_gpus(node(machine, gpus=2), 2)
    machine.file("/proc/driver/nvidia/gpus/%s/information" % gpu_address(1), "GPU UUID: \t GPU-????????\n")
    ctx = Context(Host(root=str(machine.root)), compat=load_compat())
    task = gpu_ready_task(ctx, "/lib/libcuda.so.1")
    assert [(t["index"], t["bus_id"], t["uuid"]) for t in task["gpus"]] == [
        (0, gpu_address(0), "GPU-00000000-0000-4000-8000-000000000000"), (1, gpu_address(1), None)]


def test_a_cuda_that_opens_another_gpu_than_the_one_made_visible_is_not_a_pass(machine):
    proc_gpus(node(machine, gpus=2, cuda={"IGNORE_VISIBLE": True, "INIT_ALL_RC": 999}), 2)
    facts, found = judge(machine, ready=True)
    assert [r.ok for r in facts.node.ready] == [True, False]  # GPU 0 is CUDA's first either way
    assert facts.node.ready[1].error == "CUDA opened the GPU at %s" % gpu_address(0)
    [finding] = found["CD218"]
    assert "GPU 1" in finding.title and "cuDeviceGetPCIBusId" in finding.title


def test_a_gpu_nvml_lists_but_cuda_does_not_is_a_finding(machine):
    node(machine, gpus=2, cuda={"NDEV": 1})  # CUDA has one device; NVML and the driver two
    proc_gpus(machine, 2)
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.ok, r.error) for r in facts.node.ready] == [
        (0, True, None), (1, False, "CUDA_ERROR_NO_DEVICE")]
    assert "GPU 1" in found["CD218"][0].title and "cuInit (CUDA_ERROR_NO_DEVICE)" in found["CD218"][0].title


def test_a_gpu_the_driver_lists_but_nvml_does_not_offer_here_is_not_tested(machine):
    node(machine, gpus=1)
    proc_gpus(machine, 2)  # /proc names a GPU that is not this container's
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.bus_id, r.ok) for r in facts.node.ready] == [(0, gpu_address(0), True)]
    assert "CD218" not in found


def test_without_a_gpu_list_a_device_node_with_no_gpu_behind_it_is_skipped(machine):
    node(machine, gpus=1)
    machine.file("/dev/nvidia1")  # a stale node: NVML and CUDA have one GPU
    facts, found = judge(machine, ready=True)
    assert [(r.index, r.ok) for r in facts.node.ready] == [(0, True)] and "CD218" not in found
