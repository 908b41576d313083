"""`explain` as a domain function: a pasted error text -> what it says (symptoms, libraries, versions) -> what those
need -> what this machine has (one `diagnose` run, under the probes' deadline and guard) -> one fix, as a Report.
May import diagnose, knowledge, queries, remedies and model; never probes, host, native or render."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Tuple

from ..knowledge import ErrorText, load_compat
from ..model import WINDOWS_SHELL, Facts, Finding, Fix, Severity, Target
from ..queries import platform_of
from ..remedies.acting import building_for
from ..remedies.explain import in_program_environment
from ..results import Report
from .answer import answer
from .answered import Answer
from .bounded import bounded_paste, plain_punctuation
from .decode import decode
from .evidence import Evidence
from .here import startup_blocker
from .judge import gaps, machine_has, needs, one_fix
from .libraries import LibraryCheck, check_libraries
from .parse import (PastedVersions, SymptomMatch, alternatives, extract_sonames, match_symptoms, parse_versions,
                    routed_rules)

__all__ = ["Answer", "Evidence", "Explanation", "LibraryCheck", "PastedVersions", "SymptomMatch", "explain", "extract_sonames",
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
    evidence: Evidence = field(default_factory=Evidence)  # what the text itself says, decoded
    answer: Optional[Answer] = None  # cause and fix from the text alone: the same on any machine
    here: List[str] = field(default_factory=list)  # what this machine adds to the answer ("no driver at all")
    also: List[Tuple[str, Fix]] = field(default_factory=list)  # further fixes, each with what it is for
    elsewhere: str = ""  # why the text is not from this machine (a Windows paste read on Linux), where it says so

    @property
    def understood(self) -> bool:
        # An answer from the paste's facts alone (pip's "No matching distribution" and the Pythons a release has
        # wheels for) is understanding too, though no symptom row or library name matched.
        return bool(self.matches or self.sonames or self.versions.compiled or self.evidence or self.answer)


@dataclass
class ExplainReport(Report):
    """explain's Report: the routed checks' findings on this machine beside what the text itself says."""

    explanation: Explanation = field(default_factory=Explanation)


def routed_findings(findings: List[Finding], rules: List[str]) -> List[Finding]:
    """The findings of the checks a text routes to; a probe that failed is kept (CD001): without it a blind spot
    would read as "nothing found"."""
    wanted = set(rules)
    return [f for f in findings if f.id in wanted or f.id == "CD001"]


def explain(text: str, root: str = "/", env: Optional[Mapping[str, str]] = None, check: bool = True,
            timeout: Optional[float] = None) -> ExplainReport:
    """Explain `text` on the machine under `root` (or, with check=False, from the text alone)."""
    compat = load_compat()
    text = bounded_paste(plain_punctuation(text))
    ex = Explanation(matches=match_symptoms(text, compat), sonames=extract_sonames(text),
                     versions=parse_versions(text))
    ex.rules = routed_rules(ex.matches)
    ex.reports = compat.reports_of([m.id for m in ex.matches])
    ex.evidence = decode(text, compat)
    ex.needs = needs(compat, ex.sonames, ex.versions, ex.evidence.checks)
    # The paste comes from a machine explain never saw: its answer is written for a plain user on its own root, in
    # PowerShell where the paste reads as Windows.
    with building_for(Target(shell=WINDOWS_SHELL if ex.evidence.platform == "windows" else "sh")):
        ex.answer = answer(ex.evidence, compat)
    if ex.answer is not None:
        ex.fix, ex.problem = ex.answer.fix, ex.answer.problem
    report = ExplainReport(facts=Facts(), explanation=ex)
    if not check or not ex.understood:
        return report
    from ..diagnose import diagnose, fix_target  # why: the host seam and probes, 60 ms, never needed by --no-check

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
        machine_fix = one_fix(compat, full.facts, text, ex.versions, report.findings, ex.libraries)
        blocker = startup_blocker(ex.evidence, full.facts, compat)
        nothing_here = in_program_environment(True)
    machine_problem = (any(f.severity == Severity.ERROR for f in report.findings) or
                       any(lib.problem for lib in ex.libraries) or bool(ex.gaps))
    ex.elsewhere = other_machine(ex.evidence, full.facts)
    if ex.elsewhere:  # this machine's repairs are not the text's: what it has is shown, its fixes are not offered
        ex.problem = ex.problem or machine_problem
        return report
    if ex.answer is None or ex.fix is None:
        ex.fix, ex.problem = machine_fix, machine_problem
    elif machine_fix is not None and machine_fix.text not in (ex.fix.text, nothing_here.text):
        ex.also.append(("and here", machine_fix))  # the machine adds its own repair; the paste's answer stands
    if blocker is not None and ex.fix is not None:  # no driver or GPU here: that comes before what the text asks
        ex.here.insert(0, blocker.cause)
        ex.also.insert(0, ("then, for the error itself", ex.fix))
        ex.fix = blocker.fix
    ex.problem = ex.problem or machine_problem or blocker is not None
    return report


def other_machine(ev: Evidence, facts: Facts) -> str:
    """Why the paste cannot be from the machine explain inspects, where the text says so: a Windows or WSL paste read
    elsewhere, or a GPU model this machine (whose GPUs NVML named) does not have; "" where it may be this machine's
    (a text that names no OS or GPU may come from any)."""
    there = {"windows": "Windows", "wsl": "WSL"}.get(ev.driver_platform)
    here = "Windows" if platform_of(facts) == "windows" else ("WSL" if facts.host.wsl else "Linux")
    if there is not None and there != here:
        return "the text comes from %s and this machine runs %s: what it has is shown, not judged against the " \
               "text" % (there, here)
    named = [g.value for g in ev.facts.gpus]
    have = [g.name for g in facts.gpus if g.name]
    if named and have and not any(_same_model(n, h) for n in named for h in have):
        return "the text names %s and this machine has %s: what it has is shown, not judged against the text" % (
            " and ".join(dict.fromkeys(named)), " and ".join(dict.fromkeys(have)))
    return ""


def _same_model(said: str, name: str) -> bool:
    """A GPU as a paste names it ("RTX 3090", "Tesla V100") against NVML's name ("NVIDIA GeForce RTX 3090")."""
    def core(text: str) -> str:
        return re.sub(r"nvidia|geforce|tesla|quadro|[\s_-]", "", text.lower())
    a, b = core(said), core(name)
    return bool(a and b) and (a in b or b in a)
