"""Apply an image's layers, bottom first, into a folder the doctor owns: whiteouts and opaque folders honoured,
links kept as the image has them and never followed out of the folder, sizes and time bounded.

Each entry is vetted by tarfile's `data` filter against an empty folder (absolute and `..` names, device nodes and
hard links out of the image are refused there); parent folders are then resolved inside the root (an image's
absolute link means the image's own /), so no write ever goes through a link to the doctor's machine. A symbolic
link's target is stored verbatim: the host seam resolves it inside the root when a probe reads it.
"""
from __future__ import annotations

import os
import shutil
import tarfile
import time
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, List, Set

from .errors import ImageError

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
_MAX_LINKS = 40  # the kernel's ELOOP bound, as in host.py
_CHUNK = 1 << 20


@dataclass
class Limits:
    """Bounds on what one image may cost: bytes written, one file's size, entries, wall time."""

    max_bytes: int = 64 << 30
    max_file: int = 16 << 30
    max_entries: int = 2_000_000
    seconds: float = 600.0
    keep_free: int = 1 << 30  # never fill the disk the temporary folder is on past this


@dataclass
class LayerStats:
    digest: str
    entries: int = 0
    bytes: int = 0
    whiteouts: List[str] = field(default_factory=list)  # paths a whiteout removed (as the image sees them)
    opaque: List[str] = field(default_factory=list)  # folders a layer made opaque


class _Budget:
    def __init__(self, limits: Limits, root: str) -> None:
        self.limits, self.root = limits, root
        self.deadline = time.monotonic() + limits.seconds
        self.bytes = self.entries = 0

    def entry(self, where: str) -> None:
        self.entries += 1
        if self.entries > self.limits.max_entries:
            raise ImageError("%s: more than %d files in the image" % (where, self.limits.max_entries))
        if self.entries % 256 == 0 and time.monotonic() > self.deadline:
            raise ImageError("%s: reading the image took longer than %.0f s" % (where, self.limits.seconds))

    def grow(self, where: str, size: int) -> None:
        if size > self.limits.max_file:
            raise ImageError("%s is %s, over the %s limit for one file" % (where, _human(size),
                                                                           _human(self.limits.max_file)))
        self.bytes += size
        if self.bytes > self.limits.max_bytes:
            raise ImageError("%s: the image unpacks to more than %s" % (where, _human(self.limits.max_bytes)))
        free = shutil.disk_usage(self.root).free
        if size > free - self.limits.keep_free:
            raise ImageError("%s (%s) does not fit in the temporary folder's disk (%s free)" % (
                where, _human(size), _human(free)))


