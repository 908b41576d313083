"""CD710: frameworks of one Python environment whose cuDNN pins no single install meets (they share the one
site-packages/nvidia/cudnn folder): one environment per framework, each with its own pins."""
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
        needs, answer = solve(facts, compat, site)
        if answer is not None or len(needs) < 2:
            continue
        failing = [n for n in needs if not _served(facts, n)]
        # The frameworks it fails are named with their release (the finding is about them); the others by name.
        named = [n.label for n in failing] or [needs[0].label]
        others = [n.framework.name for n in needs if n not in failing and n.label not in named]
        out.append(finding(
            ERROR if failing else WARNING,
            "%s cannot have the cuDNN of %s in %s: %s" % (
                " and ".join(named), "its pin" if len(named) == 1 else "their pins", site,
                "; ".join("%s wants %s" % (n.label if n.label in named else n.framework.name, n.wants)
                          for n in needs)),
            detail="Every nvidia-cudnn-* wheel installs into the one site-packages/nvidia/cudnn folder, so installing "
                   "the release one framework pins replaces the one %s needs; no release meets every pin. Give each "
                   "framework its own virtual environment." % (", ".join(others) or "the other"),
            remedy=separate_environments_fix(compat, needs),
            evidence={"framework": (failing or needs)[0].framework.name, "site": site,
                      "needs": {n.label: n.wants for n in needs}}, catalogue=["G4"]))
    return out
