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


# The words a table's sentence may start with whose capital is the sentence's, not a name's (Singularity, NVIDIA).
_SENTENCE_STARTS = ("The", "A", "An", "This", "Its", "Every", "On", "All", "No")


def clause(sentence: str) -> str:
    """A table's sentence (a symptom's meaning, a status's diagnosis, a check's title) said inside a cause: its own
    capital lowered where it is the sentence's, and its full stop dropped."""
    sentence = sentence.rstrip(".")
    return sentence[0].lower() + sentence[1:] if sentence.split(" ", 1)[0] in _SENTENCE_STARTS else sentence
