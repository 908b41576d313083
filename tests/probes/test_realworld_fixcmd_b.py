"""The other half of the failing draws `cudnn-doctor fix` is proven on (tests/probes/test_realworld_fixcmd.py says
how): a file of its own, so that the full run's `--dist loadfile` gives it to another worker."""
from __future__ import annotations

import pytest

from test_realworld_fixcmd import DRAWS, heals_and_undoes

pytestmark = [pytest.mark.realworld, pytest.mark.live]


@pytest.mark.parametrize("seed, n", DRAWS[1::2], ids=lambda v: str(v))
def test_fix_heals_a_failing_draw_and_undo_puts_it_back_exactly(seed, n):
    heals_and_undoes(seed, n)
