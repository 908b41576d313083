"""Runs corpus cases, or seeded draws of real environments, and prints one line each: case, oracle, prediction,\nagree?, fix proven for every framework? (scripts/realworld.sh)."""
from __future__ import annotations

import argparse
import functools
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# REALWORLD_DOCTOR: another checkout's cudnn-doctor to judge (e.g. `git archive main`), to show a case failing there.
sys.path.insert(0, os.environ.get("REALWORLD_DOCTOR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import realworld_draw as draw  # noqa: E402
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


def each_framework(stack: stacks.Stack) -> List[stacks.Stack]:
    """The stack once per framework it holds that loads cuDNN (the same folder, another framework judged)."""
    return [stacks.Stack(replace(stack.case, framework=stacks.as_installed(stack, fw)), stack.root, stack.env, stack.venv)
            for fw in [stack.case.framework, *stack.case.judged]]


def judge_all(stack: stacks.Stack) -> Tuple[List[Tuple[str, judge.Verdict, judge.Verdict]], object]:
    """(framework, oracle, doctor) for every framework of the stack, and the doctor's report."""
    seen_by_doctor = judge.doctor(stack)
    rows = []
    for view in each_framework(stack):
        seen, _ = judge.observe(view, stack.root / "oracle")
        oracle.forget(stack.root / "oracle")
        said, _ = judge.predict(view, seen_by_doctor)
        rows.append(("%s %s" % view.case.framework, seen, said))
    return rows, seen_by_doctor[1]


IDLE_BEFORE_REMOVED = 3600  # seconds a dead run's folder must have been untouched


def remove_dead_runs(work: Path = WORK) -> List[str]:
    """Remove the work folders (``draws-PID``, ``pytest-PID``) of test runs whose process is gone: a run killed
    mid-case leaves about 1 GB behind, and nothing else would ever remove it. Only folders untouched for an hour:
    a cache shared with another container sees that run's pids as gone while it still works (each case it runs
    adds a folder there, so a working run's folder is never that old)."""
    removed = []
    for entry in (work.iterdir() if work.is_dir() else ()):
        prefix, _, pid = entry.name.rpartition("-")
        if prefix not in ("draws", "pytest") or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if time.time() - entry.stat().st_mtime < IDLE_BEFORE_REMOVED:
                continue
        except OSError:
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (or another user's: PermissionError below)
        except ProcessLookupError:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
        except PermissionError:
            continue
    return removed


@functools.lru_cache(maxsize=None)
def _remove_dead_runs_once() -> None:
    remove_dead_runs()  # a listing of one folder: once per process is enough (dead runs stay dead)


def run_case(case: stacks.Case, work: Path = WORK, keep: bool = False) -> Row:
    start = time.perf_counter()
    _remove_dead_runs_once()
    row = Row(case.name)
    for name, version in FIX_WHEELS:  # a fix installs these with pip, offline: they must be in the cache first
        wheels.wheel_file(name, version)
    missing = stacks.missing_wheels(case)
    if missing:
        row.problems.append("wheels not available: %s" % missing)
        return row
    root = work / case.name
    stack = stacks.build(case, root)
    verdicts, report = judge_all(stack)
    many = len(verdicts) > 1
    row.oracle = " / ".join(("%s: " % fw if many else "") + seen.summary for fw, seen, _ in verdicts)
    row.prediction = " / ".join(("%s: " % fw if many else "") + said.summary for fw, _, said in verdicts)
    row.problems = [("%s: " % fw if many else "") + p for fw, seen, said in verdicts
                    for p in judge.disagreements(seen, said)]
    if not all(seen.works for _, seen, _ in verdicts):
        row.commands = judge.fix_commands(report, stack)
        fixed, how = judge.apply_fix(stack, row.commands, work / (case.name + "-fixed"))
        if not fixed:
            row.fix = how
        else:
            # every framework of each environment after the fix, not only the one the error named
            after = [v for env in fixed for v in judge_all(env)[0]]
            broken = ["%s: oracle %s, doctor %s" % (fw, seen.summary, said.summary) for fw, seen, said in after
                      if not (seen.works and said.works)]
            row.fix = "proven" if not broken else "not proven: after the fix " + "; ".join(broken)
            if not keep:
                for env in fixed:
                    shutil.rmtree(env.root, ignore_errors=True)
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    row.seconds = round(time.perf_counter() - start, 1)
    return row


REGRESSIONS = Path(__file__).resolve().parent / "realworld_regressions.txt"


def regression_lines() -> List[Tuple[int, int, bool]]:
    """Every draw that ever failed, as (seed, n, places) ("seed n" a line, # comments; "seed n places" for one drawn
    with the other places, the generator since 2026-11-29): naming a draw fetches nothing."""
    lines = [line.split("#")[0].split() for line in REGRESSIONS.read_text().splitlines()]
    return [(int(words[0]), int(words[1]), words[2:] == ["places"]) for words in lines
            if len(words) == 2 or words[2:] == ["places"]]


def regression_pairs() -> List[Tuple[int, int]]:
    return [(seed, n) for seed, n, _ in regression_lines()]


def regression_draws() -> List[stacks.Case]:
    """Every draw that ever failed, drawn (reads the pool's wheels, downloading them on first use): CI runs them all."""
    return [draw.draw(seed, n, places) for seed, n, places in regression_lines()]


def parse(argv: List[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="scripts/realworld.sh", description=__doc__)
    ap.add_argument("names", nargs="*", help="corpus cases by name fragment (without --draws)")
    ap.add_argument("--draws", type=int, default=0, help="environments to draw from the wheel pool")
    ap.add_argument("--seed", type=int, default=None, help="the draw's seed (default: a fresh one, printed)")
    ap.add_argument("--regressions", action="store_true", help="also every draw in tests/realworld_regressions.txt")
    ap.add_argument("--only", type=int, action="append", default=[], metavar="K",
                    help="only draw K of the seed (repeatable): one draw reproduced without the ones before it")
    ap.add_argument("--kills", type=int, default=0, metavar="N",
                    help="with --fix-command: in the first N draws whose fix changed something and was undone "
                         "exactly, a fix --yes killed (SIGKILL) at a random moment, then judged: old, new or undone")
    ap.add_argument("--fix-command", action="store_true",
                    help="prove each failing draw's fix by running `cudnn-doctor fix` (tests/realworld_fixcmd.py)")
    return ap.parse_args(argv)


def main(argv: List[str]) -> int:
    args = parse(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10 ** 6)
    if args.only:  # before --draws: `--draws 18 --only 17` means draw 17 alone, not the first 18
        print("seed %d: draws %s" % (seed, ", ".join(map(str, args.only))))
        wanted = [draw.draw(seed, k) for k in args.only]
    elif args.draws or args.regressions:
        print("seed %d: reproduce with scripts/realworld.sh --draws %d --seed %d" % (seed, args.draws, seed))
        wanted = draw.draws(seed, args.draws) + (regression_draws() if args.regressions else [])
    else:
        wanted = [c for c in CASES if not args.names or any(a in c.name for a in args.names)]
    if args.fix_command:
        import realworld_fixcmd

        def again(name: str) -> str:
            if not name.startswith("draw-"):
                return "python tests/realworld_run.py %s --fix-command" % name
            _, s, k = name.split("-")
            return "python tests/realworld_run.py --only %s --seed %s --fix-command" % (k, s)
        return realworld_fixcmd.run_all(wanted, judge_all, WORK / ("draws-%d" % os.getpid()), again, args.kills, seed)
    print("%-26s | %-52s | %-44s | %-5s | %s" % ("case", "oracle (real glibc loader)", "cudnn-doctor predicts",
                                                  "agree", "fix"))
    bad = judged = agreed = errors = proven = unproven = 0
    start = time.perf_counter()
    free = shutil.disk_usage(WORK.parent).free
    for case in wanted:
        row = run_case(case)
        bad += (not row.agree) or row.fix not in ("-", "proven")
        frameworks = 1 + len(case.judged)
        judged += frameworks
        agreed += frameworks - len({p.split(":")[0] for p in row.problems}) if frameworks > 1 else int(row.agree)
        errors += row.fix != "-"
        proven += row.fix == "proven"
        unproven += row.fix.startswith("not proven")
        print("%-26s | %-52s | %-44s | %-5s | %s" % (row.case, row.oracle[:52], row.prediction[:44],
                                                      "yes" if row.agree else "NO", row.fix), flush=True)
        if case.note:
            print("    (%s)" % case.note)
        for problem in row.problems:
            print("    %s" % problem)
        if ((not row.agree) or row.fix not in ("-", "proven")) and case.name.startswith("draw-") and \
                (args.only or args.draws):  # a fresh draw takes every place: its line says so (`places`)
            print("    its regression line (tests/realworld_regressions.txt): %s places # ..." % " ".join(
                case.name.split("-")[1:]))
    seconds = time.perf_counter() - start
    print("%d environments, %d frameworks judged, %d agree with the oracle (%.1f%%); %d with a failure: fixes %d "
          "proven for every framework, %d not proven, %d not run; %d with a disagreement or an unproven fix; %.0f s "
          "(%.1f s a case); disk: %.1f GB used by the run (downloads), %.1f GB free" % (
              len(wanted), judged, agreed, 100.0 * agreed / max(judged, 1), errors, proven, unproven,
              errors - proven - unproven, bad, seconds, seconds / max(len(wanted), 1),
              (free - shutil.disk_usage(WORK.parent).free) / 1e9, shutil.disk_usage(WORK.parent).free / 1e9))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
