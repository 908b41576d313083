"""CD002, CD003: what the probes could not read, so a blind spot is never taken for a healthy machine."""
from __future__ import annotations

from typing import List

from ..model import BlockedPath, Facts, Finding, Fix
from . import RuleContext, rule
from ..remedies.doctor import hung_mount_fix, more_time_fix, probes_not_run_fix, special_file_fix
from .common import WARNING, finding


def _mount_fix(facts: Facts, b: BlockedPath) -> Fix:
    return hung_mount_fix(b.path or "/")


@rule("CD002", "probe-timed-out", "A probe ran past its time budget and was abandoned", section="doctor")
def timed_out(facts: Facts, ctx: RuleContext) -> List[Finding]:
    found = []
    for b in facts.blocked:
        if b.reason == "timed-out":
            where = " on %s" % b.path if b.path else ""
            found.append(finding(
                WARNING, "The %s probe stalled%s and was abandoned after %.1f s" % (b.probe, where,
                                                                                           b.seconds or 0),
                detail="A read that does not return usually means a hung network mount (a library load that "
                       "does not return: a driver that does not answer). The rest of the report was produced "
                       "without it, so findings about what it checks may be missing.",
                remedy=_mount_fix(facts, b) if b.path else
                more_time_fix(),
                evidence={"probe": b.probe, "path": b.path, "seconds": b.seconds}))
        elif b.reason == "not-run":
            found.append(finding(
                WARNING, "The %s probe did not run: the run's %.1f s budget was spent" % (b.probe,
                                                                                                  b.seconds or 0),
                detail="Earlier probes used the whole time budget, so this part of the machine was not checked.",
                remedy=probes_not_run_fix(),
                evidence={"probe": b.probe}))
    return found


@rule("CD003", "not-a-regular-file", "A FIFO, socket or device lies where a file belongs", section="doctor")
def not_regular(facts: Facts, ctx: RuleContext) -> List[Finding]:
    found = []
    for b in facts.blocked:
        if b.reason != "not-a-regular-file":
            continue
        path = b.resolved or b.path or ""  # the file to replace is the one the links lead to
        # The path as the probe met it first, then what it resolved to: "/ is a folder" alone names nothing.
        named = "%s (resolves to %s)" % (b.path, b.resolved) if b.resolved else b.path
        found.append(finding(
            WARNING, "%s is a %s, not a regular file" % (named, b.kind),
            detail="Programs that read it will block or fail (a pipe waits for a writer forever), so it was not "
                   "read and what it should say was not checked.",
            remedy=special_file_fix(path),
            evidence={"probe": b.probe, "path": b.path, "kind": b.kind, "resolved": b.resolved}))
    return found
