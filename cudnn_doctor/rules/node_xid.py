"""CD217, CD225: the driver's Xid and SXid events since boot, judged by NVIDIA's Xid catalogue, and a kernel log that
could not be read, which leaves them unchecked (a blind spot, never "no Xid")."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..model import Facts, Finding, Fix, Severity
from ..remedies.node import (cooling_fix, drain_and_reboot_fix, drain_and_reset_fix, kernel_log_access_fix,
                             restart_job_fix)
from . import LINUX, RuleContext, rule
from .common import ERROR, INFO, WARNING, compat_of, finding

_SOURCES = ("/dev/kmsg", "journalctl -k -b")  # where the node probe reads the kernel log, in order


def _judged(row: Optional[Dict[str, Any]], gpus: Sequence[int]) -> Tuple[Severity, Optional[Fix]]:
    """The severity and fix for the catalogue's action (compat/node_health.toml says what each bucket asks)."""
    action = row["action"] if row else None
    if action == "reset_gpu":
        return ERROR, drain_and_reset_fix(gpus)
    if action == "reboot":
        return ERROR, drain_and_reboot_fix(gpus)
    if action == "restart_app":
        return WARNING, restart_job_fix()
    if action == "check_power":
        return WARNING, cooling_fix(gpus)
    if action == "note":
        return INFO, None
    return WARNING, None  # a code the table does not hold: reported with its number and the catalogue


@rule("CD217", "gpu-xid-events", "The driver logged Xid or SXid errors since boot", platforms=LINUX, section="gpus")
def xid(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    by_bus = {(g.bus_id or "")[:10]: g.index for g in facts.node.gpus}  # Xid names the device without function
    every = [g.index for g in facts.node.gpus]
    for event in facts.node.xid_events:
        gpu = by_bus.get(event["pci"][:10])
        where = "GPU %d" % gpu if gpu is not None else "PCI %s" % event["pci"]
        row = compat.xid(event["code"]) if event["kind"] == "Xid" else None
        if event["kind"] == "SXid":
            fatal = event["text"].split(",")[0].strip().lower() == compat.sxid_fatal_word().lower()  # not Non-fatal
            severity, fix = (ERROR, drain_and_reset_fix(every)) if fatal else (WARNING, None)
            name = event["text"] or "an NVSwitch error"
        else:
            severity, fix = _judged(row, [gpu] if gpu is not None else every)
            name = "%s (%s)" % (row["name"], row["mnemonic"]) if row else \
                "a code the doctor's table does not hold; see %s" % compat.xid_source()
        out.append(finding(
            severity, "%s %d on %s since boot%s: %s" % (
                event["kind"], event["code"], where, " (%d times)" % event["count"] if event["count"] > 1 else "",
                name),
            detail="From the kernel log (%s); NVIDIA's Xid catalogue says what each code asks of the operator%s "
                   "[%s]." % (facts.node.kernel_log, " (%s)" % row["bucket"] if row else "", compat.xid_source()),
            remedy=fix, evidence=dict(event, catalogue=compat.xid_source())))
    return out


@rule("CD225", "kernel-log-unreadable", "The kernel log could not be read, so Xid events were not checked",
      platforms=LINUX, section="gpus")
def kernel_log_unreadable(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if facts.node.kernel_log or facts.host.root != "/" or not (facts.node.gpus or facts.gpus):
        return []  # read, or a --root tree (no running kernel), or no GPU to have Xids
    tried = [place for place in facts.searched.get("node", []) if place in _SOURCES]
    return [finding(
        INFO, "Could not read the kernel log (%s): the driver's Xid events since boot were not checked" %
        ", ".join(tried or _SOURCES),
        detail="kernel.dmesg_restrict=1 closes /dev/kmsg to users, and the journal shows kernel messages only to "
               "root and the groups adm and systemd-journal; inside a container neither may be there. No Xid "
               "finding here means 'not looked at', not 'none'.",
        remedy=kernel_log_access_fix(), evidence={"tried": tried})]
