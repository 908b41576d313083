"""Bench's findings: the CD95x rules (cudnn_doctor/rules/bench.py) run over one bench report."""
from __future__ import annotations

from typing import List, Mapping, Optional

from ..knowledge import load_compat
from ..model import Facts, Finding
from ..remedies.acting import target
from ..run_results import BenchResult
from ..rules import BENCH, RuleContext, evaluate

# The order bench reports its findings in: correctness first, then speed, then what was only measured.
ORDER = ("CD950", "CD956", "CD952", "CD953", "CD957", "CD954", "CD955", "CD951")


def judge(result: BenchResult, env: Optional[Mapping[str, str]] = None) -> List[Finding]:
    """Pure: the findings for a bench run (its findings field not read). The rules run through `rules.evaluate`,
    so one that raises becomes a finding about itself instead of losing the measurements. The fixes are built for
    the target in effect (commands/bench.py names this machine's), as every other fix is."""
    ctx = RuleContext(compat=load_compat(), bench=result, env=dict(env or {}), fix_target=target())
    findings, _ = evaluate(Facts(), ctx, stage=BENCH)
    # evaluate keeps each rule's findings in the order it gave them; the sort is stable.
    return sorted(findings, key=lambda f: ORDER.index(f.id) if f.id in ORDER else len(ORDER))
