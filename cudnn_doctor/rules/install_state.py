"""CD411: an interrupted `cudnn-doctor install` left its staging files and journal in a toolkit or prefix."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..remedies import interrupted_install_fix
from . import RuleContext, rule
from .common import WARNING, finding

_STATE = {
    "staging": "it was stopped while unpacking: no file of the target was changed yet",
    "applying": "it was stopped while placing files: the target may hold part of the new cuDNN and part of the old",
    "committed": "it had finished, but its record was not completed",
}


@rule("CD411", "interrupted-install", "An interrupted cudnn-doctor install left staging files behind", section="cudnn")
def interrupted_install(facts: Facts, ctx: RuleContext) -> List[Finding]:
    out: List[Finding] = []
    for item in facts.cudnn_leftovers:
        if item.get("kind") != "interrupted-install":
            continue
        staged = item.get("staged_bytes") or 0
        size = " (%d staged files, %.0f MiB)" % (item.get("staged_files") or 0, staged / 2**20) if staged else ""
        what = "cuDNN %s" % item["version"] if item.get("version") else "cuDNN"
        out.append(finding(
            WARNING,
            "An install of %s into %s was interrupted and left %s%s" % (what, item["target"], item["path"], size),
            detail="%s (journal status %r, pid %s). Until it is undone, the staged copy takes disk space and the "
                   "next install into this %s first has to repair it." % (
                       _STATE.get(str(item.get("status")), "the journal could not be read"), item.get("status"),
                       item.get("pid", "?"), item.get("target_kind")),
            remedy=interrupted_install_fix(item["target"], item.get("target_kind") or "toolkit",
                                        item.get("owner_uid") == 0),
            evidence={k: item.get(k) for k in ("path", "target", "target_kind", "status", "pid", "version",
                                                "staged_files", "staged_bytes")}))
    return out
