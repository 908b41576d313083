"""The range a number of seconds given on the command line must fall in (commands/options.py turns it into the
options' callback)."""
from __future__ import annotations

import math

# A week: longer than any run or lock wait is meant to take, and far from where time arithmetic overflows
# (`--timeout 1e308` made a deadline no clock can hold).
MAX_SECONDS = 7 * 86400.0


def seconds_in_range(value: float, low: float, high: float = MAX_SECONDS) -> bool:
    """Whether ``value`` is a finite number of seconds from ``low`` to ``high`` (inf, nan, 0, -1 are not)."""
    return math.isfinite(value) and low <= value <= high
