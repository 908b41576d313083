"""CD21x: each GPU's health as NVML and the kernel log tell it: off the bus, ECC, row remapping, persistence,
clocks held down, the PCIe link, and (check --ready) whether CUDA really runs on it (Xid events: node_xid.py).

A fault shared by several GPUs is one finding naming them all, never one per GPU."""
from __future__ import annotations

from typing import Dict, List, Sequence

from ..model import Facts, Finding
from ..model_node import GpuHealth
from ..remedies.node import (cooling_fix, drain_and_reset_fix, ecc_on_fix, pending_remap_fix, persistence_daemon_fix,
                             replace_gpu_fix, reseat_fix)
from . import LINUX, RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding


def gpus_text(indices: Sequence[int]) -> str:
    """'GPU 3' or 'GPUs 0, 1 and 5'."""
    if len(indices) == 1:
        return "GPU %d" % indices[0]
    return "GPUs %s and %d" % (", ".join(str(i) for i in indices[:-1]), indices[-1])


def _healthy(facts: Facts) -> List[GpuHealth]:
    return [g for g in facts.node.gpus if not g.lost]


@rule("CD210", "gpu-fell-off-the-bus", "A GPU fell off the bus", platforms=LINUX, section="gpus")
def gpu_lost(facts: Facts, ctx: RuleContext) -> List[Finding]:
    lost = [g.index for g in facts.node.gpus if g.lost]
    if not lost:
        return []
    return [finding(
        ERROR, "%s fell off the bus: NVML answers GPU_IS_LOST" % gpus_text(lost),
        detail="The driver lost contact with the GPU (Xid 79 in the kernel log); nothing runs on it until it is "
               "reset, usually with a reboot. If it recurs, check the slot, the riser and the GPU's power.",
        remedy=drain_and_reset_fix(lost), evidence={"gpus": lost})]


@rule("CD211", "gpu-uncorrectable-ecc", "Uncorrectable ECC errors since the driver loaded", platforms=LINUX,
      section="gpus")
def ecc_errors(facts: Facts, ctx: RuleContext) -> List[Finding]:
    hit = {g.index: g.ecc_volatile_uncorrected for g in _healthy(facts) if g.ecc_volatile_uncorrected}
    if not hit:
        return []
    return [finding(
        ERROR, "%s had uncorrectable ECC errors since the driver loaded" % gpus_text(sorted(hit)),
        detail="An uncorrectable memory error ends the CUDA context that met it; the GPU should be reset before "
               "the next job (its row remapping takes effect then).",
        remedy=drain_and_reset_fix(sorted(hit)), evidence={"volatile_uncorrected": hit})]


