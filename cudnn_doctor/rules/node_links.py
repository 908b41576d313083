"""CD219-CD224: the GPUs between them: the NVLink fabric, links down or erroring, CUDA P2P between GPUs that
should have it, and the IOMMU and PCIe ACS settings that send peer traffic through the CPU (NCCL hangs)."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..remedies.node import acs_off_fix, drain_and_reset_fix, iommu_passthrough_fix
from . import LINUX, RuleContext, rule
from .common import ERROR, INFO, WARNING, finding
from .node_health import gpus_text

# nvml.h's nvmlGpuFabricState_t: NOT_SUPPORTED 0, NOT_STARTED 1, IN_PROGRESS 2, COMPLETED 3. A GPU that does not
# take part in a fabric (no NVSwitch, or NVLink passed through to a VM, as on the lent 4-GPU H100) says 0: no fault.
_FABRIC_NOT_SUPPORTED = 0
_FABRIC_COMPLETED = 3


@rule("CD219", "nvlink-fabric-not-ready", "A GPU is not registered with the NVLink fabric", platforms=LINUX,
      section="gpus")
def fabric(facts: Facts, ctx: RuleContext) -> List[Finding]:
    bad = [g.index for g in facts.node.gpus if g.fabric and g.fabric.get("state") != _FABRIC_NOT_SUPPORTED and (
        g.fabric.get("state") != _FABRIC_COMPLETED or g.fabric.get("status"))]
    if not bad:
        return []
    return [finding(
        ERROR, "%s %s not joined the NVLink fabric" % (gpus_text(bad), "has" if len(bad) == 1 else "have"),
        detail="On NVSwitch systems CUDA waits for Fabric Manager to register each GPU; until then cuInit fails "
               "with 'system not yet initialized' (802). CD109 says whether Fabric Manager is installed and enabled.",
        remedy=drain_and_reset_fix(bad), evidence={"fabric": {g.index: g.fabric for g in facts.node.gpus
                                                              if g.index in bad}})]


@rule("CD220", "nvlink-down", "NVLinks are down", platforms=LINUX, section="gpus")
def links_down(facts: Facts, ctx: RuleContext) -> List[Finding]:
    # A GPU with every link down and peers that have none is a board without NVLink bridges, not a fault.
    down = {g.index: g.nvlinks_down for g in facts.node.gpus if g.nvlinks_down and (
        len(g.nvlinks_down) < g.nvlinks or any(h.nvlinks and not h.nvlinks_down for h in facts.node.gpus))}
    if not down:
        return []
    return [finding(
        ERROR, "%s: NVLink%s down" % (gpus_text(sorted(down)), " " + ", ".join(
            "%d of %d" % (len(v), next(g.nvlinks for g in facts.node.gpus if g.index == i)) for i, v in
            sorted(down.items()))),
        detail="Peer traffic over the remaining links is slower, and NCCL may fall back to PCIe or fail; a link "
               "that stays down after a reset is a hardware fault.",
        remedy=drain_and_reset_fix(sorted(down)), evidence={"links_down": down})]


@rule("CD221", "nvlink-errors", "NVLink error counters are not zero", platforms=LINUX, section="gpus")
def link_errors(facts: Facts, ctx: RuleContext) -> List[Finding]:
    counts = {g.index: {k: v for k, v in g.nvlink_errors.items() if v} for g in facts.node.gpus}
    counts = {i: c for i, c in counts.items() if c}
    if not counts:
        return []
    return [finding(
        INFO, "%s: NVLink errors counted (%s)" % (gpus_text(sorted(counts)), ", ".join(sorted(
            {k.replace("_", " ") for c in counts.values() for k in c}))),
        detail="Replays and recoveries are retried by the link itself; counts that keep growing between checks "
               "point at a link going bad (nvidia-smi nvlink -e shows them per link).",
        evidence={"nvlink_errors": counts})]


@rule("CD222", "p2p-unavailable", "CUDA P2P does not work between GPUs that should have it", platforms=LINUX,
      section="gpus")
def p2p(facts: Facts, ctx: RuleContext) -> List[Finding]:
    bad = [p for p in facts.node.pairs if p.p2p_read not in (None, "OK") and (p.link or "").startswith(
        ("NV", "PIX", "PXB"))]
    if not bad:
        return []
    pairs = ", ".join("%d-%d (%s, %s)" % (p.gpus[0], p.gpus[1], p.link, p.p2p_read) for p in bad)
    acs = [a["bridge"] for a in facts.node.acs]
    return [finding(
        WARNING, "No CUDA P2P between GPUs joined by NVLink or one PCIe switch: %s" % pairs,
        detail="Peer copies go through host memory instead, and NCCL runs slower or hangs. The IOMMU (CD223) and "
               "PCIe ACS (CD224) are the usual causes on bare metal; nvidia-smi topo -p2p r shows the same table.",
        remedy=acs_off_fix(acs) if acs else None,
        evidence={"pairs": [{"gpus": p.gpus, "link": p.link, "p2p_read": p.p2p_read} for p in bad]})]


@rule("CD223", "iommu-translates-gpu-dma", "The IOMMU translates the GPUs' DMA", platforms=LINUX, section="gpus")
def iommu(facts: Facts, ctx: RuleContext) -> List[Finding]:
    domains = facts.node.iommu.get("gpu_domains") or {}
    translated = sorted(bus for bus, kind in domains.items() if kind.startswith("DMA"))
    if len(domains) < 2 or not translated or facts.host.in_container:
        return []
    return [finding(
        WARNING, "The IOMMU translates DMA for %d of %d GPUs (domain type %s)" % (
            len(translated), len(domains), domains[translated[0]]),
        detail="Peer-to-peer traffic between GPUs is then remapped by the CPU's IOMMU or refused, which NVIDIA's "
               "NCCL troubleshooting names as a cause of hangs and slow all-reduce; passthrough mode keeps the IOMMU "
               "for VMs and devices that need it.",
        remedy=iommu_passthrough_fix(), evidence={"gpu_domains": domains, "cmdline": facts.node.iommu.get("cmdline")})]


@rule("CD224", "pcie-acs-redirects-p2p", "PCIe ACS redirects peer traffic between GPUs", platforms=LINUX,
      section="gpus")
def acs(facts: Facts, ctx: RuleContext) -> List[Finding]:
    redirecting = [a for a in facts.node.acs if {"ReqRedir", "CmpltRedir"} & set(a["control"])]
    if not redirecting or facts.host.in_container:
        return []
    bridges = sorted({a["bridge"] for a in redirecting})
    return [finding(
        WARNING, "PCIe ACS redirection is on in %d bridge%s above the GPUs" % (
            len(bridges), "" if len(bridges) == 1 else "s"),
        detail="Access Control Services send every peer request up to the root complex, so GPU-to-GPU traffic "
               "under one PCIe switch takes the long way, or fails: NCCL hangs or crawls.",
        remedy=acs_off_fix(bridges), evidence={"acs": redirecting})]
