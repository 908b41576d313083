"""What the rule modules share: finding construction and the knowledge base handle.

Fact queries live in cudnn_doctor/queries.py and fix builders in cudnn_doctor/remedies/."""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from ..knowledge import Compat
from . import RuleContext
from ..model import Finding, Fix, Severity

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

