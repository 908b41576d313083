"""ld.so.conf lines as ldconfig(8) reads them: folders and `include` patterns, in file order."""
from __future__ import annotations

from typing import List, Tuple


def parse_ld_so_conf(text: str) -> List[Tuple[str, str]]:
    """("dir", folder) and ("include", glob pattern) entries; comments and `hwcap` lines dropped.

    Include patterns are returned as written (relative ones are relative to the including file's folder,
    which the caller knows); a folder written as `dir=TYPE` (old libc5 syntax) keeps only the folder.
    """
    out: List[Tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.split("\0", 1)[0].split("#", 1)[0].strip()  # ldconfig reads C strings: a NUL ends the line
        if not line:
            continue
        if line.startswith("include"):
            out.extend(("include", pattern) for pattern in line.split()[1:])
        elif line.startswith("hwcap"):
            continue
        else:
            out.append(("dir", line.split("=")[0].rstrip("/") or "/"))
    return out
