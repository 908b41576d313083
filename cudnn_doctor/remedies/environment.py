"""Fixes for a CUDA environment variable every program inherits: take it away, or set it to what CUDA should do."""
from __future__ import annotations

from typing import Optional

from ..model import WINDOWS_SHELL, Fix
from .shell import noted, run
from .shells import command_fix, powershell_quote, sh_quote

# Where a variable set for good lives, to take it out there too (the commands only change the shell they run in).
_WHERE_LINUX = "   (and where it is set for good: ~/.bashrc, /etc/environment, a job's or container's environment)"
_WHERE_WINDOWS = "   (and where it is set for good: the user's and the system's environment variables)"


def environment_variable_fix(name: str, platform: str, value: Optional[str] = None) -> Fix:
    """``name`` unset (``value`` None) or set to ``value`` in this shell, with where to change it for good."""
    if platform == "windows":
        command = ("Remove-Item Env:%s" % name if value is None
                   else "$env:%s = %s" % (name, powershell_quote(value)))
        return noted(command_fix([command], shell=WINDOWS_SHELL), _WHERE_WINDOWS)
    return noted(run("unset %s" % name if value is None else "export %s=%s" % (name, sh_quote(value)), shell="sh"),
                 _WHERE_LINUX)
