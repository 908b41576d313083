"""The real-world corpus's other half (tests/probes/test_realworld.py holds the first and says what is judged): a file
of its own, so that the full run's `--dist loadfile` gives it to another worker."""
from __future__ import annotations

import pytest

from test_realworld import _why_not, agrees_and_its_fix_works, cases

pytestmark = [pytest.mark.realworld, pytest.mark.live]


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
@pytest.mark.parametrize("case", cases(1, 2), ids=lambda c: c.name)
def test_doctor_agrees_with_the_real_loader_and_its_fix_works(case):
    agrees_and_its_fix_works(case)
