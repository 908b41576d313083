"""Fixes for a CUDA environment variable every program inherits: take it away, or set it to what CUDA should do."""
from __future__ import annotations

from typing import Optional

from ..model import Fix
from .acting import on_windows, set_variable, target_shell, unset_variable
from .shell import noted
from .shells import command_fix

# Where a variable set for good lives, to take it out there too (the commands only change the shell they run in).
_WHERE_LINUX = "   (and where it is set for good: ~/.bashrc, /etc/environment, a job's or container's environment)"
_WHERE_WINDOWS = "   (and where it is set for good: the user's and the system's environment variables)"


def environment_variable_fix(name: str, value: Optional[str] = None) -> Fix:
    """``name`` unset (``value`` None) or set to ``value`` in this shell, as the Target's shell writes it, with where
    to change it for good."""
    command = unset_variable(name) if value is None else set_variable(name, value)
    return noted(command_fix([command], shell=target_shell()), _WHERE_WINDOWS if on_windows() else _WHERE_LINUX)
