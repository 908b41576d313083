"""Simulates the Linux dynamic loader's search (ld.so(8)) inside the Host's root, recording why each copy wins."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..host import Host
from ..model import LoaderFacts, Resolution
from .elf import ElfInfo, read_elf
from .ldcache import parse_ld_cache

TRIPLETS = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "ppc64": "powerpc64le-linux-gnu"}


def default_dirs(machine: str) -> tuple:
    """Trusted folders ld.so searches last: Debian/Ubuntu multiarch first, then RHEL's lib64, then plain."""
    triplet = TRIPLETS.get(machine, "%s-linux-gnu" % machine)
    return ("/lib/%s" % triplet, "/usr/lib/%s" % triplet, "/lib64", "/usr/lib64", "/lib", "/usr/lib")


def read_conf_dirs(host: Host, path: str = "/etc/ld.so.conf", depth: int = 0,
                   seen: Optional[Set[str]] = None) -> List[str]:
    """Folders listed in ld.so.conf, following `include` globs as ldconfig does.

    Each file is read once per call: a file that includes itself (or a cycle of them) would otherwise be read
    once per path through the include graph, exponentially many times.
    """
    seen = set() if seen is None else seen
    real = host.realpath(path)[0]
    if depth > 8 or real in seen:
        return []
    seen.add(real)
    text = host.read_text(path)
    if text is None:
        return []
    dirs: List[str] = []
    for raw in text.splitlines():
        line = raw.split("\0", 1)[0].split("#", 1)[0].strip()  # ldconfig reads C strings: a NUL ends the line
        if not line:
            continue
        if line.startswith("include"):
            for pattern in line.split()[1:]:
                if not pattern.startswith("/"):
                    pattern = os.path.join(os.path.dirname(path), pattern)
                for inc in host.glob(pattern):
                    dirs.extend(read_conf_dirs(host, inc, depth + 1, seen))
        elif line.startswith("hwcap"):
            continue
        else:
            dirs.append(line.split("=")[0].rstrip("/") or "/")
    return list(dict.fromkeys(dirs))


# What ld.so does with a candidate file, by read_elf's verdict (glibc 2.36 elf/dl-load.c behaviour,
# checked with real dlopen calls in tests/test_loader_live.py).
SKIPPED_BY_LD_SO = ("elfclass32", "wrong-machine", "unreadable")
LOADER_ERRORS = {"empty": "file too short", "truncated": "cannot read file data", "not-elf": "invalid ELF header"}


