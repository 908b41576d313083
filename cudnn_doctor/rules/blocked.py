"""CD002, CD003: what the probes could not read, so a blind spot is never taken for a healthy machine."""
from __future__ import annotations

import os
import shlex
from typing import List

from ..model import BlockedPath, Facts, Finding
from . import rule
from .common import WARNING, finding


def _outside(facts: Facts, path: str) -> str:
    """The path as typed on the machine running the doctor (under --root it lies below the root)."""
    root = facts.host.root or "/"
    return path if root == "/" else root.rstrip("/") + path


def _mount_fix(facts: Facts, b: BlockedPath) -> str:
    path = _outside(facts, b.path or "/")
    folder = shlex.quote(os.path.dirname(path) or "/")
    return ("See whether the file system under it answers (a hung NFS/Lustre mount blocks every read): "
            "`timeout 5 stat %s; findmnt -T %s`, then `timeout 5 ls -l %s`; remount or restore the server, "
            "then run the check again." % (folder, folder, shlex.quote(path)))


@rule("CD002", "probe-timed-out", "A probe ran past its time budget and was abandoned")
def timed_out(facts: Facts, ctx) -> List[Finding]:
    found = []
    for b in facts.blocked:
        if b.reason == "timed-out":
            where = " on %s" % b.path if b.path else ""
            found.append(finding(
                "CD002", WARNING, "The %s probe stalled%s and was abandoned after %.1f s" % (b.probe, where,
                                                                                           b.seconds or 0),
                detail="A read that does not return usually means a hung network mount (a library load that "
                       "does not return: a driver that does not answer). The rest of the report was produced "
                       "without it, so findings about what it checks may be missing.",
                fix=_mount_fix(facts, b) if b.path else
                "Run `cudnn-doctor check --timeout 60 -v` to give the probe more time.",
                evidence={"probe": b.probe, "path": b.path, "seconds": b.seconds}))
        elif b.reason == "not-run":
            found.append(finding(
                "CD002", WARNING, "The %s probe did not run: the run's %.1f s budget was spent" % (b.probe,
                                                                                                  b.seconds or 0),
                detail="Earlier probes used the whole time budget, so this part of the machine was not checked.",
                fix="Fix what the other CD002 findings name, or run `cudnn-doctor check --timeout 60`.",
                evidence={"probe": b.probe}))
    return found


@rule("CD003", "not-a-regular-file", "A FIFO, socket or device lies where a file belongs")
def not_regular(facts: Facts, ctx) -> List[Finding]:
    found = []
    for b in facts.blocked:
        if b.reason != "not-a-regular-file":
            continue
        path = _outside(facts, b.resolved or b.path or "")  # the file to replace is the one the links lead to
        # The path as the probe met it first, then what it resolved to: "/ is a folder" alone names nothing.
        named = "%s (resolves to %s)" % (b.path, b.resolved) if b.resolved else b.path
        found.append(finding(
            "CD003", WARNING, "%s is a %s, not a regular file" % (named, b.kind),
            detail="Programs that read it will block or fail (a pipe waits for a writer forever), so it was not "
                   "read and what it should say was not checked.",
            fix="Look at what it is and replace it with the real file: `ls -l %s` (and `findmnt -T %s` if a "
                "file system is mounted there)." % (shlex.quote(path), shlex.quote(path)),
            evidence={"probe": b.probe, "path": b.path, "kind": b.kind, "resolved": b.resolved}))
    return found
