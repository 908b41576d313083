"""Rules: pure functions of (facts, compat data, options) that return findings."""
from __future__ import annotations

from dataclasses import dataclass, field

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..model import Facts, Finding


@dataclass
class RuleContext:
    """What the user asked the judgement to consider, beyond the machine itself."""

    compat: Any = None  # cudnn_doctor.knowledge.Compat
    requires: List[str] = field(default_factory=list)  # --require expressions, e.g. "cuda>=11.8"
    target: Optional[str] = None  # --for FRAMEWORK[==VERSION], e.g. "dl4j==1.0.0-beta6"
    smoke: Optional[Dict[str, Any]] = None  # result of the cuDNN smoke test, when it ran


@dataclass(frozen=True)
class Rule:
    id: str  # stable code, e.g. "CD101"
    alias: str  # kebab-case name
    title: str
    func: Callable[[Facts, RuleContext], List[Finding]]


RULES: List[Rule] = []


def rule(id: str, alias: str, title: str) -> Callable:
    """Register a rule function under a stable id."""

    def wrap(func: Callable[[Facts, RuleContext], List[Finding]]) -> Callable:
        RULES.append(Rule(id, alias, title, func))
        return func

    return wrap


def evaluate(facts: Facts, context: RuleContext) -> Tuple[List[Finding], List[str]]:
    """Run every rule; a rule that raises becomes a warning finding (a doctor bug) instead of a crash."""
    import importlib.util

    if importlib.util.find_spec(__name__ + ".registry") is not None:
        importlib.import_module(__name__ + ".registry")  # the rule modules register themselves on import

    findings: List[Finding] = []
    ran: List[str] = []
    for r in RULES:
        ran.append(r.id)
        try:
            for f in r.func(facts, context):
                if not f.alias:
                    f.alias = r.alias
                findings.append(f)
        except Exception as exc:  # a rule bug must not hide the other diagnoses
            from ..model import Severity
            from ..remedies.doctor import rule_crashed_fix

            findings.append(
                Finding(
                    id=r.id,
                    severity=Severity.WARNING,
                    title="Rule %s (%s) could not run: %s: %s" % (r.id, r.alias, type(exc).__name__, exc),
                    detail="This is a cudnn-doctor bug; the other checks are unaffected.",
                    remedy=rule_crashed_fix(),
                    alias=r.alias,
                )
            )
    findings.sort(key=lambda f: (-f.severity.rank, f.id))
    return findings, ran
