"""Applies a journalled plan with renames, and undoes it from the journal after any failure or kill.

Write-ahead rule: the journal (every destination, every action) is fsync'd with status
"applying" before the first destination file is touched. Each step is a single rename or link,
so after a kill every path is either old or new, never half-written, and ``undo`` can work out
from the file system alone what to put back. ``undo`` is idempotent: a kill during it is
repaired by running it again. Committed transactions become history entries; rollback is the
same ``undo`` applied to the newest entry, after history.py has checked nothing changed since.

Durability: the journal and the folders are fsync'd; the library bytes are not fsync'd one by one
(neither does `cp`, and it would double the install time). A killed process loses nothing the
kernel already has; after a power cut the journal still says what to undo.
"""
from __future__ import annotations

import errno
import os
import shutil
import time
from typing import Dict, List, Optional

from . import hooks
from .journal import HISTORY, TXN, discard, empty_trash, fsync_dir, history_entries, next_history_name, \
    read_journal, write_journal

FORMAT = 1


def dest_path(journal: dict, op: dict) -> str:
    return os.path.join(journal["dirs"][op["dir"]]["path"], *op["rel"].split("/"))


def backup_path(folder: str, op: dict) -> str:
    return os.path.join(folder, "backup", str(op["dir"]), *op["rel"].split("/"))


def staged_path(folder: str, op: dict) -> str:
    return os.path.join(folder, "staging", *op["staged"].split("/"))


def new_txn(state_dir: str, meta: dict) -> "tuple[str, dict]":
    """Creates <state>/txn with a 'staging' journal: nothing outside it has been touched yet."""
    folder = os.path.join(state_dir, TXN)
    os.makedirs(folder, mode=0o755)
    os.makedirs(os.path.join(folder, "staging"), mode=0o755)
    journal = dict(meta, format=FORMAT, status="staging", pid=os.getpid(),
                   id="%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), os.getpid()), dirs=[], ops=[])
    write_journal(folder, journal)
    fsync_dir(state_dir)
    return folder, journal


def _copy_entry(src: str, dst: str) -> None:
    """Copies a file (bytes and mode) or a link (as a link): the cross-device fallback of a rename."""
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)
        with open(dst, "rb") as fh:
            os.fsync(fh.fileno())


def _copy_over(src: str, dst: str) -> None:
    """Copy ``src`` to ``dst`` through a temporary name, so ``dst`` is never seen half-written."""
    tmp = dst + ".cudnn-doctor-tmp"
    if os.path.lexists(tmp):
        os.unlink(tmp)  # left by a kill part-way through an earlier copy
    _copy_entry(src, tmp)
    os.replace(tmp, dst)


