"""Read report files and stdin for `fleet` within a size limit, and split them into JSON documents safely.

Hostile input must cost one rejected report, never the run: a file is read only up to MAX_REPORT_BYTES (a
`check --json` report is tens of KB), a folder's FIFOs and devices are named instead of opened, and a document
nested deeper than the JSON decoder's recursion bound is rejected by name (the C decoder stops at Python's
recursion limit and raises RecursionError, which is caught per document, so the depth it reaches is bounded).
Stdin is read in chunks, so one report too large is refused without holding the whole stream.
"""
from __future__ import annotations

import codecs
import json
import os
from typing import Any, Callable, Iterator, Tuple, Union

from ..bounded_io import NotRegularFile, open_regular

MAX_REPORT_BYTES = 16 << 20  # 16 MiB: hundreds of times a real report, far below what would strain memory
_CHUNK = 1 << 20
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\r\n"
STDIN = "<stdin>"


class Bad:
    """Why a source or a document in it cannot be used: kind (unreadable or truncated) and the reason."""

    __slots__ = ("kind", "reason")

    def __init__(self, kind: str, reason: str) -> None:
        self.kind, self.reason = kind, reason


def _too_large(limit: int) -> Bad:
    return Bad("unreadable", "larger than %d MiB, the most a report may be (a `check --json` report is tens of KB); "
                             "not read" % (limit >> 20))


def read_report(path: str, in_folder: bool, limit: int = MAX_REPORT_BYTES) -> Union[bytes, Bad]:
    """The bytes of one report file, or why not. Found in a folder, only a regular file is opened (a FIFO there
    would block the run); named on the command line, a pipe is read too (`fleet <(ssh node cat report)`)."""
    try:
        f = open_regular(path) if in_folder else open(path, "rb")
    except NotRegularFile as exc:
        return Bad("unreadable", "a %s, not a report file; not opened" % exc.kind)
    except OSError as exc:
        return Bad("unreadable", exc.strerror or str(exc))
    with f:
        try:
            if os.fstat(f.fileno()).st_size > limit:
                return _too_large(limit)
            data = f.read(limit + 1)
        except OSError as exc:
            return Bad("unreadable", exc.strerror or str(exc))
    return _too_large(limit) if len(data) > limit else data


def stdin_reader(stdin) -> Callable[[int], str]:
    """read(n) -> up to n characters of stdin ('' at its end), decoded from its bytes as UTF-8 whatever the
    locale says (reports are UTF-8); a UnicodeDecodeError ends the stream for the caller to name."""
    raw = getattr(stdin, "buffer", None)
    if raw is None:
        return stdin.read
    decoder = codecs.getincrementaldecoder("utf-8")()

    def read(n: int) -> str:
        data = raw.read(n)
        return decoder.decode(data, final=not data)

    return read


def _label(name: str, index: int) -> str:
    return name if index == 1 and name != STDIN else "%s#%d" % (name, index)


def split_documents(name: str, read: Callable[[int], str],
                    limit: int = MAX_REPORT_BYTES) -> Iterator[Tuple[str, Union[Any, Bad]]]:
    """One or more JSON documents from ``read``, one per line or concatenated. A cut-off last one is truncated;
    a bad one on stdin is skipped to the next line, so it does not hide the rest; one larger than ``limit``
    characters or nested too deep is rejected by name."""
    buf, pos, index, eof = "", 0, 0, False

    def more() -> None:
        nonlocal buf, pos, eof
        try:
            chunk = read(max(_CHUNK, len(buf) - pos))  # doubling what is held: linear over a long document
        except UnicodeDecodeError as exc:
            raise _Stop(Bad("unreadable", "not UTF-8 text: %s" % exc.reason))
        buf, pos, eof = buf[pos:] + chunk, 0, not chunk

    def next_line() -> bool:
        """Skip past the next newline (stdin only); False when there is none."""
        nonlocal pos
        while True:
            nl = buf.find("\n", pos)
            if nl >= 0:
                pos = nl + 1
                return True
            if eof:
                return False
            pos = len(buf)
            more()

    try:
        while True:
            while pos < len(buf) and buf[pos] in _WHITESPACE:
                pos += 1
            if pos >= len(buf):
                if not eof:
                    more()
                    continue
                if index == 0:
                    yield name, Bad("truncated", "empty")
                return
            try:
                doc, end = _DECODER.raw_decode(buf, pos)
                bad = _too_large(limit) if end - pos > limit else None
            except RecursionError:
                bad = Bad("unreadable", "nested deeper than a report can be (JSON arrays or objects inside each "
                                        "other beyond Python's recursion limit); not parsed")
            except json.JSONDecodeError as exc:
                # Cut off: the input ran out mid-document (JSON strings hold no raw newline, so an unterminated
                # one means the line or file ended inside it).
                cut = exc.pos >= len(buf) or not buf[exc.pos:].strip() or exc.msg.startswith("Unterminated string")
                if cut and not eof:
                    if len(buf) - pos > limit:
                        index += 1
                        yield _label(name, index), _too_large(limit)
                        return  # no line to resynchronise on can be trusted inside a document that long
                    more()
                    continue
                bad = Bad("truncated", "ends in the middle of the JSON document") if cut else \
                    Bad("unreadable", "not JSON: %s" % exc.msg)
            index += 1
            if bad is None:
                yield _label(name, index), doc
                pos = end
                continue
            yield _label(name, index), bad
            if name != STDIN or not next_line():
                return
    except _Stop as stop:
        yield _label(name, index + 1), stop.bad


class _Stop(Exception):
    def __init__(self, bad: Bad) -> None:
        super().__init__(bad.reason)
        self.bad = bad
