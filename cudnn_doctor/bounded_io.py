"""Opens only regular files, never waiting on one, and notes which path each thread is on.

A FIFO opened for reading waits for a writer, a socket cannot be opened, a device may read forever:
none of them is what a probe expects where a library, header or version file belongs, so they are
reported (finding CD003) instead of read. ``O_NONBLOCK`` makes the open itself return at once; the
type is then checked on the open descriptor (``fstat``), so a file swapped between a check and the
open cannot slip through. Blocking I/O that no flag can bound (a hung network mount) is bounded by
the probe executor, which reads ``current_path`` to name the path a stalled probe was on.
"""
from __future__ import annotations

import errno
import os
import stat
import threading
from typing import BinaryIO, Dict, Optional, Set

_KINDS = (
    (stat.S_ISFIFO, "named pipe (FIFO)"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISDIR, "folder"),
)

# thread id -> the path that thread last started to touch; a dict write is cheap and thread-safe.
_WHERE: Dict[int, str] = {}
_PROBE: Dict[int, str] = {}  # thread id -> the probe it works for
_ABANDONED: Set[int] = set()  # threads whose probe was given up: they stop at their next file operation


class Abandoned(BaseException):
    """Raised in a worker whose probe was given up, so it stops touching facts the report now owns.

    A BaseException so that a probe's own ``except Exception`` cannot swallow it.
    """


class NotRegularFile(OSError):
    """The path names something other than a regular file; ``kind`` says what."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__("%s is a %s, not a regular file" % (path, kind))
        self.path = path
        self.kind = kind


def kind_of(mode: int) -> str:
    """'named pipe (FIFO)', 'socket', ... for a st_mode; 'regular file' for a file."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "regular file" if stat.S_ISREG(mode) else "special file"


def what_is(path: str) -> str:
    """What ``path`` names, for a usage error: "missing", "dangling link", or a kind_of() name ("folder",
    "named pipe (FIFO)", "regular file", ...). Never opens it, so a FIFO or device costs nothing."""
    try:
        return kind_of(os.stat(path).st_mode)
    except FileNotFoundError:
        return "dangling link" if os.path.islink(path) else "missing"
    except OSError as exc:
        return "unreadable path (%s)" % (exc.strerror or exc)


def not_a_folder(path: str) -> Optional[str]:
    """Why ``path`` cannot be used as a folder ("does not exist", "is a named pipe (FIFO)"), or None."""
    kind = what_is(path)
    if kind == "folder":
        return None
    if kind == "missing":
        return "does not exist"
    if kind == "dangling link":
        return "is a link to %s, which does not exist" % os.readlink(path)
    return "is a %s, not a folder" % kind


def note(path: str) -> None:
    """Record that this thread is about to touch ``path`` (read back if it stalls there)."""
    ident = threading.get_ident()
    if ident in _ABANDONED:
        raise Abandoned(path)
    _WHERE[ident] = path


def current_path(thread_id: Optional[int]) -> Optional[str]:
    return _WHERE.get(thread_id) if thread_id is not None else None


def working_for(probe: str) -> None:
    """Declare which probe this thread works for (named in CD003 facts)."""
    _PROBE[threading.get_ident()] = probe


def current_probe() -> str:
    return _PROBE.get(threading.get_ident(), "")


def abandon(thread_id: Optional[int]) -> None:
    if thread_id is not None:
        _ABANDONED.add(thread_id)


def forget(thread_id: Optional[int]) -> None:
    """Drop what was noted for a thread that has finished."""
    if thread_id is None:
        return
    _WHERE.pop(thread_id, None)
    _PROBE.pop(thread_id, None)
    _ABANDONED.discard(thread_id)  # thread ids are reused once a thread ends


def open_regular(path: str) -> BinaryIO:
    """Open ``path`` for reading only if it is a regular file; raise NotRegularFile otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a device with no driver) cannot be opened at all
            raise NotRegularFile(path, kind_of(os.stat(path).st_mode)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, kind_of(mode))
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)  # regular files ignore the flag; clear it so reads behave normally
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
