"""The folders `pip install --target DIR` fills (another cuDNN major beside the environment), and those fix removes
from such a folder on PYTHONPATH: pip's list of the environment never shows them, so the journal keeps each one
itself: whether it existed, and a copy of it when it did, taken before anything changes; undo removes the folder and
copies the kept one back (again after a kill: idempotent)."""
from __future__ import annotations

import glob
import os
import shutil
from typing import List, Sequence

from ..install.journal import fsync_dir

_TARGET_OPTIONS = ("--target", "-t")


def targets(argv: Sequence[str]) -> List[str]:
    """The --target folders a pip command names."""
    return [os.path.abspath(argv[i + 1]) for i, w in enumerate(argv[:-1]) if w in _TARGET_OPTIONS]


def matching(patterns: Sequence[str]) -> List[str]:
    """The folders a removal names that are there (a dist-info's version may be a glob), each once, in order."""
    out: List[str] = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        out += [p for p in found if os.path.isdir(p) and not os.path.islink(p) and p not in out]
    return out


def remove(paths: Sequence[str]) -> None:
    """Removes each folder (kept in the journal first)."""
    for path in paths:
        shutil.rmtree(path)
        fsync_dir(os.path.dirname(path))


def keep(folder: str, paths: Sequence[str]) -> List[dict]:
    """Copies each existing target folder into the transaction (``folder``/targets/N); the journal's records."""
    records = []
    for n, path in enumerate(paths):
        backup = os.path.join(folder, "targets", str(n))
        existed = os.path.lexists(path)
        if existed:
            os.makedirs(os.path.dirname(backup), exist_ok=True)
            shutil.copytree(path, backup, symlinks=True)
            fsync_dir(os.path.dirname(backup))
        records.append({"path": path, "existed": existed, "backup": "targets/%d" % n})
    return records


def restore(folder: str, records: Sequence[dict]) -> List[str]:
    """Puts every target folder back as the journal found it; the paths restored or removed."""
    out = []
    for r in reversed(records):
        path = r["path"]
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)
        if r["existed"]:
            shutil.copytree(os.path.join(folder, *r["backup"].split("/")), path, symlinks=True)
        fsync_dir(os.path.dirname(path))
        out.append(path)
    return out
