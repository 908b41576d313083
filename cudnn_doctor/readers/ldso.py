"""What a machine's own ld.so searches: its compiled-in system folders and the glibc-hwcaps levels of the CPU."""
from __future__ import annotations

import re
from typing import List, Optional

# glibc stores its system search path as one string of NUL-separated folders ("/lib/x86_64-linux-gnu/\0/usr/lib/
# x86_64-linux-gnu/\0/lib/\0/usr/lib/\0" on Debian, "/lib64/\0/usr/lib64/\0" on RHEL): `ld.so --help` prints it.
_SYSTEM_DIRS = re.compile(rb"(?:/(?:usr/)?lib[A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.+-]+)*/\0){2,}")

# x86-64 micro-architecture levels (the psABI's x86-64-v2/v3/v4, as glibc's dl-hwcaps checks them), by the flag
# names /proc/cpuinfo uses.
X86_64_LEVELS = (
    ("x86-64-v4", ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")),
    ("x86-64-v3", ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "movbe", "abm")),
    ("x86-64-v2", ("cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3")),
)


# The bytes a folder of _SYSTEM_DIRS is made of ("/" included, NUL not).
_PATH_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-/")


def system_dirs(ld_so: bytes) -> List[str]:
    """The folders ld.so searches after the cache, in order, without trailing slashes; [] when not found."""
    # The same leftmost match as _SYSTEM_DIRS.search(ld_so), without running the pattern over the 200 kB before
    # it (4 ms): a match is two folders or more, so it holds "/\0/", and its first folder holds no NUL; it starts
    # in the run of folder bytes before the first "/\0/" of the file, or after it.
    first = ld_so.find(b"/\0/")
    if first < 0:
        return []
    start = first
    while start > 0 and ld_so[start - 1] in _PATH_BYTES:
        start -= 1
    m = _SYSTEM_DIRS.search(ld_so, start)
    if not m:
        return []
    return [d.decode().rstrip("/") or "/" for d in m.group().split(b"\0") if d]


def hwcaps_subdirs(cpuinfo: Optional[str]) -> List[str]:
    """glibc-hwcaps subfolders ld.so tries before each folder, best first (glibc 2.33+). Without /proc/cpuinfo,
    x86-64-v2 only: every x86-64 CPU of the last fifteen years has it."""
    if not cpuinfo:
        return ["x86-64-v2"]
    m = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
    flags = set(m.group(1).split()) if m else set()
    levels: List[str] = []
    for name, needs in reversed(X86_64_LEVELS):
        if not all(f in flags for f in needs):
            break
        levels.insert(0, name)
    return levels
