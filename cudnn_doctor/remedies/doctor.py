"""Fixes for the doctor's own trouble: a probe that failed, a rule that raised."""
from __future__ import annotations

from ..model import Fix
from .shell import advice, stated


def probe_failed_fix() -> Fix:
    return stated("Re-run with `cudnn-doctor --debug check -v` and report it with `cudnn-doctor check --json` "
                  "attached.")


def rule_crashed_fix() -> Fix:
    return stated("Report it with the output of `cudnn-doctor check --json` attached.")


def smoke_failure_fix(known: str = "") -> Fix:
    """The fix the smoke test's status table gives for its failure (compat/status_codes.toml), else how to see more."""
    return stated(known) if known else advice("Run `cudnn-doctor smoke --json` for the failing call and status.")
