"""One pass over an archive: check every member, then write the chosen ones into a staging folder."""
from __future__ import annotations

import errno
import os
import posixpath
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from ..remedies.install_archive import archive_as_published_fix, free_disk_space_fix, one_copy_per_file_fix
from . import hooks
from .archive import CHUNK, Member, members
from .errors import Refusal
from .layout import role_of
from .safety import Checker, CountingWriter, Limits

HEADER_NAMES = ("cudnn_version.h", "cudnn.h")
_HEADER_CAP = 1 << 18


@dataclass
class Entry:
    """An archive member that will be installed, placed by role (include/lib/implib/bin)."""

    role: str
    rel: str
    kind: str  # file | symlink
    size: int = 0
    mode: int = 0o644
    linkname: str = ""
    synthesized: bool = False  # a dev link the installer adds (wheels ship none)


@dataclass
class Listing:
    """What one pass over the archive found."""

    archive: str
    top: Optional[str] = None  # the top folder (cuda, cudnn-...-archive, nvidia)
    dist_info: Optional[str] = None  # a wheel's *.dist-info folder
    wheel: bool = False  # nvidia/cudnn/... members: the nvidia-cudnn-cuXX wheel layout
    entries: List[Entry] = field(default_factory=list)
    skipped: List[str] = field(default_factory=list)
    headers: Dict[str, str] = field(default_factory=dict)  # rel name -> text
    total_bytes: int = 0

    def names(self, role: str) -> Dict[str, Entry]:
        return {e.rel: e for e in self.entries if e.role == role}


Keep = Callable[[Entry], bool]


def final_mode(mode: int) -> int:
    """The `chmod a+r` rule: readable by all; never group/world writable; exec bits kept."""
    return (mode & 0o755) | 0o444


def _refuse_link(name: str, target: str, why: str) -> Refusal:
    return Refusal("archive member %r is a link to %r that %s" % (name, target, why),
                   "after installing it would dangle or point at another folder (failure D4)",
                   archive_as_published_fix())


def _refuse_collision(first: str, second: str, where: str) -> Refusal:
    return Refusal("archive members %r and %r both install to %s" % (first, second, where),
                   "one would silently replace the other, and which one wins would depend on the member order",
                   one_copy_per_file_fix())


def _claim(placed: Dict[Tuple[str, str], str], role: str, rel: str, name: str) -> None:
    """Records that ``name`` installs to role/rel; refuses when another member already does (or is its folder)."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        owner = placed.get((role, "/".join(parts[:i])))
        if owner is not None:
            raise _refuse_collision(owner, name, "%s/%s" % (role, "/".join(parts[:i])))
    for i in range(1, len(parts)):
        placed.setdefault((role, "/".join(parts[:i]) + "/"), name)  # folders: only nested names reach them
    owner = placed.get((role, rel + "/"))
    if owner is not None:
        raise _refuse_collision(owner, name, "%s/%s" % (role, rel))
    placed[(role, rel)] = name


def stream_into(archive: str, staging: Optional[str], keep: Keep, limits: Optional[Limits] = None,
                on_member: Optional[Callable[[str, int], None]] = None) -> Listing:
    """Checks every member (see safety.Checker) and writes those ``keep`` accepts under staging/<role>/;
    ``on_member(name, bytes so far)`` is told of each file before it is written (the progress bar).

    A refusal can come after some members were written: the caller owns ``staging`` and removes it.
    """
    limits = limits or Limits.from_env()
    checker = Checker(limits)
    listing = Listing(archive=archive)
    link_dirs: Dict[str, str] = {}
    installed: Dict[str, str] = {}  # clean name -> kind
    placed: Dict[Tuple[str, str], str] = {}  # (role, rel) -> the member installed there
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    written = 0
    with members(archive) as stream:
        for member, reader in stream:
            name = checker.check(member)
            if not name:
                continue
            first = name.split("/")[0]
            if listing.top is None and not first.endswith(".dist-info"):
                listing.top = first
            if name.startswith("nvidia/cudnn/"):
                listing.wheel = True
            if first.endswith(".dist-info") and listing.dist_info is None:
                listing.dist_info = first
            where = role_of(name) if member.kind in ("file", "symlink") else None
            if where is None:
                if member.kind != "dir":
                    listing.skipped.append(name)
                continue
            role, rel = where
            _claim(placed, role, rel, name)
            entry = Entry(role, rel, member.kind, member.size, member.mode, member.linkname)
            if member.kind == "symlink":
                target = checker.links[name]
                if posixpath.dirname(target) != posixpath.dirname(name):
                    raise _refuse_link(name, member.linkname, "leaves its own folder")
                link_dirs[name] = target
            listing.entries.append(entry)
            installed[name] = member.kind
            listing.total_bytes += member.size if member.kind == "file" else 0
            want = staging is not None and keep(entry)
            capture = role == "include" and rel in HEADER_NAMES and member.kind == "file"
            if not want and not capture:
                continue
            path = os.path.join(staging, role, *rel.split("/")) if want and staging is not None else None
            if path:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            if member.kind == "symlink":
                if path:
                    os.symlink(member.linkname, path)
                continue
            if on_member is not None and path:
                on_member(posixpath.basename(name), listing.total_bytes)
            text = _write(reader, path, member, limits, view, capture)
            if capture and text is not None:
                listing.headers[rel] = text
            if path:
                written += 1
                hooks.point("staged-%d" % written)
    _check_links(link_dirs, installed)
    return listing


def _write(reader, path: Optional[str], member: Member, limits: Limits, view: memoryview,
           capture: bool) -> Optional[str]:
    """Copies one member's bytes to ``path`` (created fresh, never through a link); returns header text."""
    kept = bytearray() if capture else None
    fd = -1
    if path:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags, 0o600)
    try:
        out = CountingWriter(fd, member, limits) if fd >= 0 else None
        while True:
            n = reader.readinto(view)
            if not n:
                break
            if out is not None:
                out.write(view[:n])
            if kept is not None and len(kept) < _HEADER_CAP:
                kept += view[:n]
        if fd >= 0:
            os.fchmod(fd, final_mode(member.mode))
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise Refusal("the disk holding %s is full" % os.path.dirname(path or "."),
                          "the archive unpacks to more than the free space",
                          free_disk_space_fix())
        raise
    finally:
        if fd >= 0:
            os.close(fd)
    return kept.decode("utf-8", "replace") if kept is not None else None


def _check_links(link_dirs: Dict[str, str], installed: Dict[str, str]) -> None:
    """Every installed link must lead, through installed links, to an installed file."""
    for name, target in link_dirs.items():
        seen = {name}
        while installed.get(target) == "symlink":
            if target in seen:
                raise _refuse_link(name, target, "loops back on itself")
            seen.add(target)
            target = link_dirs[target]
        if installed.get(target) != "file":
            raise _refuse_link(name, target, "the archive does not install")
