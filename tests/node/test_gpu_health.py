"""Each GPU health finding (CD210-CD218) fires on a fake NVML/CUDA/kernel log that has the fault and stays quiet
on one that has not; several GPUs with one fault are one finding."""
from __future__ import annotations

from typing import Dict, List, Sequence

import pytest

from kit import Health
from node_kit import node

from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.probes import collect


def judge(m, ready: bool = False, timeout: float = 10.0):
    """(report facts, findings by id) of the fake node, as check (--ready) sees it."""
    host = Host(root=str(m.root), env={"PATH": "/usr/bin"}, native_timeout=timeout)
    facts = collect(host, compat=load_compat(), ready=ready)
    report = collect_report(str(m.root), facts=facts)
    found: Dict[str, List] = {}
    for f in report.findings:
        found.setdefault(f.id, []).append(f)
    return facts, found


# id -> (the GPUs' health with the fault, the same fault's healthy neighbour)
CASES = {
    "CD210": ([Health(), Health(lost=1)], [Health(), Health()]),
    "CD211": ([Health(ecc_uncorrected=3), Health()], [Health(), Health()]),
    "CD212": ([Health(remap_pending=1), Health(remap_pending=1)], [Health(remap_correctable=2), Health()]),
    "CD213": ([Health(ecc=0, ecc_pending=0)] * 2, [Health(ecc=1, ecc_pending=1)] * 2),
    "CD214": ([Health(persist=0)] * 2, [Health(persist=1)] * 2),
    "CD215": ([Health(clock_events=0x40), Health()], [Health(clock_events=0x1 | 0x4), Health()]),
    "CD216": ([Health(width=8), Health()], [Health(gen=1), Health()]),  # an idle link drops its generation
}


@pytest.mark.parametrize("rule_id", sorted(CASES))
@pytest.mark.parametrize("faulty", [True, False], ids=["fault", "healthy"])
def test_each_health_fault_fires_and_its_healthy_twin_does_not(machine, rule_id, faulty):
    health = CASES[rule_id][0 if faulty else 1]
    facts, found = judge(node(machine, gpus=len(health), health=health))
    assert facts.node.health_error is None
    assert len(facts.node.gpus) == len(health)
    if faulty:
        assert len(found.get(rule_id, [])) == 1, found  # one finding, however many GPUs share the fault
    else:
        assert rule_id not in found, found[rule_id][0].title


def test_a_pending_remap_on_two_gpus_is_one_finding_naming_both_with_the_reset(machine):
    _, found = judge(node(machine, gpus=2, health=[Health(remap_pending=1)] * 2))
    [remap] = found["CD212"]
    assert "GPUs 0 and 1" in remap.title and "pending" in remap.title
    assert "nvidia-smi --gpu-reset -i 0" in remap.remedy.text and "reboot" in remap.remedy.text


def test_failed_remapping_asks_for_a_replacement_not_a_reset(machine):
    _, found = judge(node(machine, gpus=1, health=[Health(remap_failed=1, remap_uncorrectable=1)]))
    [failed] = found["CD212"]
    assert "failed" in failed.title and "RMA" in failed.remedy.text


def test_older_gpus_report_retired_pages_waiting_for_a_reset(machine):
    facts, found = judge(node(machine, gpus=1, health=[Health(no_remap=1, retired_pending=1)]))
    assert facts.node.gpus[0].remapped_rows is None and facts.node.gpus[0].retired_pages_pending is True
    assert "CD212" in found


def test_a_lost_gpu_is_named_and_its_reads_are_not_judged(machine):
    facts, found = judge(node(machine, gpus=2, health=[Health(), Health(lost=1, ecc=0, persist=0)]))
    assert [g.lost for g in facts.node.gpus] == [False, True]
    assert "GPU 1 fell off the bus" in found["CD210"][0].title
    assert "CD213" not in found and "CD214" not in found


