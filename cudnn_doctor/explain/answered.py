"""The answer a paste alone gives, as a value: its cause, one fix, and whether it is a problem at all. Its own module
so that answer.py (the order of the steps) and answer_signals.py (the named conditions) both import it and neither
imports the other's caller."""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Fix


@dataclass(frozen=True)
class Answer:
    """What the paste says went wrong and what to do; `problem` is False for a harmless line."""

    cause: str
    fix: Fix
    problem: bool = True
