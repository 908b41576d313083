"""Score `cudnn-doctor explain --no-check --json` on the real-text corpus (tests/data/explain_corpus, issue 30).

    python scripts/explain_score.py                 # the dev split: tally, then every miss
    python scripts/explain_score.py --split heldout # the frozen split: tally only
    python scripts/explain_score.py --split heldout --show-heldout-misses

The held-out misses stay hidden unless asked for: whoever tunes the decoder should never read them.
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
    parser.add_argument("--split", choices=grading.SPLITS, default="dev")
    parser.add_argument("--show-heldout-misses", action="store_true",
                        help="also list the held-out misses (never while tuning the decoder)")
    args = parser.parse_args()
    grades = grading.grade_split(args.split)
    counts = grading.tally(grades)
    print(grading.format_tally(args.split, counts))
    floor = grading.floors()[args.split]
    print("floor: " + "; ".join("%s %d" % (k, floor[k]) for k in ("recognised", "cause", "fix", "right")))
    if args.split == "dev" or args.show_heldout_misses:
        misses = [g for g in grades if not g.right]
        print("misses (%d):" % len(misses))
        for g in misses:
            print("  " + grading.format_miss(g))
    below = [k for k in floor if counts[k] < floor[k]]
    if below:
        print("below the floor: " + ", ".join(below))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
