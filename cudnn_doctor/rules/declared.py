"""The checks declared whole in compat/checks.toml: one fact against one sourced number. Each registers as a rule of
its own id and alias (so --skip, --list-checks and the report's sections treat it like any other) and is judged here:
the fact is read by its dotted path, the number and words come from the knowledge the run was handed."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ..knowledge.declared import ENVIRONMENT, DeclaredCheck, shipped_checks
from ..model import Facts, Finding, Fix, Severity
from ..remedies.catalogue import table_fix
from ..remedies.environment import environment_variable_fix
from . import RuleContext, RuleFunc, rule
from .common import compat_of, finding

_SEVERITY: Dict[str, Severity] = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}


def fact_at(facts: Facts, path: str) -> Any:
    """The fact at a dotted path (host.shm_bytes, environment.CUDA_CACHE_DISABLE); None where any step is missing."""
    value: Any = facts
    for step in path.split("."):
        value = value.get(step) if isinstance(value, Mapping) else getattr(value, step, None)
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
    said = value.strip() if isinstance(value, str) else None  # an environment variable's value, as set
    if check.equals is not None and (said is None or said.lower() != check.equals.lower()):
        return []
    number = int(said) if said is not None and said.isdigit() else value  # "268435456" judged as the number
    numeric = isinstance(number, (int, float)) and not isinstance(number, bool)
    if check.below is not None and (not numeric or number >= check.below):
        return []
    limit = shown(check.below, check.unit) if check.below is not None else ""
    return [finding(
        _SEVERITY[check.severity],
        check.title_found.format(value=shown(number, check.unit) if numeric else value, limit=limit),
        detail=check.detail, remedy=_fix(check),
        evidence={_named(check.fact): value, **({"below": check.below} if check.below is not None else {})})]


def _named(path: str) -> str:
    """The evidence's key: the fact's path, an environment variable by its own name (CUDA_LAUNCH_BLOCKING)."""
    return path[len(ENVIRONMENT):] if path.startswith(ENVIRONMENT) else path


def _fix(check: DeclaredCheck) -> Fix:
    """The row's fix; an environment variable's without commands: unset it, or set it to `set_to`, in the shell of
    the machine the fixes are built for."""
    if check.fact.startswith(ENVIRONMENT) and not check.fix.get("commands"):
        return environment_variable_fix(_named(check.fact), check.set_to)
    return table_fix(check.fix)


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
