"""A third of the real-world regression set (every draw that ever failed, tests/realworld_regressions.txt), judged as
tests/probes/test_realworld_draws.py says: a file of its own, so that the full run's `--dist loadfile` gives it to
another worker than the other thirds."""
from __future__ import annotations

import pytest

from test_realworld_draws import draw_id, judge_draw, regressions

pytestmark = [pytest.mark.realworld, pytest.mark.live]


@pytest.mark.parametrize("pair", regressions(1, 3), ids=draw_id)
def test_drawn_environment(pair):
    judge_draw(pair)
