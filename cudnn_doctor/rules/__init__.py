"""Rules: pure functions of (Facts, RuleContext) returning findings. Import remedies and below, never the machine."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Callable, FrozenSet, List, Mapping, NamedTuple, Optional, TYPE_CHECKING, Tuple

from ..knowledge import Compat
from ..model import Facts, Finding, Severity, Target
from ..remedies.acting import building_for
from ..remedies.doctor import rule_crashed_fix

if TYPE_CHECKING:
    from ..results import SmokeOutcome
    from ..run_results import BenchResult

# Where a rule applies: the machines whose facts it reads. A rule for the other platform is passed over (and still
# counted as run: it had nothing to judge there).
LINUX: FrozenSet[str] = frozenset({"linux"})
WINDOWS: FrozenSet[str] = frozenset({"windows"})
ANY_PLATFORM: FrozenSet[str] = LINUX | WINDOWS
# When a rule runs: `check` judges the machine; `bench` judges a benchmark run (RuleContext.bench).
CHECK, BENCH = "check", "bench"
# The human report's sections a rule's findings count toward (each rule names one in @rule). driver ... python are
# the report's marked heads: a finding turns its head's mark to its severity. doctor (cudnn-doctor itself), smoke
# (the smoke test's own line) and policy (--require, --for, knowledge, bench) have no head: only the list shows them.
SECTIONS = ("doctor", "driver", "gpus", "toolkits", "cudnn", "smoke", "loader", "python", "policy")


@dataclass
class RuleContext:
    """What the user asked the judgement to consider, beyond the machine itself."""

    compat: Optional[Compat] = None  # the knowledge base (load_compat()); rules read nothing else
    requires: List[str] = field(default_factory=list)  # --require expressions, e.g. "cuda>=11.8"
    target: Optional[str] = None  # --for FRAMEWORK[==VERSION], e.g. "dl4j==1.0.0-beta6"
    smoke: Optional[SmokeOutcome] = None  # check --smoke: the smoke test's result (or why nothing ran)
    bench: Optional[BenchResult] = None  # the bench run being judged (bench stage only)
    env: Mapping[str, str] = field(default_factory=dict)  # the environment a bench run measured in
    fix_target: Target = field(default_factory=Target)  # where and how the fixes run (root, user, this doctor)


RuleFunc = Callable[[Facts, "RuleContext"], List[Finding]]


class Rule(NamedTuple):
    id: str  # stable code, e.g. "CD101"
    alias: str  # kebab-case name
    title: str
    func: RuleFunc
    platforms: FrozenSet[str] = ANY_PLATFORM  # the machines it applies to
    stage: str = CHECK  # the command whose result it judges
    section: str = "doctor"  # the report section its findings count toward (one of SECTIONS)


RULES: List[Rule] = []


def rule(id: str, alias: str, title: str, *, section: str, platforms: FrozenSet[str] = ANY_PLATFORM,
         stage: str = CHECK) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule function under a stable id, with its report section, the platforms it applies to and the
    stage it judges. An id or alias already registered is refused, naming both functions."""
    if section not in SECTIONS:
        raise ValueError("rule %s: section %r is not one of %s" % (id, section, ", ".join(SECTIONS)))

    def wrap(func: RuleFunc) -> RuleFunc:
        here = "%s.%s" % (func.__module__, func.__qualname__)
        for r in RULES:
            if id in (r.id, r.alias) or alias in (r.id, r.alias):
                raise ValueError("rule %s (%s) in %s: %s is already registered by %s.%s (%s %s)" % (
                    id, alias, here, id if id in (r.id, r.alias) else alias, r.func.__module__, r.func.__qualname__,
                    r.id, r.alias))
        RULES.append(Rule(id, alias, title, func, frozenset(platforms), stage, section))
        return func

    return wrap


def section_of(finding_id: str) -> str:
    """The report section of a finding: its rule's, or doctor for one no rule wrote (CD001, a probe that raised)."""
    return next((r.section for r in registered_all() if r.id == finding_id), "doctor")


def platform_of_facts(facts: Facts) -> str:
    """The platform rules are chosen for: a Windows machine is one the Windows probes read."""
    return "windows" if facts.windows is not None else "linux"


def registered_all() -> List[Rule]:
    """Every rule of every stage, in registration order (the rule modules register themselves on import)."""
    if importlib.util.find_spec(__name__ + ".registry") is not None:
        importlib.import_module(__name__ + ".registry")
    return RULES


def known_id(name: str) -> bool:
    """Whether some check is called this (its id, any case, or its alias): a typo is told from a check that found
    nothing here."""
    return any(r.id == name.upper() or r.alias == name for r in registered_all())


def registered(stage: str) -> List[Rule]:
    """Every rule of one stage, in registration order."""
    return [r for r in registered_all() if r.stage == stage]


def evaluate(facts: Facts, context: RuleContext, stage: str = CHECK) -> Tuple[List[Finding], List[str]]:
    """Run every rule of the stage that applies to this platform; a rule that raises becomes a warning finding
    (a doctor bug) instead of a crash."""
    platform = platform_of_facts(facts)
    findings: List[Finding] = []
    ran: List[str] = []
    for r in registered(stage):
        ran.append(r.id)
        if platform not in r.platforms:
            continue
        try:
            with building_for(context.fix_target):
                found = list(r.func(facts, context))  # a generator's fixes are built inside the block too
            for f in found:
                f.id = f.id or r.id  # a rule names its id once, in @rule
                f.alias = f.alias or r.alias
                findings.append(f)
        except Exception as exc:  # a rule bug must not hide the other diagnoses
            with building_for(context.fix_target):  # its fix is built for the Target too (no NoTarget over the bug)
                crashed = rule_crashed_fix()
            findings.append(
                Finding(
                    id=r.id,
                    severity=Severity.WARNING,
                    title="Rule %s (%s) could not run: %s: %s" % (r.id, r.alias, type(exc).__name__, exc),
                    detail="This is a cudnn-doctor bug; the other checks are unaffected.",
                    remedy=crashed,
                    alias=r.alias,
                )
            )
    findings.sort(key=lambda f: (-f.severity.rank, f.id))
    return findings, ran
