"""Simulates the Linux dynamic loader's search (ld.so(8)) inside the Host's root, recording why each copy wins."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..host import Host
from ..model import LoaderFacts, Resolution
from ..readers.elf import ElfInfo, read_elf
from ..readers.ldcache import parse_ld_cache
from ..readers.ldconf import parse_ld_so_conf
from ..readers.ldso import hwcaps_subdirs, system_dirs
from .hostinfo import machine_of

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
    for kind, value in parse_ld_so_conf(text):
        if kind == "include":
            pattern = value if value.startswith("/") else os.path.join(os.path.dirname(path), value)
            for inc in host.glob(pattern):
                dirs.extend(read_conf_dirs(host, inc, depth + 1, seen))
        else:
            dirs.append(value)
    return list(dict.fromkeys(dirs))


# Files ld.so passes over, by read_elf's verdict; any other file with a loader_error ends the search there
# (glibc 2.36 elf/dl-load.c behaviour, checked in real roots by tests/probes/test_loader_glibc.py).
SKIPPED_BY_LD_SO = ("elfclass32", "wrong-machine", "unreadable")


class LoaderView:
    """The search state of a plain process: LD_LIBRARY_PATH, ld.so.cache and the default folders."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.facts = LoaderFacts()
        self.facts.ld_library_path = host.env_paths("LD_LIBRARY_PATH")
        raw = host.getenv("LD_LIBRARY_PATH")
        # glibc reads an empty entry (a stray ':' at either end, or '::') as the current folder; a variable that is
        # empty as a whole it ignores (_dl_init_paths: `*llp != '\0'`), as fix's filtered LD_LIBRARY_PATH can leave it.
        self.facts.ld_library_path_cwd = bool(raw) and any(
            not p or not p.startswith("/") for p in (raw or "").split(os.pathsep))
        self.facts.ld_preload = [p for p in (host.getenv("LD_PRELOAD") or "").replace(":", " ").split() if p]
        self.facts.conf_dirs = read_conf_dirs(host)
        self.machine = machine_of(host)
        # The root's own ld.so knows its system folders (Debian's has no /lib64, RHEL's only /lib64); the
        # distribution-neutral list stays for roots without one.
        ld_so = {"x86_64": "/lib64/ld-linux-x86-64.so.2", "aarch64": "/lib/ld-linux-aarch64.so.1"}.get(self.machine)
        data = host.read_bytes(ld_so, limit=16 << 20) if ld_so else None
        compiled_in = system_dirs(data) if data else []
        self.facts.default_dirs = [d for d in (compiled_in or default_dirs(self.machine)) if host.is_dir(d)]
        self.hwcaps = hwcaps_subdirs(host.read_text("/proc/cpuinfo")) if self.machine == "x86_64" else []
        self.cache: Optional[Dict[str, List[str]]] = None
        self._elf_cache: Dict[str, ElfInfo] = {}
        self._hwcaps_folders: Dict[Tuple[str, str], bool] = {}
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

    @classmethod
    def empty(cls, host: Host) -> "LoaderView":
        """A view that read nothing: what probes get when reading the loader's files was abandoned (CD002)."""
        view = cls.__new__(cls)
        view.host, view.facts, view.machine, view.cache, view._elf_cache = host, LoaderFacts(), "x86_64", None, {}
        view._hwcaps_folders = {}
        view.facts.cache_error = "not read: the loader's files did not answer in time"
        return view

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
                    self._elf_cache[key] = ElfInfo("truncated", loader_error="cannot read file data")
                finally:
                    fh.close()
        return self._elf_cache[key]

    def candidates(self, soname: str, runpath: Sequence[str] = (), rpath: Sequence[str] = (),
                   origin: Optional[str] = None,
                   inherited_rpath: Sequence[Tuple[Sequence[str], Optional[str]]] = ()) -> List[Tuple[str, str]]:
        """Every (path, how-found) a process would try for ``soname``, in ld.so's order.

        ``inherited_rpath``: (RPATH, $ORIGIN) of the objects that loaded the caller, nearest first; glibc searches
        them after the caller's own RPATH when the caller has no RUNPATH (elf/dl-load.c, _dl_map_object)."""
        def expand(dirs: Sequence[str], where: Optional[str] = origin) -> List[str]:
            out = []
            for d in dirs:
                if where is not None:
                    d = d.replace("$ORIGIN", where).replace("${ORIGIN}", where)
                out.append(os.path.normpath(d))
            return out

        steps: List[Tuple[str, List[str]]] = []
        if rpath and not runpath:
            steps.append(("RPATH", expand(rpath)))
        if not runpath:
            steps += [("RPATH of its loader", expand(dirs, where)) for dirs, where in inherited_rpath if dirs]
        steps.append(("LD_LIBRARY_PATH", list(self.facts.ld_library_path)))
        if runpath:
            steps.append(("RUNPATH", expand(runpath)))
        found: List[Tuple[str, str]] = []
        steps.append(("", []))  # the cache comes here
        steps.append(("default path", list(self.facts.default_dirs)))
        for via, dirs in steps:
            if not via and self.cache is not None:
                found += [(path, "ld.so.cache") for path in self.cache.get(soname, [])]
            for d in dirs:
                # glibc 2.33+ tries d/glibc-hwcaps/<level>/ first, for each level this CPU supports (a level folder
                # that is not there holds nothing: asked once per folder, not once per name).
                for sub in ["glibc-hwcaps/%s" % level for level in self.hwcaps if self._is_folder(d, level)] + [""]:
                    path = os.path.join(d, sub, soname) if sub else os.path.join(d, soname)
                    if self.host.lexists(path):
                        found.append((path, via))
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

    def _is_folder(self, folder: str, level: str) -> bool:
        """Whether folder/glibc-hwcaps/level is a folder (links followed), remembered for the view's life."""
        key = (folder, level)
        known = self._hwcaps_folders.get(key)
        if known is None:
            known = self._hwcaps_folders[key] = self.host.is_dir(os.path.join(folder, "glibc-hwcaps", level))
        return known

    def resolve(self, soname: str, runpath: Sequence[str] = (), rpath: Sequence[str] = (),
                origin: Optional[str] = None,
                inherited_rpath: Sequence[Tuple[Sequence[str], Optional[str]]] = ()) -> Resolution:
        """The candidate ld.so settles on; skipped and later candidates are recorded.

        glibc passes over files it cannot open and ELF files of another class or machine, but a file that
        is not a valid ELF object (empty, truncated, garbage) ends the search: the load fails right there.
        """
        res = Resolution(name=soname)
        for path, via in self.candidates(soname, runpath, rpath, origin, inherited_rpath):
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
                if info.loader_error:
                    res.error = info.loader_error
                    res.problems.append("%s (%s) stops the search: %s" % (path, via, res.error))
            else:
                res.shadowed.append({"path": path, "realpath": real, "via": via})
        return res
