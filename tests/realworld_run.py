"""Runs corpus cases and prints one line each: case, oracle, prediction, agree?, fix proven? (scripts/realworld.sh)."""
from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# REALWORLD_DOCTOR: another checkout's cudnn-doctor to judge (e.g. `git archive main`), to show a case failing there.
sys.path.insert(0, os.environ.get("REALWORLD_DOCTOR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import realworld_judge as judge  # noqa: E402
import realworld_oracle as oracle  # noqa: E402
import realworld_stacks as stacks  # noqa: E402
from realdata import CACHE  # noqa: E402
import realworld_wheels as wheels  # noqa: E402
from realworld_cases import CASES, FIX_WHEELS  # noqa: E402

WORK = CACHE / "realworld-cases"


@dataclass
class Row:
    case: str
    oracle: str = ""
    prediction: str = ""
    problems: List[str] = field(default_factory=list)  # disagreements, before and after the fix
    fix: str = "-"  # "-" when the oracle saw no failure; else "proven" or why not
    commands: List[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def agree(self) -> bool:
        return not self.problems


def run_case(case: stacks.Case, work: Path = WORK, keep: bool = False) -> Row:
    start = time.perf_counter()
    row = Row(case.name)
    for name, version in FIX_WHEELS:  # a fix installs these with pip, offline: they must be in the cache first
        wheels.wheel_file(name, version)
    missing = stacks.missing_wheels(case)
    if missing:
        row.problems.append("wheels not available: %s" % missing)
        return row
    root = work / case.name
    stack = stacks.build(case, root)
    seen, _ = judge.observe(stack, root / "oracle")
    oracle.forget(root / "oracle")
    said, report = judge.predict(stack)
    row.oracle, row.prediction = seen.summary, said.summary
    row.problems = judge.disagreements(seen, said)
    if not seen.works:
        row.commands = judge.fix_commands(report, stack)
        fixed, how = judge.apply_fix(stack, row.commands, work / (case.name + "-fixed"))
        if fixed is None:
            row.fix = how
        else:
            after, _ = judge.observe(fixed, fixed.root / "oracle")
            oracle.forget(fixed.root / "oracle")
            again, _ = judge.predict(fixed)
            if after.works and again.works:
                row.fix = "proven"
            else:
                row.fix = "not proven: after the fix the oracle says %s, the doctor %s" % (after.summary,
                                                                                          again.summary)
            if not keep:
                shutil.rmtree(fixed.root, ignore_errors=True)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    row.seconds = round(time.perf_counter() - start, 1)
    return row


def main(argv: List[str]) -> int:
    wanted = [c for c in CASES if not argv or any(a in c.name for a in argv)]
    print("%-26s | %-52s | %-44s | %-5s | %s" % ("case", "oracle (real glibc loader)", "cudnn-doctor predicts",
                                                  "agree", "fix"))
    bad, start = 0, time.perf_counter()
    for case in wanted:
        row = run_case(case)
        bad += (not row.agree) or row.fix not in ("-", "proven")
        print("%-26s | %-52s | %-44s | %-5s | %s" % (row.case, row.oracle[:52], row.prediction[:44],
                                                      "yes" if row.agree else "NO", row.fix), flush=True)
        for problem in row.problems:
            print("    %s" % problem)
    print("%d cases, %d with a disagreement or an unproven fix, %.0f s" % (len(wanted), bad,
                                                                         time.perf_counter() - start))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