@pytest.mark.parametrize("log, severity", [
    ("NVRM: Xid (PCI:0000:20:00): 79, pid=1, name=python, GPU has fallen off the bus.", "error"),
    ("NVRM: Xid (PCI:0000:10:00): 13, pid=7, name=python, Graphics Exception: ESR 0x4041b0", "warning"),
    ("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Fatal, Link 32 egress non-posted PRIV error", "error"),
    ("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Non-fatal, Link 30 LTSSM Fault Up", "warning"),
    ("usb 1-1: new high-speed USB device number 2", None),
])
def test_xid_events_since_boot_are_judged_by_the_catalogue(machine, log, severity):
    node(machine, gpus=2)
    machine.file("/dev/kmsg", "6,1,100,-;Linux version 6.8.0\n4,2,5000000,-;%s\n4,3,6000000,-;%s\n" % (log, log))
    facts, found = judge(machine)
    assert facts.node.kernel_log == "/dev/kmsg"
    if severity is None:
        assert "CD217" not in found and not facts.node.xid_events
        return
    [event] = found["CD217"]
    assert event.severity.value == severity and "(2 times)" in event.title
    if "Xid (PCI:0000:20:00): 79" in log:  # the catalogue's RESTART_BM: no reset reaches a GPU off the bus
        assert "on GPU 1" in event.title and "sudo reboot" in event.remedy.text and "gpu-reset" not in event.remedy.text


@pytest.mark.parametrize("cuda, step", [
    ({}, None),
    ({"CTX_RC": 999}, "cuDevicePrimaryCtxRetain (CUDA_ERROR_UNKNOWN)"),
    ({"LOAD_RC": 218}, "cuModuleLoadData (CUDA_ERROR_INVALID_PTX)"),
    ({"INITRC": 100}, "cuInit (CUDA_ERROR_NO_DEVICE)"),
    ({"WRONG_RESULT": True}, "result (None)"),
])
def test_ready_runs_the_kernel_on_every_gpu_and_nvml_alone_is_never_a_pass(machine, cuda, step):
    facts, found = judge(node(machine, gpus=2, cuda=cuda), ready=True)
    assert len(facts.gpus) == 2  # NVML answers in every case
    assert [r.index for r in facts.node.ready] == [0, 1]
    if step is None:
        assert all(r.ok for r in facts.node.ready) and "CD218" not in found
        assert [r.bus_id for r in facts.node.ready] == [g.bus_id for g in facts.node.gpus]
    else:
        [finding] = found["CD218"]
        assert finding.severity.value == "error" and "GPUs 0 and 1" in finding.title and step in finding.title


def test_a_kernel_that_never_returns_is_stopped_at_the_deadline(machine):
    facts, found = judge(node(machine, gpus=1, cuda={"HANG_IN_LAUNCH": True}), ready=True, timeout=2.0)
    [result] = facts.node.ready
    assert not result.ok and "did not answer" in (result.error or "")
    assert "CD218" in found


def test_without_ready_no_kernel_runs(machine):
    facts, found = judge(node(machine, gpus=1, cuda={"CTX_RC": 999}))
    assert facts.node.ready is None and "CD218" not in found


def test_a_busy_exclusive_gpu_is_not_reported_as_broken(machine):
    facts, found = judge(node(machine, gpus=1, cuda={"CTX_RC": 46}), ready=True)
    assert facts.node.ready[0].step == "cuDevicePrimaryCtxRetain"
    assert "CD218" not in found


def test_mig_gpus_are_not_judged_by_gpu_number(machine):
    from kit import Gpu

    machine.driver("580.95.05", cuda=13000, gpus=[Gpu(mig=1)], cuda_defines={"CTX_RC": 999})
    facts, found = judge(machine, ready=True)
    assert facts.gpus[0].mig_mode and not facts.node.ready[0].ok
    assert "CD218" not in found


def test_a_driver_that_crashes_in_a_health_read_keeps_every_other_fact(machine):
    node(machine, gpus=2, nvml={"CRASH_IN_HEALTH": True})
    facts, _ = judge(machine)
    assert len(facts.gpus) == 2 and facts.driver.version == "580.95.05"
    assert facts.node.health_error == "crashed (SIGSEGV)" and not facts.node.gpus


@pytest.mark.parametrize("processes, fires", [(1, False), (0, True)])
def test_a_gpu_a_job_has_filled_is_busy_but_an_empty_one_out_of_memory_is_not(machine, processes, fires):
    from kit import Gpu

    machine.driver("580.95.05", cuda=13000, gpus=[Gpu(processes=processes)], cuda_defines={"CTX_RC": 2})
    facts, found = judge(machine, ready=True)
    assert facts.node.ready[0].error == "CUDA_ERROR_OUT_OF_MEMORY" and ("CD218" in found) == fires
