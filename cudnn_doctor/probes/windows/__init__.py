"""Windows probes: the same facts, read the way Windows finds DLLs. Imports as probes do, never rules or render."""
from __future__ import annotations

import functools

from ..context import guard
from .drive import WindowsDrive, is_windows

__all__ = ["WindowsDrive", "is_windows", "collect_windows"]


def collect_windows(ctx) -> None:
    """Fill ctx.facts for a Windows machine; each step guarded like the Linux probes."""
    # why: every Linux check imports this package (is_windows); the Windows probes and pefile cost it 34 ms.
    from . import copies, loads, machine
    from .state import State

    state = State(ctx)
    for name, fn in (("host", machine.host), ("driver", machine.driver), ("python", copies.python),
                     ("toolkits", machine.toolkits), ("cudnn", copies.cudnn)):
        guard(ctx.facts, name, functools.partial(fn, state))
    guard(ctx.facts, "native", ctx.run_native)
    guard(ctx.facts, "loader", lambda: loads.predict(state))
