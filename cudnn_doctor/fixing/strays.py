"""What a pip killed part-way leaves in site-packages: a wheel's files written before its dist-info (so `pip list`
never shows the package and undo's uninstall never takes it), and pip's stash of an upgraded release (`~name`
folders). The journal keeps the list of every file name in the environment's sites before pip runs; undoing a fix
that was interrupted removes what is not on that list, once the packages are back at their recorded versions.
After a finished fix, only what an installed package's RECORD lists goes (a damaged install fix repaired by
reinstalling the same release: undo puts the damage back, as the journal found it); a file the user wrote since
stays."""
from __future__ import annotations

import json
import os
import shutil
from typing import Dict, List, Optional, Sequence, Set

from ..install.journal import fsync_dir

LIST = "site-files.json"  # in the transaction folder, beside the journal
_SKIP = ("__pycache__",)  # bytecode an import writes is no package's file


def names(sites: Sequence[str]) -> Dict[str, List[str]]:
    """{site: every file and link under it, relative} (folders are implied by their files)."""
    out: Dict[str, List[str]] = {}
    for site in sites:
        found: List[str] = []
        for folder, dirs, files in os.walk(site):
            dirs[:] = [d for d in dirs if d not in _SKIP]
            rel = os.path.relpath(folder, site)
            found += [os.path.normpath(os.path.join(rel, f)) for f in files]
            found += [os.path.normpath(os.path.join(rel, d)) for d in dirs if os.path.islink(os.path.join(folder, d))]
        out[site] = sorted(found)
    return out


def keep(folder: str, sites: Sequence[str]) -> Dict[str, List[str]]:
    """Writes the list into the transaction folder (fsync'd) before anything changes; the list."""
    path = os.path.join(folder, LIST)
    listed = names(sites)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(listed, fh)
        fh.flush()
        os.fsync(fh.fileno())
    fsync_dir(folder)
    return listed


def sweep(folder: str, only: Optional[Set[str]] = None) -> List[str]:
    """Removes every file of the kept sites that is not on the list (then the folders left empty); the paths
    removed. Nothing when the list was never written. ``only``: absolute paths that may go (the files installed
    packages' RECORDs list, after a finished fix: a file the user wrote since is nobody's record)."""
    try:
        with open(os.path.join(folder, LIST), encoding="utf-8") as fh:
            kept: Dict[str, List[str]] = json.load(fh)
    except (OSError, ValueError):
        return []
    removed: List[str] = []
    for site, was in kept.items():
        there = _folders(was)
        for rel in sorted(set(names([site])[site]) - set(was)):
            path = os.path.join(site, rel)
            if only is not None and os.path.normpath(path) not in only:
                continue
            os.unlink(path)
            removed.append(path)
        for parent, _, _ in os.walk(site, topdown=False):
            rel = os.path.relpath(parent, site)
            if rel == "." or rel in there or os.path.basename(parent) in _SKIP:
                continue
            if os.listdir(parent) == list(_SKIP):  # only the bytecode of the files just removed
                shutil.rmtree(os.path.join(parent, _SKIP[0]))
            if not os.listdir(parent):
                os.rmdir(parent)  # a folder pip made for the files just removed
    return removed


def _folders(files: Sequence[str]) -> Set[str]:
    """Every folder that held a listed file, and each folder above it."""
    out: Set[str] = set()
    for rel in files:
        parent = os.path.dirname(rel)
        while parent and parent not in out:
            out.add(parent)
            parent = os.path.dirname(parent)
    return out
