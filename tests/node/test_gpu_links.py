"""The GPUs between them (CD219-CD224): fabric, NVLinks down or erroring, P2P, the IOMMU and PCIe ACS, each with a
fake node that has the fault and one that has not; and the topology words match nvidia-smi topo -m's."""
from __future__ import annotations

import pytest

from kit import Health
from node_kit import ROOT_PORT, UPSTREAM, node, pci_gpus
from test_gpu_health import judge

LINKED = [Health(nvlinks=18)] * 2


def test_two_gpus_joined_by_18_links_read_as_nvidia_smi_prints_them(machine):
    facts, found = judge(node(machine, gpus=2, health=LINKED))
    [pair] = facts.node.pairs
    assert (pair.gpus, pair.link, pair.p2p_read, pair.p2p_nvlink) == ([0, 1], "NV18", "OK", None)
    assert [g.nvlinks for g in facts.node.gpus] == [18, 18] and not facts.node.gpus[0].nvlinks_down
    assert not {"CD219", "CD220", "CD221", "CD222"} & set(found)


def test_gpus_on_nvswitches_are_nv18_between_every_pair(machine):
    facts, found = judge(node(machine, gpus=4, health=[Health(nvlinks=18)] * 4, nvml={"FAKE_NVSWITCH": True}))
    assert [(p.gpus, p.link) for p in facts.node.pairs] == [([a, b], "NV18") for a in range(4) for b in range(a + 1, 4)]
    assert "CD222" not in found and "CD220" not in found


def test_gpus_bridged_in_pairs_are_nvlinked_only_to_their_partner(machine):
    facts, _ = judge(node(machine, gpus=4, health=[Health(nvlinks=4)] * 4, nvml={"FAKE_TOPO": 50}))
    links = {tuple(p.gpus): p.link for p in facts.node.pairs}
    assert links[(0, 1)] == links[(2, 3)] == "NV4" and links[(0, 2)] == links[(1, 3)] == "SYS"


@pytest.mark.parametrize("topology, word", [(10, "PIX"), (20, "PXB"), (30, "PHB"), (40, "NODE"), (50, "SYS")])
def test_gpus_without_nvlink_are_named_by_their_common_pcie_ancestor(machine, topology, word):
    facts, _ = judge(node(machine, gpus=2, nvml={"FAKE_TOPO": topology}))
    assert facts.node.pairs[0].link == word and facts.node.pairs[0].p2p_nvlink == "NS"


@pytest.mark.parametrize("rule_id, fault, healthy", [
    ("CD219", {"FAKE_FABRIC": 1}, {"FAKE_FABRIC": 3}),
    ("CD222", {"FAKE_P2P": 5}, {"FAKE_P2P": 0}),
])
def test_fabric_and_p2p_faults_fire_and_their_healthy_twins_do_not(machine, rule_id, fault, healthy):
    _, found = judge(node(machine, gpus=2, health=LINKED, nvml=fault))
    assert len(found.get(rule_id, [])) == 1
    _, found = judge(node(machine, gpus=2, health=LINKED, nvml=healthy))
    assert rule_id not in found


def test_a_gpu_outside_any_fabric_is_not_a_fault(machine):
    # The lent 4-GPU H100 (NV18 between every pair, no fabric seen from its VM) reports state 0, NOT_SUPPORTED, on
    # every GPU while CUDA runs on all four: CD219 said "not joined the NVLink fabric" there, an error.
    _, found = judge(node(machine, gpus=2, health=LINKED, nvml={"FAKE_FABRIC": 0}))
    assert "CD219" not in found


def test_no_p2p_across_the_cpu_sockets_is_not_a_fault(machine):
    _, found = judge(node(machine, gpus=2, nvml={"FAKE_P2P": 3, "FAKE_TOPO": 50}))
    assert "CD222" not in found


@pytest.mark.parametrize("rule_id, fault", [
    ("CD220", [Health(nvlinks=18, nvlinks_down=2), Health(nvlinks=18)]),
    ("CD221", [Health(nvlinks=18, nvlink_replay=7), Health(nvlinks=18)]),
])
def test_nvlink_faults_fire_and_a_clean_fabric_does_not(machine, rule_id, fault):
    facts, found = judge(node(machine, gpus=2, health=fault), ready=True)  # the counters are read with --ready
    [hit] = found[rule_id]
    assert "GPU 0" in hit.title and "GPU 1" not in hit.title
    if rule_id == "CD220":
        assert facts.node.gpus[0].nvlinks_down == [0, 1] and "2 of 18" in hit.title


def test_the_error_counters_are_nvidia_smis_three_and_read_only_with_ready(machine):
    fault = [Health(nvlinks=18, nvlink_replay=7), Health(nvlinks=18)]
    facts, found = judge(node(machine, gpus=2, health=fault), ready=True)
    assert [g.nvlink_errors for g in facts.node.gpus] == [{"replay": 7 * 18, "recovery": 0, "crc": 0},
                                                          {"replay": 0, "recovery": 0, "crc": 0}]
    facts, found = judge(node(machine, gpus=2, health=fault))
    assert [g.nvlink_errors for g in facts.node.gpus] == [{}, {}] and "CD221" not in found


def test_a_pair_joined_link_to_link_does_not_ask_nvlink_p2p_status(machine):
    # The links' far ends already say NVLink joins them; NVSwitch pairs still ask (the previous tests).
    facts, _ = judge(node(machine, gpus=2, health=LINKED))
    assert facts.node.pairs[0].p2p_nvlink is None and facts.node.pairs[0].link == "NV18"


def test_a_board_without_nvlink_bridges_has_no_links_down(machine):
    facts, found = judge(node(machine, gpus=2))
    assert [g.nvlinks for g in facts.node.gpus] == [0, 0] and "CD220" not in found


@pytest.mark.parametrize("domain, fires", [("DMA-FQ", True), ("DMA", True), ("identity", False)])
def test_an_iommu_translating_gpu_dma_is_named_with_iommu_pt(machine, domain, fires):
    node(machine, gpus=2)
    pci_gpus(machine, 2, iommu=domain)
    facts, found = judge(machine)
    assert set(facts.node.iommu["gpu_domains"].values()) == {domain}
    if fires:
        assert "iommu=pt" in found["CD223"][0].remedy.text
    else:
        assert "CD223" not in found


@pytest.mark.parametrize("control, fires", [(0x1D, True), (0x0C, True), (0x01, False), (0x00, False)])
def test_acs_redirection_in_the_switch_between_gpus_is_named_with_setpci(machine, control, fires):
    node(machine, gpus=2)
    pci_gpus(machine, 2, acs=control)
    facts, found = judge(machine)
    bridges = {a["bridge"] for a in facts.node.acs}
    assert ROOT_PORT not in bridges  # the root port is where peer traffic between sockets goes anyway
    if fires:
        assert UPSTREAM in bridges
        assert "sudo setpci -s %s ECAP_ACS+0x6.w=0000" % UPSTREAM in found["CD224"][0].remedy.text
    else:
        assert "CD224" not in found


def test_config_space_a_user_cannot_read_is_noted_not_judged(machine):
    node(machine, gpus=2)
    pci_gpus(machine, 2, acs=0x1D)
    for config in machine.root.glob("sys/devices/pci0000:00/**/config"):
        config.write_bytes(bytes(64))  # what sysfs gives a user
    facts, found = judge(machine)
    assert facts.node.acs_unreadable and not facts.node.acs and "CD224" not in found
