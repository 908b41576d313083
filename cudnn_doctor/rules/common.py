"""What the rule modules share: finding construction and the knowledge base handle.

Fact queries live in cudnn_doctor/queries.py and fix builders in cudnn_doctor/remedies/."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ..knowledge import Compat
from . import RuleContext
from ..model import Facts, Finding, Fix, FrameworkFacts, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def finding(severity: Severity, title: str, detail: str = "", remedy: Optional[Fix] = None,
            evidence: Optional[Dict[str, Any]] = None, catalogue: Sequence[str] = ()) -> Finding:
    """A Finding; `remedy` is a Fix from a cudnn_doctor.remedies builder (None for an info without one).

    Its id and alias are the rule's own: `rules.evaluate` writes them in, so a rule names its id once (in @rule)."""
    return Finding(id="", severity=severity, title=title, detail=detail, remedy=remedy,
                   evidence=dict(evidence or {}), catalogue=list(catalogue))


def compat_of(ctx: RuleContext) -> Compat:
    """The knowledge base the caller handed in (RuleContext.compat); rules never read files themselves."""
    compat = ctx.compat
    if compat is None:
        raise RuntimeError("RuleContext.compat is not set: pass load_compat() when evaluating rules")
    return compat


def framework_named(facts: Facts, fw: FrameworkFacts) -> str:
    """'torch 2.11.0', with its site where the same release sits in another site too (a copy of an environment
    beside the one on PATH): two findings would otherwise read the same (seen on the H200)."""
    twin = any(o is not fw and o.name == fw.name and o.version == fw.version and o.location != fw.location
               for o in facts.python.frameworks)
    return "%s %s%s" % (fw.name, fw.version, " in %s" % fw.location if twin and fw.location else "")
