"""Option values checked where they enter: a number no command can use is one line and exit 2, before any work."""
from __future__ import annotations

from typing import Callable, Optional

import typer

from ..ui import EXIT_USAGE, error_exit
from .bounds import MAX_SECONDS, seconds_in_range


def seconds(low: float, high: float = MAX_SECONDS) -> Callable[..., Optional[float]]:
    """A typer callback accepting a finite number of seconds from ``low`` to ``high`` (inf, nan, 0, -1: exit 2)."""
    def check(ctx: typer.Context, param: typer.CallbackParam, value: Optional[float]) -> Optional[float]:
        if ctx.resilient_parsing or value is None:  # shell completion parses without acting
            return value
        if not seconds_in_range(value, low, high):
            error_exit("%s %s: give a number of seconds from %g to %g" % (param.opts[0], value, low, high),
                       EXIT_USAGE)
        return value
    return check
