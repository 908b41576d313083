"""Terminal conventions: which stream, whether to colour, and the one-line error exit."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn, Optional, TextIO

if TYPE_CHECKING:
    from rich.console import Console


# Exit codes are a contract (README "Exit codes").
EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_DOCTOR_FAILED = 3
EXIT_INCOMPLETE = 4  # no error found, but something could not be checked (issue 16)


def want_color(stream: TextIO, flag: Optional[bool] = None) -> bool:
    """--color/--no-color, then NO_COLOR, FORCE_COLOR, TERM=dumb, then whether it is a terminal."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def console(stderr: bool = False, color: Optional[bool] = None) -> "Console":
    from rich.console import Console  # only the terminal renderers pay for rich; --json never imports it

    stream = sys.stderr if stderr else sys.stdout
    colored = want_color(stream, color)
    return Console(
        file=stream,
        # Decided above, so rich must not second-guess it: force_terminal=False also means no bold/dim codes.
        force_terminal=colored,
        no_color=not colored,
        # rich drops colour on TERM=dumb even when forced; the flag and FORCE_COLOR outrank TERM=dumb.
        color_system=("standard" if colored and os.environ.get("TERM") == "dumb" else "auto"),
        highlight=False,
        soft_wrap=not colored,  # piped output keeps whole lines for grep
        width=None if colored else 100,
    )


def error_exit(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One clear line on stderr and a non-zero exit; never a traceback."""
    sys.stderr.write("cudnn-doctor: error: %s\n" % message)
    sys.stderr.flush()  # before the exit unwinds: a wrapped stream (test runners, pipes) may not flush itself
    import typer  # loaded already by the command that calls this; ui itself is imported by `--version`

    raise typer.Exit(code)


def hint(message: str) -> None:
    sys.stderr.write("%s\n" % message)
    sys.stderr.flush()
