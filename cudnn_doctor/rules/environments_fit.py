"""CD710: frameworks of one Python environment that no one set of cuDNN libraries serves, judged by what each accepts
at run time (compat [cudnn_acceptance]), not by their pins: they share the one site-packages/nvidia/cudnn folder and
the loader's one libcudnn.so.N per process. The fix moves one framework to its release's build for the others' CUDA
where PyPI has one (remedies/environment_rebuild.py); only where none is, one environment per framework."""
from __future__ import annotations

from typing import List

from ..model import Facts, Finding
from ..queries import cudnn_pin_floor, framework_kind, working_copy
from ..versions import ver
from ..remedies.environments import Need, beside_framework, shared_or_separate_fix, solve
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
        solved = solve(facts, compat, site)
        needs, why, rebuilt = solved.needs, solved.why, solved.rebuilt
        if solved.layout is not None or len(needs) < 2:
            continue
        failing = [n for n in needs if not _served(facts, n)]
        # The frameworks it fails are named with their release (the finding is about them); the others by name.
        named = [n.label for n in failing] or [needs[0].label]
        others = [n.framework.name for n in needs if n.label not in named]
        then = ("%s %s also has a build for CUDA %s on %s, which this machine runs: with it they share one cuDNN, "
                "and the programs stay as they are" % (
                    framework_kind(rebuilt[1].need.framework) or rebuilt[1].need.framework.name,
                    rebuilt[1].need.framework.version.split("+")[0], rebuilt[1].cuda, rebuilt[1].where)
                if rebuilt is not None else "Nothing else serves them all, so each framework gets its own virtual "
                                              "environment")
        out.append(finding(
            ERROR if failing else WARNING,
            "%s cannot share %s: %s" % (" and ".join(named + others), site, why),
            detail="Every nvidia-cudnn-* wheel installs into the one site-packages/nvidia/cudnn folder, and a process "
                   "loads one libcudnn.so.N: %s. What each accepts at run time: %s. %s." % (why, "; ".join(
                       "%s wants %s" % (n.label, n.wants) for n in needs), then),
            # run as the frameworks' own fixes run: pip without PYTHONPATH's copies, a shadowing copy taken away
            remedy=beside_framework(facts, (failing or needs)[0].framework, shared_or_separate_fix(facts, compat, solved),
                                    whole_site=True),
            evidence={"framework": (failing or needs)[0].framework.name, "site": site, "why": why,
                      "needs": {n.label: n.wants for n in needs}}, catalogue=["G4"]))
    return out
