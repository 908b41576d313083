"""CD710: frameworks of one Python environment that no one set of cuDNN libraries serves, judged by what each accepts
at run time (compat [cudnn_acceptance]), not by their pins: they share the one site-packages/nvidia/cudnn folder and
the loader's one libcudnn.so.N per process. Only then one environment per framework, each with its own pins."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..queries import cudnn_pin_floor, working_copy
from ..versions import ver
from ..remedies.environments import Need, separate_environments_fix, solve
from . import LINUX, RuleContext, rule
from .common import ERROR, WARNING, compat_of, finding


def _served(facts: Facts, need: Need) -> bool:
    """Whether the cuDNN this framework resolves today is one it runs with: its major, and a minor no older than
    the one it was built with (else its pin's)."""
    fw = need.framework
    res = fw.resolved_cudnn
    if res is None or not res.path or res.error:
        return False
    copy = working_copy(facts, fw)
    have = ver(copy.version) if copy is not None and copy.version else None
    built = ver(fw.cudnn_version) if fw.cudnn_version and "." in fw.cudnn_version else None
    floor = built if built is not None and built.release[0] == need.major else cudnn_pin_floor(fw, need.major)
    if have is None or have.release[0] != need.major:
        return False
    return floor is None or have.release[:2] >= floor.release[:2]


@rule("CD710", "frameworks-need-separate-environments",
      "No single cuDNN install serves every framework of one environment", platforms=LINUX, section="python")
def separate_environments(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    for site in sorted({fw.location for fw in facts.python.frameworks}):
        needs, layout, why = solve(facts, compat, site)
        if layout is not None or len(needs) < 2:
            continue
        failing = [n for n in needs if not _served(facts, n)]
        # The frameworks it fails are named with their release (the finding is about them); the others by name.
        named = [n.label for n in failing] or [needs[0].label]
        others = [n.framework.name for n in needs if n.label not in named]
        out.append(finding(
            ERROR if failing else WARNING,
            "%s cannot share %s: %s" % (" and ".join(named + others), site, why),
            detail="Every nvidia-cudnn-* wheel installs into the one site-packages/nvidia/cudnn folder, and a process "
                   "loads one libcudnn.so.N: %s. What each accepts at run time: %s. Nothing else serves them all, so "
                   "each framework gets its own virtual environment." % (why, "; ".join(
                       "%s wants %s" % (n.label, n.wants) for n in needs)),
            remedy=separate_environments_fix(compat, needs, facts),
            evidence={"framework": (failing or needs)[0].framework.name, "site": site, "why": why,
                      "needs": {n.label: n.wants for n in needs}}, catalogue=["G4"]))
    return out