def _move(src: str, dst: str) -> None:
    """os.replace, or copy-then-rename when src and dst are on different file systems."""
    try:
        os.replace(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        _copy_over(src, dst)
        os.unlink(src)


def _keep_copy(dest: str, backup: str) -> None:
    """Backs up ``dest`` as a hard link (same inode: bytes, mode, owner kept; ``dest`` never vanishes)."""
    os.makedirs(os.path.dirname(backup), mode=0o700, exist_ok=True)
    if os.path.lexists(backup):
        return  # done before a kill; the link is the original
    try:
        os.link(dest, backup, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        _copy_over(dest, backup)


def apply(folder: str, journal: dict) -> None:
    """Makes the planned changes. The journal must already say 'applying' on disk."""
    for d in journal["dirs"]:
        if not d["existed"] and not os.path.isdir(d["path"]):
            os.mkdir(d["path"], 0o755)
            os.chmod(d["path"], 0o755)  # the umask must not take a+rx away
        elif d.get("new_mode") is not None:
            os.chmod(d["path"], d["new_mode"])
    count = 0
    for op in journal["ops"]:
        if op["action"] in ("replace", "retire"):
            _keep_copy(dest_path(journal, op), backup_path(folder, op))
            count += 1
            hooks.point("after-backup-%d" % count)
    fsync_dir(os.path.join(folder, "backup"))
    count = 0
    for op in journal["ops"]:
        if op["action"] in ("new", "replace"):
            _move(staged_path(folder, op), dest_path(journal, op))
            count += 1
            hooks.point("after-place-%d" % count)
    for op in journal["ops"]:
        if op["action"] == "retire":
            os.unlink(dest_path(journal, op))
    for d in journal["dirs"]:
        fsync_dir(d["path"])


def undo(folder: str, journal: dict) -> Dict[str, List[str]]:
    """Puts back every original and removes every new file; safe to run again after a kill."""
    restored, removed = [], []
    count = 0
    for op in reversed(journal["ops"]):
        dest = dest_path(journal, op)
        if op["action"] in ("replace", "retire"):
            backup = backup_path(folder, op)
            if os.path.lexists(backup):  # absent: never moved, or already restored
                _move(backup, dest)
                restored.append(dest)
        elif os.path.lexists(dest):
            os.unlink(dest)
            removed.append(dest)
        count += 1
        hooks.point("after-restore-%d" % count)
    for d in reversed(journal["dirs"]):
        if not d["existed"]:
            try:
                os.rmdir(d["path"])
            except OSError:
                pass  # not empty (someone else's files) or already gone
        elif d.get("new_mode") is not None and d.get("mode") is not None and os.path.isdir(d["path"]):
            os.chmod(d["path"], d["mode"])
    for d in journal["dirs"]:
        if os.path.isdir(d["path"]):
            fsync_dir(d["path"])
    return {"restored": restored, "removed": removed}


def commit(state_dir: str, folder: str, journal: dict) -> str:
    """Marks the transaction done and keeps it (with its backups) as the newest history entry.

    ``journal["status"]`` becomes "committed" only once that is on disk, so a caller that sees
    an error can tell whether the install stands (the next run finishes recording it) or not.
    """
    marked = dict(journal, status="committed", committed=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    write_journal(folder, marked)
    journal.update(marked)
    hooks.point("after-commit-mark")
    return _to_history(state_dir, folder, journal)


def _to_history(state_dir: str, folder: str, journal: dict) -> str:
    shutil.rmtree(os.path.join(folder, "staging"), ignore_errors=True)
    os.makedirs(os.path.join(state_dir, HISTORY), mode=0o755, exist_ok=True)
    entry = next_history_name(state_dir, journal["id"])
    os.rename(folder, entry)
    fsync_dir(os.path.dirname(entry))
    fsync_dir(state_dir)
    return entry


def recover(state_dir: str) -> List[str]:
    """Finishes or undoes whatever a killed run left behind; returns one note per repair."""
    notes: List[str] = []
    if not os.path.isdir(state_dir):
        return notes
    empty_trash(state_dir)
    folder = os.path.join(state_dir, TXN)
    if os.path.isdir(folder):
        journal = read_journal(folder)
        status = (journal or {}).get("status")
        what = _describe(journal)
        if journal is not None and status == "applying":
            undo(folder, journal)
            discard(state_dir, folder)
            notes.append("undid an interrupted install%s (pid %s); the previous files are back"
                         % (what, (journal or {}).get("pid", "?")))
        elif journal is not None and status == "committed":
            _to_history(state_dir, folder, journal)
            notes.append("finished recording an install%s that was interrupted after it completed" % what)
        else:  # staging, or killed before the first journal write: nothing outside was touched
            discard(state_dir, folder)
            notes.append("removed the staging files of an interrupted install%s (nothing had been changed)"
                         % what)
    for entry in history_entries(state_dir):
        journal = read_journal(entry)
        if journal and journal.get("status") == "rolling-back":
            undo(entry, journal)
            discard(state_dir, entry)
            notes.append("finished an interrupted rollback%s" % _describe(journal))
    return notes


def _describe(journal: Optional[dict]) -> str:
    if not journal or not journal.get("cudnn_version"):
        return ""
    return " of cuDNN %s" % journal["cudnn_version"]
