"""Roots built from Debian's own packages (dpkg -x of libc6, libc-bin, ...): the real glibc loader, run in a chroot."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional, Sequence, Tuple

from realdata import CACHE, cache_lock, filled_once

DEBS = ("libc6", "libc-bin", "libc6-i386", "libgcc-s1", "libstdc++6")

# Loads argv[1] first when it is not "-" (a consumer library, by path), then reports which file answers to the
# soname argv[2]: the path glibc recorded for it (struct link_map l_name), or the loader's own error text.
PROBE_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    void *first = NULL, *h;
    struct link_map *map = NULL;
    if (argc < 3) return 2;
    if (strcmp(argv[1], "-") != 0 && !(first = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL))) {
        printf("ERROR %s\n", dlerror());
        return 1;
    }
    h = dlopen(argv[2], first ? RTLD_NOW | RTLD_NOLOAD : RTLD_NOW);
    if (!h) { printf("ERROR %s\n", dlerror()); return 1; }
    dlinfo(h, RTLD_DI_LINKMAP, &map);
    printf("LOADED %s\n", map->l_name);
    return 0;
}
"""


def why_not() -> Optional[str]:
    """None when this machine can build and enter real roots, else the reason to skip."""
    if os.geteuid() != 0:
        return "chroot needs root"
    for tool in ("apt-get", "dpkg", "gcc", "chroot"):
        if shutil.which(tool) is None:
            return "%s is not installed" % tool
    if not Path("/lib64/ld-linux-x86-64.so.2").exists():
        return "not an x86_64 glibc machine"
    return None


def debs() -> Optional[Path]:
    """Debian's packages, downloaded once with apt-get into the test cache; None when apt cannot fetch them."""
    where = CACHE / "debs"
    if all(list(where.glob("%s_*.deb" % name)) for name in DEBS):
        return where
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    with cache_lock(where):  # apt-get writes into a private folder; the packages move into the cache whole
        if not all(list(where.glob("%s_*.deb" % name)) for name in DEBS):
            _apt_download(where, list(DEBS))
    return where if all(list(where.glob("%s_*.deb" % name)) for name in DEBS) else None


def _apt_download(where: Path, names: Sequence[str], opts: Sequence[str] = ()) -> None:
    private = where.with_name(where.name + ".download-%d" % os.getpid())
    private.mkdir(parents=True, exist_ok=True)
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "-q", *opts, "download", *names], cwd=private, capture_output=True, text=True)
    for deb in private.glob("*.deb"):
        os.replace(deb, where / deb.name)
    shutil.rmtree(private, ignore_errors=True)


def nonfree_deb(name: str) -> Optional[Path]:
    """A package from Debian 12's non-free section (Debian's own CUDA runtime, e.g. libcudart11.0), fetched with
    apt-get and a private source list and state folder, so the machine's apt configuration stays untouched."""
    where = CACHE / "debs-nonfree"
    found = sorted(where.glob("%s_*.deb" % name))
    if found:
        return found[-1]
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    state = CACHE / "apt-nonfree"
    with cache_lock(state):  # one run at a time updates the private lists and downloads
        if not sorted(where.glob("%s_*.deb" % name)):
            (state / "lists/partial").mkdir(parents=True, exist_ok=True)
            (state / "sources.list").write_text("deb http://deb.debian.org/debian bookworm non-free\n")
            opts = ["-o", "Dir::Etc::SourceList=%s" % (state / "sources.list"), "-o", "Dir::Etc::SourceParts=/dev/null",
                    "-o", "Dir::State::Lists=%s" % (state / "lists"), "-o", "Dir::Cache=%s" % (state / "cache")]
            subprocess.run(["apt-get", "-q", *opts, "update"], capture_output=True, text=True)
            _apt_download(where, [name], opts)
    found = sorted(where.glob("%s_*.deb" % name))
    return found[-1] if found else None


def base_root() -> Optional[Path]:
    """A minimal Debian root (cached): the packages unpacked with `dpkg -x` plus the probe program."""
    def make(tmp: Path) -> bool:
        found = debs()
        if found is None:
            return False
        tmp.mkdir(parents=True)
        for name in DEBS:
            deb = sorted(found.glob("%s_*.deb" % name))[-1]
            subprocess.run(["dpkg", "-x", str(deb), str(tmp)], check=True)
        src = tmp / "probe.c"
        src.write_text(PROBE_C)
        (tmp / "usr/local/bin").mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O1", "-o", str(tmp / "usr/local/bin/which-lib"), str(src)], check=True)
        src.unlink()
        for d in ("etc/ld.so.conf.d", "tmp", "opt"):
            (tmp / d).mkdir(parents=True, exist_ok=True)
        return True

    return filled_once(CACHE / "debian-root", make)


def new_root(dest: Path) -> Path:
    """A private copy of the cached root (hard links where possible: the tests only add and remove files)."""
    base = base_root()
    assert base is not None
    proc = subprocess.run(["cp", "-al", str(base), str(dest)], capture_output=True)
    if proc.returncode != 0:
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(base, dest, symlinks=True)
    (dest / ".complete").unlink()
    return dest


def _chroot() -> str:
    return shutil.which("chroot") or "/usr/sbin/chroot"


def ldconfig(root: Path) -> None:
    """The root's own ldconfig writes its cache, as `sudo ldconfig` would on that machine."""
    subprocess.run([_chroot(), str(root), "/sbin/ldconfig"], check=True, capture_output=True)


def glibc_picks(root: Path, soname: str, env: Optional[dict] = None, first: str = "-") -> Tuple[str, str]:
    """('LOADED', path) or ('ERROR', message) from the real loader inside the root."""
    clean = {"PATH": "/usr/bin:/bin"}
    clean.update(env or {})
    proc = subprocess.run([_chroot(), str(root), "/usr/local/bin/which-lib", first, soname], env=clean,
                          capture_output=True, text=True, timeout=60)
    if proc.returncode < 0:  # killed by a signal before it could say anything
        import signal

        return "ERROR", "killed by %s" % signal.Signals(-proc.returncode).name
    out = (proc.stdout or proc.stderr).strip()
    kind, _, rest = out.partition(" ")
    return kind, rest


def place(root: Path, inside: str, src: Path, size: Optional[int] = None) -> None:
    path = root / inside.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    data = src.read_bytes()
    path.write_bytes(data if size is None else data[:size])
    os.chmod(path, 0o755)


def gcc_consumer(dest: Path, needed: Sequence[str], stub_dir: Path, rpath: str, new_dtags: bool) -> Path:
    """A library like libtorch_cuda.so: DT_NEEDED on `needed`, with an RPATH (old tags) or RUNPATH (new tags)."""
    src = dest.with_suffix(".c")
    src.write_text("int consumer_marker(void) { return 1; }\n")
    flags = ["-L%s" % stub_dir, "-Wl,--no-as-needed"] + ["-l:%s" % n for n in needed]
    flags += ["-Wl,--%s-new-dtags" % ("enable" if new_dtags else "disable"), "-Wl,-rpath,%s" % rpath]
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(dest), str(src)] + flags, check=True)
    src.unlink()
    return dest