class LoaderView:
    """The search state of a plain process: LD_LIBRARY_PATH, ld.so.cache and the default folders."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.facts = LoaderFacts()
        self.facts.ld_library_path = host.env_paths("LD_LIBRARY_PATH")
        raw = host.getenv("LD_LIBRARY_PATH")
        # glibc reads an empty entry (a stray ':' at either end, or '::') as the current folder.
        self.facts.ld_library_path_cwd = raw is not None and any(
            not p or not p.startswith("/") for p in raw.split(os.pathsep))
        self.facts.ld_preload = [p for p in (host.getenv("LD_PRELOAD") or "").replace(":", " ").split() if p]
        self.facts.conf_dirs = read_conf_dirs(host)
        self.machine = host.machine()
        self.facts.default_dirs = [d for d in default_dirs(self.machine) if host.is_dir(d)]
        self.cache: Optional[Dict[str, List[str]]] = None
        self._elf_cache: Dict[str, ElfInfo] = {}
        st = host.stat("/etc/ld.so.cache")
        self.facts.cache_mtime = st.st_mtime if st is not None else None
        data = host.read_bytes("/etc/ld.so.cache", limit=64 << 20)
        if data is None:
            self.facts.cache_error = "no /etc/ld.so.cache"
        else:
            self.facts.cache_path = "/etc/ld.so.cache"
            try:
                self.cache, self.facts.cache_entries = parse_ld_cache(data, self.machine)
            except Exception as exc:  # ValueError, struct.error: garbage in the cache file
                self.facts.cache_error = "unreadable ld.so.cache: %s" % exc

    def find_stale_entries(self, prefixes=("libcudnn", "libcudart", "libcuda.", "libnvidia-ml", "libnvrtc")) -> None:
        """CUDA/cuDNN libraries in ld.so.conf folders that no cache entry reaches: ldconfig was not re-run (F1)."""
        if self.cache is None:
            return
        # ldconfig registers sonames; a versioned file counts as cached when a cached name leads to it.
        reached = {self.host.realpath(p)[0] for name, paths in self.cache.items() if name.startswith(prefixes)
                   for p in paths}
        for d in self.facts.conf_dirs:
            for name in self.host.listdir(d):
                if not name.startswith(prefixes) or ".so." not in name:
                    continue
                path = os.path.join(d, name)
                real, dangling = self.host.realpath(path)
                if dangling or real in reached:
                    continue
                # Only a file reached under its own SONAME is something ldconfig would have registered;
                # a leftover versioned file that nothing links to is a different problem (D3).
                if self.elf(path, dynamic=True).soname == name:
                    self.facts.stale_cache.append(path)

    def elf(self, inside: str, dynamic: bool = False) -> ElfInfo:
        key = "%s|%d" % (inside, dynamic)
        if key not in self._elf_cache:
            opened = self.host.open_binary(inside)
            if opened is None:
                self._elf_cache[key] = ElfInfo("unreadable")
            else:
                fh, size = opened
                try:
                    self._elf_cache[key] = read_elf(fh, size, expect_machine=self.machine, dynamic=dynamic)
                except Exception:  # a hostile header must not stop the run
                    self._elf_cache[key] = ElfInfo("truncated")
                finally:
                    fh.close()
        return self._elf_cache[key]

    def candidates(self, soname: str, runpath: Sequence[str] = (), rpath: Sequence[str] = (),
                   origin: Optional[str] = None) -> List[Tuple[str, str]]:
        """Every (path, how-found) a process would try for ``soname``, in ld.so's order."""
        def expand(dirs: Sequence[str]) -> List[str]:
            out = []
            for d in dirs:
                if origin is not None:
                    d = d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                out.append(os.path.normpath(d))
            return out

        steps: List[Tuple[str, List[str]]] = []
        if rpath and not runpath:
            steps.append(("RPATH", expand(rpath)))
        steps.append(("LD_LIBRARY_PATH", list(self.facts.ld_library_path)))
        if runpath:
            steps.append(("RUNPATH", expand(runpath)))
        found: List[Tuple[str, str]] = []
        for via, dirs in steps:
            for d in dirs:
                path = os.path.join(d, soname)
                if self.host.lexists(path):
                    found.append((path, via))
        if self.cache is not None:
            for path in self.cache.get(soname, []):
                found.append((path, "ld.so.cache"))
        for d in self.facts.default_dirs:
            path = os.path.join(d, soname)
            if self.host.lexists(path):
                found.append((path, "default path"))
        # Keep the first mention of each file; later ones are the same copy seen again.
        seen = set()
        unique = []
        for path, via in found:
            real, _ = self.host.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            unique.append((path, via))
        return unique

    def resolve(self, soname: str, runpath: Sequence[str] = (), rpath: Sequence[str] = (),
                origin: Optional[str] = None) -> Resolution:
        """The candidate ld.so settles on; skipped and later candidates are recorded.

        glibc passes over files it cannot open and ELF files of another class or machine, but a file that
        is not a valid ELF object (empty, truncated, garbage) ends the search: the load fails right there.
        """
        res = Resolution(name=soname)
        for path, via in self.candidates(soname, runpath, rpath, origin):
            real, dangling = self.host.realpath(path)
            if res.path is None:
                if dangling:
                    res.problems.append("%s (%s) is a dangling link, skipped" % (path, via))
                    continue
                info = self.elf(path)
                if info.status in SKIPPED_BY_LD_SO:
                    res.problems.append("%s (%s) skipped: %s" % (path, via, info.status))
                    continue
                res.path, res.realpath, res.via = path, real, via
                if info.status != "ok":
                    res.error = LOADER_ERRORS.get(info.status, info.status)
                    res.problems.append("%s (%s) stops the search: %s" % (path, via, res.error))
            else:
                res.shadowed.append({"path": path, "realpath": real, "via": via})
        return res
