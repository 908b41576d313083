"""Rules every archive member must pass before a byte of it is written anywhere."""
from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Dict, Set

from ..remedies.install_archive import hostile_archive_fix
from .archive import Member
from .errors import Refusal

GiB = 1 << 30


@dataclass
class Limits:
    """Bounds that stop a hostile or broken archive from filling the disk.

    The largest cuDNN library so far is under 1 GiB and a whole release under 3 GiB unpacked,
    so the defaults leave room for growth while stopping a bomb early.
    """

    max_member: int = 8 * GiB
    max_total: int = 32 * GiB
    max_members: int = 20000
    max_ratio: int = 200  # uncompressed/compressed for one zip member; real libraries are ~2-10x

    @classmethod
    def from_env(cls) -> "Limits":
        """CUDNN_DOCTOR_MAX_MEMBER_BYTES / CUDNN_DOCTOR_MAX_TOTAL_BYTES override the bounds."""
        limits = cls()
        for attr, var in (("max_member", "CUDNN_DOCTOR_MAX_MEMBER_BYTES"),
                          ("max_total", "CUDNN_DOCTOR_MAX_TOTAL_BYTES")):
            if os.environ.get(var, "").isdigit():
                setattr(limits, attr, int(os.environ[var]))
        return limits


def _refuse(member: Member, problem: str, why: str) -> Refusal:
    return Refusal("archive member %r %s" % (member.name, problem), why, hostile_archive_fix())


def clean_name(member: Member) -> str:
    """The member's path made relative and normal; refuses absolute paths and '..'."""
    name = member.name
    if not name or "\x00" in name:
        raise _refuse(member, "has an empty or NUL-containing name", "no real archive contains one")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise _refuse(member, "is an absolute path", "extracting it would write outside the install folder")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _refuse(member, "climbs out with '..'", "extracting it would write outside the install folder")
    if not parts and member.kind != "dir":
        raise _refuse(member, "has no name once '.' parts are dropped", "no real archive contains one")
    return "/".join(parts)  # "" only for the "./" folder entry of `tar -C dir -cf x.tar .`


@dataclass
class Checker:
    """Checks members in stream order and keeps the running totals that bound the whole archive."""

    limits: Limits = field(default_factory=Limits)
    total: int = 0
    count: int = 0
    seen: Set[str] = field(default_factory=set)
    links: Dict[str, str] = field(default_factory=dict)  # clean name -> normalised target

    def check(self, member: Member) -> str:
        """Returns the clean name, or raises a Refusal that says what is wrong with the member."""
        name = clean_name(member)
        self.count += 1
        if self.count > self.limits.max_members:
            raise Refusal("the archive has more than %d members" % self.limits.max_members,
                          "no cuDNN release has that many files; this looks like an archive bomb",
                          hostile_archive_fix())
        if member.kind == "hardlink":
            raise _refuse(member, "is a hard link", "hard links can alias files outside the install; "
                          "NVIDIA archives use symbolic links only")
        if member.kind == "device":
            raise _refuse(member, "is a device node", "device files have no place in a library install")
        if member.kind == "fifo":
            raise _refuse(member, "is a FIFO", "named pipes have no place in a library install")
        if member.kind == "other":
            raise _refuse(member, "has an unsupported type", "only files, folders and symbolic links are installed")
        if member.mode & 0o6000:
            raise _refuse(member, "has the setuid/setgid bit", "installing it would hand out privileges")
        if name in self.seen and member.kind != "dir":
            raise _refuse(member, "appears twice", "a second copy could replace a checked file after the check")
        for parent in _parents(name):
            if parent in self.links:
                raise _refuse(member, "lies under the symbolic link %r" % parent,
                              "writing through a link could land outside the install folder")
        if member.kind == "file":
            if member.size > self.limits.max_member:
                raise _refuse(member, "is %d bytes, over the %d-byte bound" % (member.size, self.limits.max_member),
                              "no cuDNN file is that large; this looks like an archive bomb")
            self.total += member.size
            if self.total > self.limits.max_total:
                raise Refusal("the archive unpacks to more than %d bytes" % self.limits.max_total,
                              "no cuDNN release is that large; this looks like an archive bomb",
                              hostile_archive_fix())
            if (member.compressed_size is not None and member.size > (1 << 20)
                    and member.size > self.limits.max_ratio * max(member.compressed_size, 1)):
                raise _refuse(member, "expands %d times" % (member.size // max(member.compressed_size, 1)),
                              "real libraries compress a few times at most; this is a zip bomb")
        if member.kind == "symlink":
            self.links[name] = self._link_target(member, name)
        self.seen.add(name)
        return name

    @staticmethod
    def _link_target(member: Member, name: str) -> str:
        target = member.linkname
        if not target or target.startswith("/") or "\x00" in target:
            raise _refuse(member, "is a link to an absolute path %r" % target,
                          "after installing it would point outside the cuDNN files")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if joined == ".." or joined.startswith("../") or joined.startswith("/"):
            raise _refuse(member, "is a link that escapes the archive (%r)" % target,
                          "after installing it would point outside the cuDNN files")
        return joined


class CountingWriter:
    """Counts bytes actually written, so a member that lies about its size is still bounded."""

    def __init__(self, fd: int, member: Member, limits: Limits) -> None:
        self.fd, self.member, self.limits, self.written = fd, member, limits, 0

    def write(self, data: "bytes | memoryview") -> None:
        self.written += len(data)
        if self.written > self.limits.max_member or self.written > max(self.member.size, 0) + (1 << 16):
            raise _refuse(self.member, "holds more data than its header declares",
                          "an archive that lies about sizes is damaged or hostile")
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]


def _parents(name: str):
    parts = name.split("/")
    for i in range(1, len(parts)):
        yield "/".join(parts[:i])
