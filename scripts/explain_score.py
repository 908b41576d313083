"""Score `cudnn-doctor explain --no-check --json` on the real-text corpus (tests/data/explain_corpus, issues 30, 44).

    python scripts/explain_score.py                  # the dev split: tally, then every miss
    python scripts/explain_score.py --split dev2     # issue 44's open cases
    python scripts/explain_score.py --split frozen   # issue 44's frozen cases: tally only
    python scripts/explain_score.py --split all      # every split, one tally each and the whole corpus
    python scripts/explain_score.py --split heldout --show-heldout-misses

The held-out and frozen misses stay hidden unless asked for: whoever tunes the decoder should never read them.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "explain")]

import explain_grading as grading  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=grading.SPLITS + ("all",), default="dev")
    parser.add_argument("--show-heldout-misses", action="store_true",
                        help="also list the held-out and frozen misses (never while tuning the decoder)")
    parser.add_argument("--hardest", type=int, default=0, metavar="N",
                        help="list only the N misses furthest from right (of the splits whose misses are shown)")
    args = parser.parse_args()
    splits = grading.SPLITS if args.split == "all" else (args.split,)
    floors = grading.floors()
    below, shown, everything = [], [], []
    for split in splits:
        grades = grading.grade_split(split)
        everything += grades
        counts = grading.tally(grades)
        print(grading.format_tally(split, counts))
        print("  " + grading.format_outcomes(split, grades))
        floor = floors.get(split)
        if floor:
            print("  floor: " + "; ".join("%s %d" % (k, floor[k]) for k in ("recognised", "cause", "fix", "right")))
            below += ["%s %s" % (split, k) for k in floor if counts[k] < floor[k]]
        if split not in grading.HIDDEN_SPLITS or args.show_heldout_misses:
            shown += grades
    if len(splits) > 1:
        print(grading.format_tally("all", grading.tally(everything)))
        print("  " + grading.format_outcomes("all", everything))
    misses = grading.hardest(shown, args.hardest) if args.hardest else [g for g in shown if not g.right]
    if shown:
        print("misses (%d):" % len(misses))
        for g in misses:
            print("  %s (%s)" % (grading.format_miss(g), grading.outcome(g)))
    if below:
        print("below the floor: " + ", ".join(below))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
