"""Reads tar (.tgz/.tar.xz/.tar/.tar.bz2) and zip (.zip/.whl) archives as one stream of members."""
from __future__ import annotations

import lzma
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Dict, Iterator, Literal, Optional, Tuple

from ..remedies.install_archive import cudnn_archive_kind_fix, damaged_archive_fix
from .errors import Refusal

CHUNK = 1 << 20

# How each tar format is read as a stream (tarfile's mode strings are literals to the type checker).
_STREAM_MODES: Dict[str, Literal["r|gz", "r|bz2", "r|"]] = {"tar.gz": "r|gz", "tar.bz2": "r|bz2", "tar": "r|"}


@dataclass
class Member:
    """One archive entry, described the same way whatever the format."""

    name: str  # as stored, with '\\' turned into '/'
    kind: str  # file, dir, symlink, hardlink, device, fifo, other
    size: int
    mode: int  # permission bits including setuid/setgid (0o7777)
    linkname: str = ""
    compressed_size: Optional[int] = None  # zip only: for the compression-ratio bound


def sniff(path: str) -> str:
    """The container format from the first bytes (not the file name, which may be wrong)."""
    with open(path, "rb") as fh:
        head = fh.read(512)
    if head.startswith(b"\xfd7zXZ\x00"):
        return "tar.xz"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head.startswith(b"BZh"):
        return "tar.bz2"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    raise Refusal(
        "%s is not a cuDNN archive format this installer reads" % os.path.basename(path),
        "it is not a .tar.xz, .tgz, .tar, .zip or .whl file (checked by content, not by name)",
        cudnn_archive_kind_fix(),
    )


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.isreg():
        return "file"
    if info.isdir():
        return "dir"
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    if info.ischr() or info.isblk():
        return "device"
    if info.isfifo():
        return "fifo"
    return "other"


def _zip_member(info: zipfile.ZipInfo) -> Member:
    unix_mode = (info.external_attr >> 16) & 0xFFFF
    ftype = stat.S_IFMT(unix_mode)
    if info.filename.endswith("/") or ftype == stat.S_IFDIR:  # not is_dir(): it raises IndexError on a '' name
        kind = "dir"
    elif ftype in (0, stat.S_IFREG):  # zips made on Windows carry no Unix type
        kind = "file"
    elif ftype == stat.S_IFLNK:
        kind = "symlink"
    elif ftype in (stat.S_IFCHR, stat.S_IFBLK):
        kind = "device"
    elif ftype == stat.S_IFIFO:
        kind = "fifo"
    else:
        kind = "other"
    mode = stat.S_IMODE(unix_mode) if unix_mode else (0o755 if kind == "dir" else 0o644)
    return Member(info.filename.replace("\\", "/"), kind, info.file_size, mode,
                  compressed_size=info.compress_size)


def _damaged(path: str, detail: str) -> Refusal:
    return Refusal(
        "%s is damaged or incomplete (%s)" % (os.path.basename(path), detail),
        "installing part of an archive would leave a mixed or broken cuDNN",
        damaged_archive_fix(),
    )


def _widen_pipe(stream: IO[bytes]) -> None:
    """Let xz run ahead while this process writes files: with the default 64 KiB pipe, the decoder (the
    slowest step, one core for a single-block .xz) stops each time a write here takes a moment."""
    try:
        import fcntl  # why: POSIX only (Windows has none); the ImportError below is that case

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), CHUNK)
    except (ImportError, OSError, ValueError):
        pass  # an older kernel or a lower pipe-max-size: the default pipe still works


@contextmanager
def _xz_stream(path: str) -> Iterator[Tuple[IO[bytes], "subprocess.Popen[bytes] | None"]]:
    """Decompressed bytes of a .xz file: `xz -dc -T0` on its own cores when present, else lzma."""
    xz = shutil.which("xz")
    if not xz:
        with lzma.open(path, "rb") as fh:
            yield fh, None
        return
    proc = subprocess.Popen([xz, "-dc", "-T0", "--", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            bufsize=CHUNK)
    try:
        assert proc.stdout is not None
        _widen_pipe(proc.stdout)
        yield proc.stdout, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()


_READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError, zlib.error, EOFError, OSError,
                ValueError)


@contextmanager
def _guard(path: str) -> Iterator[None]:
    """Errors while reading the archive mean it is damaged; say so in one line."""
    try:
        yield
    except Refusal:
        raise
    except _READ_ERRORS as exc:
        raise _damaged(path, str(exc) or type(exc).__name__)


class _GuardedReader:
    """A member's data; read errors (bad CRC, cut-off stream) become a Refusal."""

    def __init__(self, fh: IO[bytes], path: str) -> None:
        self._fh, self._path = fh, path

    def read(self, size: int = -1) -> bytes:
        with _guard(self._path):
            return self._fh.read(size)

    def readinto(self, buf: "bytearray | memoryview") -> int:
        with _guard(self._path):
            return self._fh.readinto(buf)  # type: ignore[attr-defined]  # the streams are files and pipes: buffered


@contextmanager
def members(path: str) -> Iterator[Iterator[Tuple[Member, Optional[_GuardedReader]]]]:
    """Yields an iterator of (member, reader); the reader is only valid until the next member.

    Tar archives are read once, front to back (a .tar.xz has no index, and reading it twice
    would double the cost of the slowest step). Only errors of reading the archive become a
    "damaged" Refusal; errors of the caller (say, a full disk) pass through unchanged.
    """
    fmt = sniff(path)
    if fmt == "zip":
        with _guard(path):
            zf = zipfile.ZipFile(path)
        with zf:
            yield _zip_iter(zf, path)
    elif fmt == "tar.xz":
        with _xz_stream(path) as (raw, proc):
            with _guard(path):
                tar = tarfile.open(fileobj=raw, mode="r|", bufsize=CHUNK)
            with tar:
                yield _tar_iter(tar, path, raw, proc)
    else:
        with _guard(path):
            tar = tarfile.open(path, mode=_STREAM_MODES[fmt], bufsize=CHUNK)
        with tar:
            yield _tar_iter(tar, path, None, None)


def _tar_iter(tar: tarfile.TarFile, path: str, raw: Optional[IO[bytes]],
              proc: "Optional[subprocess.Popen[bytes]]") -> Iterator[Tuple[Member, Optional[_GuardedReader]]]:
    infos = iter(tar)
    while True:
        with _guard(path):
            info = next(infos, None)
        if info is None:
            break
        member = Member(info.name.replace("\\", "/"), _tar_kind(info), info.size, info.mode & 0o7777,
                        info.linkname)
        with _guard(path):
            reader = tar.extractfile(info) if member.kind == "file" else None
        yield member, (_GuardedReader(reader, path) if reader is not None else None)
    if proc is not None and raw is not None:
        # tar stops at its end marker; xz only reports a damaged or cut-off stream at the end.
        with _guard(path):
            while raw.read(CHUNK):
                pass
        err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
        if proc.wait() != 0:
            raise _damaged(path, err.splitlines()[-1] if err else "xz exited with status %d" % proc.returncode)


def _zip_iter(zf: zipfile.ZipFile, path: str) -> Iterator[Tuple[Member, Optional[_GuardedReader]]]:
    for info in zf.infolist():
        member = _zip_member(info)
        if member.kind == "symlink":
            # Info-ZIP stores a link's target as its data.
            with _guard(path), zf.open(info) as fh:
                member.linkname = fh.read(4096).decode("utf-8", "replace")
            yield member, None
        elif member.kind == "file":
            with _guard(path):
                fh = zf.open(info)
            with fh:
                yield member, _GuardedReader(fh, path)
        else:
            yield member, None
