"""The files half of the host seam: inside paths of the machine under ``--root`` mapped to the doctor's own, links
resolved inside that root, and reads that never block on a FIFO or device (bounded_io). Host (host/__init__.py)
adds the environment and the native child."""
from __future__ import annotations

import copy
import fnmatch
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Dict, Iterator, List, Optional, Tuple, TypeVar, Union

from .. import bounded_io

_MAX_LINKS = 40  # like the kernel's ELOOP bound
LIVE_ROOT = os.path.abspath(os.sep)  # "/" on POSIX, the current drive's root (C:\\) on Windows
LINK_LOOP = "(link loop)"  # ends a link chain that comes back on itself

_Files = TypeVar("_Files", bound="RootFiles")


class RootFiles:
    """Paths handed in and out are *inside* paths: as a program running under ``root`` would see them
    ("/usr/local/cuda"). Symbolic links are resolved inside the root, so an absolute link in a container image never
    escapes into the doctor's own machine. Host.__init__ sets these attributes."""

    root: Path
    # Paths that were not regular files where files were expected, for CD003: a run's own (``for_run``).
    not_regular: List[Tuple[str, str, str, str]]  # (probe, given path, kind, resolved path)
    # realpath and listdir answers while a snapshot is open (see ``snapshot``); None when closed: every call asks.
    _realpaths: Optional[Dict[str, Tuple[str, bool]]]
    _listings: Optional[Dict[str, List[str]]]

    @property
    def is_live(self) -> bool:
        return str(self.root) == LIVE_ROOT

    def outside(self, inside: str) -> Path:
        """The doctor's own path for an inside path, without resolving links."""
        return Path(self._outside(inside))

    def _outside(self, inside: str) -> str:
        """outside() as the string the os functions take: a run asks hundreds of times, and building a Path
        costs more than the stat it feeds. Every read goes through it: a Host that maps paths its own way (the
        realworld harness's CaseHost) replaces this, not outside()."""
        inside = "/" + inside.lstrip("/")
        root = str(self.root)
        return inside if root == LIVE_ROOT else root if inside == "/" else root + inside  # as Path writes it

    def inside(self, outside: Union[str, "os.PathLike[str]"]) -> str:
        """Map a doctor-side path back to how it appears under the root."""
        text = os.fspath(outside)
        if self.is_live:
            return text
        root = str(self.root)
        if text == root:
            return "/"
        if text.startswith(root + "/"):
            return text[len(root):]
        return text

    def _readlink_direct(self, inside: str) -> Optional[str]:
        """readlink of a path whose folders are already resolved (else the OS would follow them outside)."""
        try:
            return os.readlink(self._outside(inside))
        except OSError:
            return None

    def readlink(self, inside: str) -> Optional[str]:
        return self._readlink_direct(self._in_real_parent(inside))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within the block, each path's links are resolved once and each folder listed once: one `check` asks for
        the same folders hundreds of times (every library search walks /usr/lib, /usr/local/cuda/lib64, ...; the
        cuDNN, toolkit and leftover probes each list /usr/lib/x86_64-linux-gnu, thousands of names), and a run is a
        snapshot of the machine anyway. Probes never write, so nothing inside the block can make an answer
        stale; the memo is dropped when the block ends, so a Host that outlives it (an installer that
        changes files and then looks again) resolves afresh."""
        outer = self._realpaths
        if outer is None:
            self._realpaths, self._listings = {}, {}
        try:
            yield
        finally:
            if outer is None:
                self._realpaths, self._listings = None, None

    def realpath(self, inside: str) -> Tuple[str, bool]:
        """Resolve every link in ``inside`` within the root. Returns (path, dangling)."""
        bounded_io.note(inside)
        return self._remembered(inside)

    def _remembered(self, inside: str) -> Tuple[str, bool]:
        memo = self._realpaths
        if memo is None:
            return self._resolve(inside)
        found = memo.get(inside)
        if found is None:
            found = memo[inside] = self._resolve(inside)
        return found

    def _resolve(self, inside: str) -> Tuple[str, bool]:
        if self.is_live:
            real = self._live_realpath(inside)
            return real, not os.path.exists(real)
        parts = [p for p in inside.split("/") if p]
        resolved: List[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join(resolved + [part])
            target = self._readlink_direct(candidate)
            if target is None:
                resolved.append(part)
                continue
            hops += 1
            if hops > _MAX_LINKS:
                return candidate, True
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
        path = "/" + "/".join(resolved)
        return path, not os.path.lexists(self._outside(path))

    def _live_realpath(self, inside: str) -> str:
        """os.path.realpath(inside); in a snapshot, from its folder's remembered answer and one lstat of the last
        name (a run resolves hundreds of paths under the same few folders, each walked from / by realpath)."""
        folder, name = os.path.split(inside)
        if self._realpaths is None or name in ("", ".", "..") or not folder or folder == inside:
            return os.path.realpath(inside)
        path = os.path.join(self._remembered(folder)[0], name)
        return os.path.realpath(path) if os.path.islink(path) else path

    def link_chain(self, inside: str) -> Tuple[List[str], bool]:
        """The chain of links from ``inside`` to the final file (``ln -s`` hops only)."""
        chain = [inside]
        current = inside
        for _ in range(_MAX_LINKS):
            target = self.readlink(current)
            if target is None:
                break
            nxt = target if target.startswith("/") else os.path.normpath(os.path.join(os.path.dirname(current), target))
            if nxt in chain:
                chain.append(LINK_LOOP)  # the kernel's ELOOP: the chain never reaches a file
                break
            chain.append(nxt)
            current = nxt
        real, dangling = self.realpath(inside)
        return chain, dangling

    def real(self, inside: str) -> Path:
        """The doctor-side path of the file an inside path finally names."""
        return Path(self._real(inside))

    def _real(self, inside: str) -> str:
        path, _ = self.realpath(inside)
        return self._outside(path)

    def exists(self, inside: str) -> bool:
        return os.path.exists(self._real(inside))

    def lexists(self, inside: str) -> bool:
        return os.path.lexists(self._outside(self._in_real_parent(inside)))

    def _in_real_parent(self, inside: str) -> str:
        """``inside`` with its folders resolved and its last name kept (a link stays a link)."""
        parent, _ = self.realpath(os.path.dirname(inside) or "/")
        name = os.path.basename(inside)
        return os.path.join(parent, name) if name else parent

    def is_dir(self, inside: str) -> bool:
        return os.path.isdir(self._real(inside))

    def is_file(self, inside: str) -> bool:
        return os.path.isfile(self._real(inside))

    def is_link(self, inside: str) -> bool:
        return os.path.islink(self._outside(self._in_real_parent(inside)))

    def stat(self, inside: str) -> Optional[os.stat_result]:
        """stat() of the file an inside path finally names (links followed inside the root)."""
        bounded_io.note(inside)
        try:
            return os.lstat(self._real(inside))
        except OSError:
            return None

    def listdir(self, inside: str) -> List[str]:
        bounded_io.note(inside)
        real = self._real(inside)
        memo = self._listings
        names = memo.get(real) if memo is not None else None
        if names is None:
            try:
                names = sorted(os.listdir(real))
            except OSError:
                names = []
            if memo is not None:
                memo[real] = names
        return list(names)  # the caller's own list: the memo's stays as the folder was

    def read_bytes(self, inside: str, limit: int = 1 << 20) -> Optional[bytes]:
        opened = self.open_binary(inside)
        if opened is None:
            return None
        with opened[0] as fh:
            try:
                return fh.read(limit)
            except OSError:
                return None

    def open_binary(self, inside: str) -> Optional[Tuple[BinaryIO, int]]:
        """An open regular file and its size, for readers that seek (ELF, ld.so.cache); caller closes it.

        A FIFO, socket or device is never read (it may block or never end): it is noted for CD003.
        """
        real, _ = self.realpath(inside)
        bounded_io.note(real)
        try:
            fh = bounded_io.open_regular(self._outside(real))
        except bounded_io.NotRegularFile as exc:
            self.note_not_regular(inside, real, exc.kind)
            return None
        except OSError:
            return None
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            fh.close()
            return None
        return fh, size

    def for_run(self: _Files) -> _Files:
        """This machine as one observation run sees it: the same host, with a list of its own for what the run
        meets where files belong, so that nothing of a run stays in the Host its caller passed."""
        run = copy.copy(self)
        run.not_regular = []
        return run

    def note_not_regular(self, inside: str, real: str, kind: str, probe: Optional[str] = None) -> None:
        """Note a FIFO, socket, device or folder met where a file belongs, for CD003: by the path the probe was
        given, then what it resolved to; once per resolved file (two links to one FIFO are one finding)."""
        if not any(s[2:] == (kind, real) for s in self.not_regular):
            self.not_regular.append((probe or bounded_io.current_probe(), inside, kind, real))

    def regular_file_kind(self, inside: str) -> Optional[str]:
        """None when ``inside`` finally names a regular file (or nothing); else what it is ("named pipe (FIFO)",
        "folder", ...). Only stat()s: a FIFO is never opened."""
        st = self.stat(inside)
        if st is None or stat.S_ISREG(st.st_mode):
            return None
        return bounded_io.kind_of(st.st_mode)

    def read_text(self, inside: str, limit: int = 1 << 20) -> Optional[str]:
        data = self.read_bytes(inside, limit)
        return None if data is None else data.decode("utf-8", "replace")

    def read_blocker(self, inside: str) -> Optional[str]:
        """The first path that stops 'other' from reading ``inside``: the file without o+r, or a folder
        above it without o+x. None when everyone can read it (or it cannot be examined).

        Mode bits, not access(): as root, access() says yes to everything, which hides the D5
        failure from the people who hit it.
        """
        path, dangling = self.realpath(inside)
        if dangling:
            return None
        parents = []
        parent = os.path.dirname(path)
        while parent and parent != "/":
            parents.append(parent)
            parent = os.path.dirname(parent)
        for folder in reversed(parents):  # outermost first: that is the one to fix first
            try:
                if not os.stat(self._outside(folder)).st_mode & stat.S_IXOTH:
                    return folder
            except OSError:
                return None
        try:
            return None if os.stat(self._outside(path)).st_mode & stat.S_IROTH else path
        except OSError:
            return None

    def world_readable(self, inside: str) -> Optional[bool]:
        """True when 'other' may read the file and search every folder above it (None: cannot tell)."""
        path, dangling = self.realpath(inside)
        if dangling or not os.path.exists(self._outside(path)):
            return None
        return self.read_blocker(inside) is None

    def glob(self, pattern: str) -> List[str]:
        """Expand shell wildcards component by component, inside the root."""
        parts = [p for p in pattern.split("/") if p]
        found = ["/"]
        for part in parts:
            nxt: List[str] = []
            for base in found:
                if any(ch in part for ch in "*?["):
                    for name in self.listdir(base):
                        if fnmatch.fnmatchcase(name, part):
                            nxt.append(os.path.join(base, name))
                else:
                    cand = os.path.join(base, part)
                    if self.lexists(cand):
                        nxt.append(cand)
            found = nxt
            if not found:
                break
        return sorted(found)

