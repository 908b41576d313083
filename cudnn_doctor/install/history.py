"""Committed installs: what each one placed, whether that changed since, rollback, pruning, and their size.

Identity of a placed file is its stat (size, mtime_ns, inode), not a checksum: a cuDNN release
is ~1 GB of libraries, and hashing it at every install and every rollback would cost seconds
for nothing the stat cannot tell. Anything that writes those names after the install (dpkg's
rename, `cp` truncating in place, pip) changes the inode or the mtime; only a writer that keeps
both inode and mtime_ns and the size (a deliberate `cp -p` of a same-sized file onto the same
inode) would go unseen. A link's identity is its target.
"""
from __future__ import annotations

import os
import shutil
import stat
from typing import Dict, List, Optional, Set, Tuple

from ..remedies.install import restore_by_hand_fix, roll_back_changed_fix
from .errors import Refusal
from .journal import discard, history_entries, read_journal, write_journal
from .transaction import dest_path, undo

SET_ASIDE = "set-aside"  # files moved out of the way by `rollback --force`; never deleted by cudnn-doctor
PLACED = ("new", "replace")


def identity(path: str) -> Optional[dict]:
    """{"link": target} for a link, {"size", "mtime_ns", "ino"} for a file, {"type": ...} else; None if absent."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return {"link": os.readlink(path)}
    if stat.S_ISREG(st.st_mode):
        return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    return {"type": "folder" if stat.S_ISDIR(st.st_mode) else "special file"}


def record_placed(journal: dict) -> None:
    """Stores the identity of every file the install put in place (called after apply, before commit)."""
    for op in journal["ops"]:
        if op["action"] in PLACED:
            op["placed"] = identity(dest_path(journal, op))


def _how(was: dict, now: dict) -> str:
    if "link" in was:
        return "was a link to %s, now %s" % (was["link"], "a link to %s" % now["link"] if "link" in now
                                               else "a %s" % now.get("type", "regular file"))
    if "size" not in now:
        return "is now a %s" % ("link to %s" % now["link"] if "link" in now else now["type"])
    if now["size"] != was["size"]:
        return "%d bytes now, %d when installed" % (now["size"], was["size"])
    return "rewritten since the install (modification time or inode differ)"


def changed_since(journal: dict) -> List[Tuple[str, str]]:
    """(path, how) for every destination that is no longer what the install left there.

    A placed file that is gone is not a change worth stopping for (nothing would be lost);
    a file that appeared where the install retired one is (restoring would overwrite it).
    Entries written before identities were recorded have nothing to compare and pass.
    """
    out = []
    for op in journal.get("ops", []):
        dest = dest_path(journal, op)
        if op["action"] == "retire":
            if os.path.lexists(dest):
                out.append((dest, "a file was put where the install had retired one"))
            continue
        if "placed" not in op or op["placed"] is None:
            continue
        now = identity(dest)
        if now is not None and now != op["placed"]:
            out.append((dest, _how(op["placed"], now)))
    return out


def _aside_path(state_dir: str, journal: dict, dest: str) -> str:
    root = journal.get("target") or ""
    rel = os.path.relpath(dest, root) if root and dest.startswith(root.rstrip("/") + "/") else "_abs" + dest
    path = os.path.join(state_dir, SET_ASIDE, journal["id"], rel)
    n = 1
    while os.path.lexists(path if n == 1 else "%s.%d" % (path, n)):
        n += 1
    return path if n == 1 else "%s.%d" % (path, n)


def set_aside(state_dir: str, journal: dict, paths: List[str]) -> List[Dict[str, str]]:
    """Moves changed files out of the way (rename, or copy-then-delete across file systems); never deletes."""
    moved = []
    for path in paths:
        to = _aside_path(state_dir, journal, path)
        os.makedirs(os.path.dirname(to), mode=0o700, exist_ok=True)
        shutil.move(path, to)
        moved.append({"path": path, "moved_to": to})
    return moved


def refuse_changed(state_dir: str, journal: dict, changed: List[Tuple[str, str]]) -> Refusal:
    path, how = changed[0]
    more = " (and %d more)" % (len(changed) - 1) if len(changed) > 1 else ""
    return Refusal("%s changed after cuDNN %s was installed: %s%s" % (path, journal.get("cudnn_version", "?"),
                                                                      how, more),
                   "rolling back would delete or overwrite it, and it may be a newer cuDNN put there by apt, "
                   "pip or a manual copy",
                   roll_back_changed_fix(os.path.join(state_dir, SET_ASIDE, journal.get("id", "?"))))


def rollback_newest(state_dir: str, force: bool = False) -> Optional[dict]:
    """Undoes the newest committed install; None when there is none. Returns its journal + counts.

    Refuses (nothing touched) when a file it would remove or overwrite changed since the install,
    unless ``force``: then those files are set aside first.
    """
    entries = history_entries(state_dir)
    if not entries:
        return None
    entry = entries[-1]
    journal = read_journal(entry)
    if journal is None:
        raise Refusal("the history entry %s has no readable journal" % entry,
                      "without it cudnn-doctor cannot tell what that install changed",
                      restore_by_hand_fix(entry))
    changed = changed_since(journal)
    if changed and not force:
        raise refuse_changed(state_dir, journal, changed)
    moved = set_aside(state_dir, journal, [p for p, _ in changed])
    journal["status"] = "rolling-back"
    write_journal(entry, journal)
    result = undo(entry, journal)
    discard(state_dir, entry)
    _carry_identities(entries[:-1], set(result["restored"]))
    return dict(journal, **result, set_aside=moved, left=len(entries) - 1)


def _carry_identities(older: List[str], restored: Set[str]) -> None:
    """A backup kept as a copy (cross-device) comes back with a new inode; the owning install's record follows it."""
    for entry in reversed(older):
        if not restored:
            return
        journal = read_journal(entry)
        if journal is None:
            continue
        dirty = False
        for op in journal.get("ops", []):
            dest = dest_path(journal, op)
            if op["action"] not in PLACED or dest not in restored:
                continue
            restored.discard(dest)
            was, now = op.get("placed"), identity(dest)
            if was and now and "ino" in was and "ino" in now and now != was and \
                    (now["size"], now["mtime_ns"]) == (was["size"], was["mtime_ns"]):
                op["placed"], dirty = now, True
        if dirty:
            write_journal(entry, journal)


def backup_bytes(entry: str) -> int:
    """Disk space an entry's backup holds (each inode once)."""
    seen, total = set(), 0
    for folder, _, names in os.walk(os.path.join(entry, "backup")):
        for name in names:
            st = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def prune(state_dir: str, keep: int) -> List[dict]:
    """Drops all but the newest ``keep`` history entries (their backups); the installed files stay."""
    entries = history_entries(state_dir)
    dropped = []
    for entry in entries[: max(len(entries) - max(keep, 0), 0)]:
        journal = read_journal(entry) or {}
        size = backup_bytes(entry)
        discard(state_dir, entry)
        dropped.append({"id": journal.get("id", os.path.basename(entry)), "cudnn_version": journal.get("cudnn_version"),
                        "committed": journal.get("committed"), "backup_bytes": size})
    return dropped
