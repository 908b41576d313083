"""The checks declared whole in compat/checks.toml: one fact against one sourced number. Each registers as a rule of
its own id and alias (so --skip, --list-checks and the report's sections treat it like any other) and is judged here:
the fact is read by its dotted path, the number and words come from the knowledge the run was handed."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..knowledge.declared import DeclaredCheck, shipped_checks
from ..model import Facts, Finding, Severity
from ..remedies.catalogue import table_fix
from . import RuleContext, RuleFunc, rule
from .common import compat_of, finding

_SEVERITY: Dict[str, Severity] = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}


def fact_at(facts: Facts, path: str) -> Any:
    """The fact at a dotted path (host.shm_bytes); None where any step is missing."""
    value: Any = facts
    for step in path.split("."):
        value = getattr(value, step, None)
        if value is None:
            return None
    return value


def shown(number: float, unit: str) -> str:
    """A number as the finding says it: bytes in MiB or GiB, a count as it is."""
    if unit == "bytes":
        size, name = next(((1 << s, n) for s, n in ((30, "GiB"), (20, "MiB"), (10, "KiB")) if number >= 1 << s),
                          (1, "bytes"))
        return "%g %s" % (round(number / size, 1), name)
    return "%g" % number


def judged(check: DeclaredCheck, facts: Facts) -> List[Finding]:
    """The finding of one declared check on these facts: none unless every `when` fact holds and the fact is set (and,
    with a number, under it)."""
    if not all(fact_at(facts, path) for path in check.when):
        return []
    value = fact_at(facts, check.fact)
    if value is None or value is False:
        return []
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if check.below is not None and (not numeric or value >= check.below):
        return []
    limit = shown(check.below, check.unit) if check.below is not None else ""
    return [finding(
        _SEVERITY[check.severity],
        check.title_found.format(value=shown(value, check.unit) if numeric else value, limit=limit),
        detail=check.detail, remedy=table_fix(check.fix),
        evidence={check.fact: value, **({"below": check.below} if check.below is not None else {})})]


def _judge(alias: str) -> RuleFunc:
    def judge(facts: Facts, ctx: RuleContext) -> List[Finding]:
        check: Optional[DeclaredCheck] = compat_of(ctx).declared_check(alias)
        return judged(check, facts) if check is not None else []

    judge.__name__ = judge.__qualname__ = "declared[%s]" % alias
    return judge


# Registered from the shipped table, once, when the rule modules are imported (rules/registry.py).
for _check in shipped_checks():
    rule(_check.id, _check.alias, _check.title, section=_check.section,
         platforms=frozenset(_check.platforms))(_judge(_check.alias))