@rule("CD212", "gpu-row-remap-pending", "Row remapping is pending or has failed", platforms=LINUX, section="gpus")
def row_remap(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    gpus = _healthy(facts)
    failed = [g.index for g in gpus if (g.remapped_rows or {}).get("failed")]
    pending = [g.index for g in gpus if g.index not in failed and (
        (g.remapped_rows or {}).get("pending") or g.retired_pages_pending)]
    if failed:
        out.append(finding(
            ERROR, "%s: row remapping failed" % gpus_text(failed),
            detail="A memory row went bad and the GPU had no spare row left to remap it to; the memory error can "
                   "return on every job.",
            remedy=replace_gpu_fix(failed), evidence={"remapped_rows": {g.index: g.remapped_rows for g in gpus
                                                                         if g.index in failed}}))
    if pending:
        out.append(finding(
            ERROR, "%s: a row remap is pending until the GPU is reset" % gpus_text(pending),
            detail="The GPU marked a bad memory row (Xid 63); the spare row replaces it only at the next GPU reset "
                   "or reboot, and until then the bad row can fail a job again.",
            remedy=pending_remap_fix(pending),
            evidence={"remapped_rows": {g.index: g.remapped_rows for g in gpus if g.index in pending},
                      "retired_pages_pending": [g.index for g in gpus if g.retired_pages_pending]}))
    return out


@rule("CD213", "gpu-ecc-off", "ECC is switched off", platforms=LINUX, section="gpus")
def ecc_off(facts: Facts, ctx: RuleContext) -> List[Finding]:
    off = [g.index for g in _healthy(facts) if g.ecc_enabled is False]
    if not off:
        return []
    pending = [g.index for g in _healthy(facts) if g.ecc_enabled is False and g.ecc_pending]
    return [finding(
        WARNING, "ECC is off on %s" % gpus_text(off),
        detail="Memory errors go unnoticed and uncorrected: results can be silently wrong."
               + (" ECC is already set to come on at the next reset of %s." % gpus_text(pending) if pending else ""),
        remedy=drain_and_reset_fix(pending) if pending == off else ecc_on_fix(off), evidence={"gpus": off})]


@rule("CD214", "gpu-persistence-off", "Persistence mode is off", platforms=LINUX, section="gpus")
def persistence(facts: Facts, ctx: RuleContext) -> List[Finding]:
    off = [g.index for g in _healthy(facts) if g.persistence_mode is False]
    if not off:
        return []
    return [finding(
        INFO, "Persistence mode is off on %s" % gpus_text(off),
        detail="The driver tears the GPU state down whenever no program holds it, so every job's cuInit pays the "
               "GPU's start again (seconds on large GPUs) and settings such as application clocks are lost.",
        remedy=persistence_daemon_fix(), evidence={"gpus": off})]


@rule("CD215", "gpu-clocks-held-down", "Clocks held down by heat, power or a hardware slowdown", platforms=LINUX,
      section="gpus")
def clocks(facts: Facts, ctx: RuleContext) -> List[Finding]:
    faults = compat_of(ctx).clock_event_faults()
    hit: Dict[int, List[str]] = {g.index: [r for r in g.clock_events or [] if r in faults] for g in _healthy(facts)}
    hit = {i: reasons for i, reasons in hit.items() if reasons}
    if not hit:
        return []
    reasons = sorted({r for rs in hit.values() for r in rs})
    return [finding(
        WARNING, "%s run%s below speed: %s" % (gpus_text(sorted(hit)), "s" if len(hit) == 1 else "",
                                                         ", ".join(r.replace("_", " ") for r in reasons)),
        detail="NVML's clock event reasons say the clocks are held down by the node itself (heat, power delivery, "
               "the board's slowdown signal), not by an idle GPU or a setting [%s]." % compat_of(ctx)
        .clock_events_source(),
        remedy=cooling_fix(sorted(hit)), evidence={"clock_events": hit})]


@rule("CD216", "gpu-pcie-link-degraded", "A GPU's PCIe link runs narrower than it can", platforms=LINUX, section="gpus")
def pcie_link(facts: Facts, ctx: RuleContext) -> List[Finding]:
    narrow = {g.index: g.pcie for g in _healthy(facts) if (g.pcie.get("width") or 0) < (g.pcie.get("width_max") or 0)
              and g.pcie.get("width")}
    if not narrow:
        return []
    first = narrow[min(narrow)]
    return [finding(
        WARNING, "%s: PCIe link x%s of x%s" % (gpus_text(sorted(narrow)), first["width"], first["width_max"]),
        detail="Fewer lanes than the GPU and slot support cut host-to-GPU bandwidth in proportion (a loose card, "
               "a riser, or a slot wired narrower). The link generation can drop while the GPU idles; the width "
               "should not.",
        remedy=reseat_fix(sorted(narrow)), evidence={"pcie": narrow})]


@rule("CD218", "cuda-not-ready", "NVML sees the GPU but CUDA does not run on it", platforms=LINUX, section="gpus")
def not_ready(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if any(g.mig_mode for g in facts.gpus):
        return []  # CUDA numbers MIG instances, not GPUs, there: the kernel's GPU numbers would not be NVML's
    # An exclusive-process GPU another program holds refuses a second context, and one a job has filled has no memory
    # for it: busy, not broken (the node-problem-detector DaemonSet runs --ready beside jobs).
    busy = {g.index for g in facts.gpus if g.running_processes}
    failed = [r for r in facts.node.ready or [] if not r.ok and r.error != "CUDA_ERROR_DEVICE_UNAVAILABLE"
              and not (r.error == "CUDA_ERROR_OUT_OF_MEMORY" and r.index in busy)]
    if not failed:
        return []
    steps = sorted({"%s (%s)" % (r.step, r.error) for r in failed})
    return [finding(
        ERROR, "CUDA does not run on %s: %s" % (gpus_text([r.index for r in failed]), "; ".join(steps)),
        detail="check --ready ran cuInit, a context and a tiny kernel on every GPU, each under a deadline; the "
               "driver answers NVML but the GPU does not compute, so a job placed here fails or hangs.",
        remedy=drain_and_reset_fix([r.index for r in failed]),
        evidence={"ready": [{"index": r.index, "step": r.step, "error": r.error, "ms": r.ms} for r in failed]})]
