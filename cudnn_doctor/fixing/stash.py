"""The installed files of each distribution a fix's package steps may remove or replace, kept in the journal before
pip runs, so that `fix --undo` puts that release back from there, byte for byte, with no package index (an offline
node, a release since pulled from the index, a local build no index has). Files are hard links, not copies: while
the environment still holds them the journal costs no space, and only a replaced release's files stay on disk, in
the newest entries alone (`prune`). A distribution whose files cannot all be linked (another file system, a file it
may not read) is not kept: undo reinstalls it by name, as pip would."""
from __future__ import annotations

import csv
import glob
import json
import os
import shutil
from typing import Dict, Iterable, List, Sequence, Tuple

from packaging.utils import canonicalize_name

from ..install.journal import fsync_dir, history_entries

FOLDER = "stash"  # in the transaction folder, beside the journal
KEEP_ENTRIES = 2  # history entries whose stash stays: the fixes --undo takes back first


def keep(folder: str, site_dirs: Sequence[str], names: Iterable[str]) -> List[dict]:
    """Links the files of every installed distribution named in ``names`` into ``folder``/stash (one folder per
    distribution, with an index of where each file was); the journal's records: site, dist-info, name, version and
    the index's path in the transaction."""
    wanted = {canonicalize_name(n) for n in names}
    records = []
    for k, site in enumerate(site_dirs):
        for record in sorted(glob.glob(os.path.join(glob.escape(site), "*.dist-info", "RECORD"))):
            dist = os.path.basename(os.path.dirname(record))
            name, _, version = dist[:-len(".dist-info")].partition("-")
            if canonicalize_name(name) not in wanted:
                continue
            rel = "%s/%d-%s" % (FOLDER, k, dist)
            if _link_all(os.path.join(folder, *rel.split("/")), site, record):
                records.append({"site": site, "dist": dist, "name": canonicalize_name(name), "version": version,
                                "index": rel + "/index.json"})
    if records:
        fsync_dir(os.path.join(folder, FOLDER))
    return records


def _link_all(into: str, site: str, record: str) -> bool:
    """Each file the RECORD lists, linked into ``into`` as 0, 1, ... (a symbolic link kept as its target), and
    index.json; False, with ``into`` removed, when one file cannot be linked."""
    try:
        with open(record, newline="", encoding="utf-8") as fh:
            rows = [row for row in csv.reader(fh) if row]
        os.makedirs(into)
        index: List[Tuple[str, str, str]] = []  # (path, stashed name or "", symbolic link target or "")
        for row in rows:
            path = os.path.normpath(os.path.join(site, row[0]))
            if os.path.islink(path):
                index.append((path, "", os.readlink(path)))
            elif os.path.isfile(path):
                name = str(len(index))
                os.link(path, os.path.join(into, name))
                index.append((path, name, ""))
        with open(os.path.join(into, "index.json"), "w", encoding="utf-8") as fh:
            json.dump(index, fh)
    except (OSError, UnicodeDecodeError, csv.Error):
        shutil.rmtree(into, ignore_errors=True)
        return False
    return True


def key(name: str, version: str) -> Tuple[str, str]:
    """How a kept release is looked up: pip list's name and version."""
    return str(canonicalize_name(name)), version


def kept(folder: str, records: Sequence[dict], sites: Sequence[str]) -> Dict[Tuple[str, str], dict]:
    """{key: record} of the distributions of ``sites`` kept whole and still there (a pruned entry's are not)."""
    return {key(r["name"], r["version"]): r for r in records
            if r["site"] in sites and os.path.isfile(os.path.join(folder, *r["index"].split("/")))}


def _index(folder: str, record: dict) -> Tuple[str, List[List[str]]]:
    stashed = os.path.dirname(os.path.join(folder, *record["index"].split("/")))
    with open(os.path.join(stashed, "index.json"), encoding="utf-8") as fh:
        return stashed, json.load(fh)


def rewritten(folder: str, record: dict) -> bool:
    """Whether a kept release's files are no longer the ones kept (pip reinstalled the same release over them)."""
    stashed, index = _index(folder, record)
    try:
        return not all(os.path.samefile(os.path.join(stashed, name), path) for path, name, _ in index if name)
    except OSError:
        return True


def put_back(folder: str, record: dict) -> int:
    """Every file of a kept distribution back where it was (each one replaced in one rename), and any file its
    record lists now that it did not then (a reinstall's REQUESTED) taken away; how many were put back."""
    stashed, index = _index(folder, record)
    then = {path for path, _, _ in index}
    for path in _listed_now(record):
        if path not in then and os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
    parents = set()
    # its .dist-info last, METADATA the very last: pip list knows a release by it, so an undo killed part-way leaves
    # the release unlisted and the next --undo puts it back again
    for path, name, target in sorted(index, key=lambda e: (".dist-info" in os.path.dirname(e[0]),
                                                            e[0].endswith("/METADATA"))):
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        temp = os.path.join(parent, ".cudnn-doctor-undo-" + os.path.basename(path))
        if os.path.lexists(temp):
            os.unlink(temp)
        if target:
            os.symlink(target, temp)
        else:
            os.link(os.path.join(stashed, name), temp)
        os.replace(temp, path)
        if os.path.lexists(temp):  # rename() of two links to one file does nothing (POSIX): the file was in place
            os.unlink(temp)
        parents.add(parent)
    for parent in parents:
        fsync_dir(parent)
    return len(index)


def _listed_now(record: dict) -> List[str]:
    """The files the release's RECORD in its site lists now (absolute)."""
    site = record["site"]
    try:
        with open(os.path.join(site, record["dist"], "RECORD"), newline="", encoding="utf-8") as fh:
            return [os.path.normpath(os.path.join(site, row[0])) for row in csv.reader(fh) if row]
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def prune(state_dir: str, keep_entries: int = KEEP_ENTRIES) -> None:
    """Drops the stash of every history entry but the newest ``keep_entries``: an older entry's undo reinstalls by
    name, and a replaced cuDNN's files do not pile up with each fix."""
    for entry in history_entries(state_dir)[:-keep_entries or None]:
        shutil.rmtree(os.path.join(entry, FOLDER), ignore_errors=True)
