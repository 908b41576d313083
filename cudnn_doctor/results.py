"""check's typed result, the Report, and what it carries (smoke skipped, the knowledge's summary).

Smoke's, bench's, fleet's and install's results are in run_results.py, which a plain check never imports."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from .model import Facts, Finding, to_plain
from .runclock import RunStamp


@dataclass
class SmokeSkipped:
    """check --smoke found no cuDNN that a plain process would load, so nothing ran: what it says instead."""

    ok: bool = field(default=False, init=False)  # first, as the JSON has always listed it
    summary: str = ""
    fix: str = ""  # the install command for this machine (remedies' Fix, as text)

    def to_dict(self) -> Dict[str, Any]:
        return to_plain(self)


if TYPE_CHECKING:  # a plain check never builds the smoke, bench, fleet or install results (run_results.py)
    from .run_results import SmokeResult

    SmokeOutcome = Union[SmokeResult, SmokeSkipped]


@dataclass
class KnowledgeSummary:
    """How current the knowledge base is (check -v and --json): its date, where it was read, the newest releases."""

    date: str
    origin: str
    newest_cudnn: Optional[str]
    newest_cuda: Optional[str]
    update: str = "cudnn-doctor update"  # the command that refreshes it


@dataclass
class Report:
    """Everything a renderer needs; the exit code is computed once, in the CLI."""

    facts: Facts
    findings: List[Finding] = field(default_factory=list)
    rules_run: List[str] = field(default_factory=list)
    smoke: Optional[SmokeOutcome] = None  # check --smoke: the smoke test's result
    knowledge: Optional[KnowledgeSummary] = None  # how current the answers are
    run: Optional[RunStamp] = None  # check: when it ran, on which node (what fleet merges by)

    @property
    def verdict(self) -> str:
        worst = max((f.severity.rank for f in self.findings), default=0)
        return {0: "ok", 1: "warning", 2: "error"}[worst]
