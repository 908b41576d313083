"""Terminal conventions: which stream, whether to colour, and the one-line error exit."""
from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, Optional, TextIO

if TYPE_CHECKING:
    from rich.console import Console


# Exit codes are a contract (docs/json.md).
EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_DOCTOR_FAILED = 3
EXIT_INCOMPLETE = 4  # no error found, but something could not be checked (issue 16)


@dataclass(frozen=True)
class RootFlags:
    """The options given before the command (`cudnn-doctor --no-color check`)."""

    debug: bool = False
    color: Optional[bool] = None  # --color / --no-color; None: decide from the environment and the stream


# The running command's root options: set by cli.py's root callback for the one invocation and reset when it closes,
# so nothing leaks into the next command run in this process, nor (unlike os.environ) into a child process.
ROOT_OPTIONS: "ContextVar[RootFlags]" = ContextVar("cudnn_doctor_root_flags", default=RootFlags())


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
    from rich.console import Console  # why: 18 ms that only the terminal renderers pay; --json never imports it

    stream = sys.stderr if stderr else sys.stdout
    colored = want_color(stream, color if color is not None else ROOT_OPTIONS.get().color)
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


# Text the doctor prints, spelled in ASCII for a stream that cannot encode it (LC_ALL=C, PYTHONIOENCODING=ascii):
# the section marks first as whole marks, then single characters; anything else (a non-ASCII path) is escaped.
_ASCII_MARKS = (("[\u2713]", "[ok]"), ("[\u2717]", "[x]"), ("[\u00b7]", "[i]"))
_ASCII_CHARS = str.maketrans({"\u2713": "ok", "\u2717": "x", "\u00b7": "-", "\u00d7": "x", "\u2013": "-",
                              "\u2014": "--", "\u2026": "...", "\u2192": "->", "\u26a0": "!", "\u2265": ">=",
                              "\u2264": "<=", "\u2022": "*"})
_MARKS_PROBE = "\u2713\u2717\u00b7\u00d7\u2013"


def cannot_encode_marks(stream: Optional[TextIO]) -> bool:
    """True when ``stream``'s encoding cannot hold the marks the doctor prints (an ASCII or Latin-1 locale)."""
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        _MARKS_PROBE.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


class AsciiSafeStream:
    """A text stream that writes the doctor's marks in ASCII and escapes what its encoding cannot hold, so that
    an ASCII terminal gets a readable report and the right exit code instead of UnicodeEncodeError.

    It keeps the stream's own ``encoding``, so rich sees an ASCII-only console and draws its tables and bars in
    ASCII; it has no ``buffer``, so click cannot go around it and write UTF-8 bytes the terminal cannot show."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.encoding = getattr(stream, "encoding", None) or "ascii"
        self.errors = "backslashreplace"

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes for a binary stream this way; it must see a text one
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        out = text
        for mark, plain in _ASCII_MARKS:
            out = out.replace(mark, plain)
        out = out.translate(_ASCII_CHARS).encode(self.encoding, "backslashreplace").decode(self.encoding)
        self._stream.write(out)
        return len(text)

    def __getattr__(self, name: str):
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self._stream, name)


def ascii_safe_streams() -> None:
    """Wrap stdout and stderr when their encoding cannot hold the marks (called once, by the entry point)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, AsciiSafeStream) and cannot_encode_marks(stream):
            setattr(sys, name, AsciiSafeStream(stream))


def error_exit(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """One clear line on stderr and a non-zero exit; never a traceback."""
    sys.stderr.write("cudnn-doctor: error: %s\n" % message)
    sys.stderr.flush()  # before the exit unwinds: a wrapped stream (test runners, pipes) may not flush itself
    import typer  # why: loaded already by the command that calls this; ui itself is imported by `--version`

    stop = typer.Exit(code)
    stop.message = message  # type: ignore[attr-defined]  # the app's group puts it in the --json envelope (cli.py)
    raise stop
