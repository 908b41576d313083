"""`explain` as a domain function: a pasted error text -> what it says (symptoms, libraries, versions) -> what those
need -> what this machine has (one `diagnose` run, under the probes' deadline and guard) -> one fix, as a Report.
May import diagnose, knowledge, queries, remedies and model; never probes, host, native or render."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Mapping, Optional

from ..knowledge import ErrorText, load_compat
from ..model import Facts, Finding, Fix, Report, Severity
from .judge import gaps, machine_has, needs, one_fix
from .libraries import LibraryCheck, check_libraries
from .parse import (PastedVersions, SymptomMatch, alternatives, extract_sonames, match_symptoms, parse_versions,
                    routed_rules)

__all__ = ["Explanation", "LibraryCheck", "PastedVersions", "SymptomMatch", "explain", "extract_sonames",
           "match_symptoms", "parse_versions", "routed_findings", "routed_rules"]


@dataclass
class Explanation:
    """What explain read from the text, what that needs, what this machine has and the one fix."""

    matches: List[SymptomMatch] = field(default_factory=list)
    rules: List[str] = field(default_factory=list)  # the checks the symptoms route to
    sonames: List[str] = field(default_factory=list)
    versions: PastedVersions = field(default_factory=PastedVersions)
    needs: List[str] = field(default_factory=list)
    has: List[str] = field(default_factory=list)  # empty when the machine was not inspected
    gaps: List[str] = field(default_factory=list)  # what the pasted versions need and this machine lacks
    libraries: List[LibraryCheck] = field(default_factory=list)
    fix: Optional[Fix] = None
    checked: bool = False  # this machine was diagnosed
    problem: bool = False  # a routed check found an error, a named library is missing or no cuDNN fits
    reports: List[ErrorText] = field(default_factory=list)  # public reports of the same error

    @property
    def understood(self) -> bool:
        return bool(self.matches or self.sonames or self.versions.compiled)


def routed_findings(findings: List[Finding], rules: List[str]) -> List[Finding]:
    """The findings of the checks a text routes to; a probe that failed is kept (CD001): without it a blind spot
    would read as "nothing found"."""
    wanted = set(rules)
    return [f for f in findings if f.id in wanted or f.id == "CD001"]


def explain(text: str, root: str = "/", env: Optional[Mapping[str, str]] = None, check: bool = True,
            timeout: Optional[float] = None) -> Report:
    """Explain `text` on the machine under `root` (or, with check=False, from the text alone)."""
    compat = load_compat()
    ex = Explanation(matches=match_symptoms(text, compat), sonames=extract_sonames(text),
                     versions=parse_versions(text))
    ex.rules = routed_rules(ex.matches)
    ex.needs = needs(compat, ex.sonames, ex.versions)
    ex.reports = compat.reports_of([m.id for m in ex.matches])
    report = Report(facts=Facts(), extra={"explain": ex})
    if not check or not ex.understood:
        return report
    from ..diagnose import diagnose, fix_target
    from ..remedies.acting import building_for

    # The loader probe resolves the pasted names with everything else, within the run's deadline.
    full = diagnose(root, env, timeout=timeout, sonames=[n for n in ex.sonames if not n.lower().endswith(".dll")])
    report.facts, report.rules_run = full.facts, [r for r in ex.rules if r in full.rules_run]
    report.findings = routed_findings(full.findings, ex.rules)
    ex.checked = True
    ex.has = machine_has(full.facts)
    ex.gaps = gaps(full.facts, ex.versions)
    # Built for this machine, as check's fixes are: no sudo for root, the root's files under --root.
    with building_for(fix_target(full.facts)):
        ex.libraries = check_libraries(ex.sonames, full.facts, compat, alternatives(text))
        ex.fix = one_fix(compat, full.facts, text, ex.versions, report.findings, ex.libraries)
    ex.problem = (any(f.severity == Severity.ERROR for f in report.findings) or
                  any(lib.problem for lib in ex.libraries) or bool(ex.gaps))
    return report