def _human(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return ("%d %s" if unit == "bytes" else "%.1f %s") % (n, unit)
        n /= 1024.0
    return str(n)


class Tree:
    """The root being built, with paths resolved inside it the way the container would see them."""

    def __init__(self, root: str, vetting: str) -> None:
        self.root = root
        self._vetting = vetting  # an empty folder beside the root: the data filter follows nothing in it

    def outside(self, inside: str) -> str:
        return os.path.join(self.root, inside.lstrip("/"))

    def resolve_parent(self, inside: str, where: str) -> str:
        """The inside path of ``inside``'s folder with every link on the way resolved within the root."""
        parts = [p for p in os.path.dirname(inside).split("/") if p]
        resolved: List[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part in (".", ""):
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/".join(resolved + [part])
            real = self.outside(candidate)
            if os.path.islink(real):
                hops += 1
                if hops > _MAX_LINKS:
                    raise ImageError("%s: the folders above it are a link loop" % where)
                target = os.readlink(real)
                if target.startswith("/"):
                    resolved = []
                parts = [p for p in target.split("/") if p] + parts
                continue
            resolved.append(part)
        return "/".join(resolved)

    def place(self, inside: str, where: str) -> str:
        """The doctor-side path for an entry, its folders created, whatever held its name removed."""
        parent = self.resolve_parent(inside, where)
        self.makedirs(parent, where)
        target = os.path.join(self.outside(parent), os.path.basename(inside))
        return target

    def makedirs(self, inside: str, where: str) -> None:
        path = self.root
        for part in [p for p in inside.split("/") if p]:
            path = os.path.join(path, part)
            if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
                raise ImageError("%s: %s is not a folder" % (where, part))
            if not os.path.lexists(path):
                os.mkdir(path, 0o755)

    def vet(self, member: tarfile.TarInfo, where: str) -> tarfile.TarInfo:
        """tarfile's data filter, against an empty folder so it judges the entry alone; ImageError when refused."""
        if member.issym():
            probe = member.replace(linkname="target", deep=False)  # link targets are the image's own business
        else:
            probe = member
        try:
            vetted = tarfile.data_filter(probe, self._vetting)
        except tarfile.FilterError as exc:
            raise ImageError("%s: refused by tarfile's data filter: %s" % (where, exc))
        if member.issym():
            vetted = vetted.replace(linkname=member.linkname, deep=False)
        return vetted

def remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=_writable_and_retry)
    elif os.path.lexists(path):
        os.unlink(path)


def _writable_and_retry(func: Callable, path: str, _exc) -> None:
    """A folder of the image without u+w (a 0555 /usr/share/...) still goes away: rmtree's usual fix."""
    os.chmod(os.path.dirname(path), 0o700)
    func(path)


def _copy(src: BinaryIO, dest: str, size: int, mode: int, where: str) -> None:
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    written = 0
    with os.fdopen(fd, "wb") as out:
        while written < size:
            chunk = src.read(min(_CHUNK, size - written))
            if not chunk:
                raise ImageError("%s: the layer ends inside this file" % where)
            out.write(chunk)
            written += len(chunk)
    os.chmod(dest, (mode & 0o7777) | 0o600)


def apply_layer(tree: Tree, fileobj: BinaryIO, stats: LayerStats, budget: _Budget, label: str) -> None:
    """One layer over what the layers below left: whiteouts first remove, then entries replace."""
    created: Set[str] = set()
    try:
        stream = tarfile.open(fileobj=fileobj, mode="r|*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ImageError("%s: not a tar layer (%s)" % (label, exc))
    try:
        for member in stream:
            where = "%s: %s" % (label, member.name)
            budget.entry(where)
            stats.entries += 1
            inside = entry_path(member.name, where)
            if not inside:
                continue
            base = os.path.basename(inside)
            if base == OPAQUE:
                folder = tree.resolve_parent(inside, where)
                real = tree.outside(folder)
                if os.path.isdir(real) and not os.path.islink(real):
                    for name in os.listdir(real):
                        if "/".join(filter(None, [folder, name])) not in created:
                            remove(os.path.join(real, name))
                stats.opaque.append("/" + os.path.dirname(inside))
                continue
            vetted = tree.vet(member, where)
            if base.startswith(WHITEOUT):
                victim = os.path.join(os.path.dirname(inside), base[len(WHITEOUT):])
                target = os.path.join(tree.outside(tree.resolve_parent(victim, where)), os.path.basename(victim))
                if os.path.lexists(target):
                    remove(target)
                stats.whiteouts.append("/" + victim)
                continue
            target = tree.place(inside, where)
            key = os.path.relpath(target, tree.root)
            if vetted.isdir():
                if os.path.lexists(target) and not (os.path.isdir(target) and not os.path.islink(target)):
                    remove(target)
                if not os.path.lexists(target):
                    os.mkdir(target, 0o700)
                os.chmod(target, (member.mode & 0o777) | 0o700)  # u+rwx: the doctor can always clean up
                created.add(key)
                continue
            remove(target)
            created.add(key)
            if vetted.isreg():
                budget.grow(where, vetted.size)
                stats.bytes += vetted.size
                src = stream.extractfile(member)
                # extractfile answers None only for members that are not regular files, and this one is
                _copy(src, target, vetted.size, vetted.mode, where)  # type: ignore[arg-type]
            elif vetted.issym():
                os.symlink(vetted.linkname, target)
            elif vetted.islnk():
                _hardlink(tree, target, vetted.linkname, where)
            elif vetted.isfifo():
                os.mkfifo(target, 0o600)
            else:
                raise ImageError("%s: an entry of type %r cannot be part of an image" % (where, vetted.type))
    except (tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, ImageError):
            raise
        raise ImageError("%s: damaged layer (%s)" % (label, exc))
    finally:
        stream.close()


def entry_path(name: str, where: str) -> str:
    """A layer entry's path inside the image ('' for the root itself); absolute and `..` names are refused."""
    if name.startswith("/"):
        raise ImageError("%s: absolute path in a layer" % where)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ImageError("%s: a `..` path in a layer" % where)
    return "/".join(parts)


def _hardlink(tree: Tree, target: str, linkname: str, where: str) -> None:
    """A hard link names another file of the image (the data filter has kept it inside); links are not followed."""
    inside = entry_path(linkname, where)
    source = os.path.join(tree.outside(tree.resolve_parent(inside, where)), os.path.basename(inside))
    if not os.path.lexists(source) or os.path.islink(source) or not os.path.isfile(source):
        raise ImageError("%s: a hard link to %s, which is not a file of the image" % (where, linkname))
    os.link(source, target, follow_symlinks=False)
