"""Real environments drawn at random over the wheel pool (tests/realworld_draw.py), judged by the environment's own
python under the real glibc loader: a fresh sample each run (the seed printed, so a failure reproduces with
`scripts/realworld.sh --draws N --seed S`) and every draw that ever failed (tests/realworld_regressions.txt).
REALWORLD_DRAWS sets the sample's size (CI: 60), REALWORLD_SEED fixes its seed."""
from __future__ import annotations

import os
import random
import shutil

import pytest

from realworld_draw import draw
from realworld_run import WORK, regression_draws, run_case
from realworld_stacks import missing_wheels

pytestmark = [pytest.mark.realworld, pytest.mark.live]
SEED = int(os.environ.get("REALWORLD_SEED") or random.SystemRandom().randrange(10 ** 6))
COUNT = int(os.environ.get("REALWORLD_DRAWS", "60"))
CASES = [draw(SEED, n) for n in range(COUNT)] + regression_draws()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_drawn_environment(case):
    if shutil.which("readelf") is None or shutil.which("gcc") is None:
        pytest.skip("readelf and gcc are needed")
    missing = missing_wheels(case)
    if missing:
        pytest.skip("wheels not available here: %s" % missing)
    work = WORK / ("draws-%d" % os.getpid())
    try:
        row = run_case(case, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _, seed, n = case.name.split("-")
    again = "reproduce: scripts/realworld.sh --draws %d --seed %s (draw %s)" % (int(n) + 1, seed, n)
    assert row.agree, "%s (%s)\n  oracle: %s\n  doctor: %s\n  %s\n%s" % (
        case.name, case.note, row.oracle, row.prediction, "\n  ".join(row.problems), again)
    assert row.fix in ("-", "proven"), "%s: the fix %s: %s\n%s" % (case.name, row.commands, row.fix, again)
