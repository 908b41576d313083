"""The state folder inside a target: lock file, in-flight transaction, history of installs."""
from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import time
from typing import List, Optional

from ..remedies.install import wait_for_lock_fix, write_access_fix
from .errors import Refusal

LOCK = "lock"
TXN = "txn"  # the in-flight transaction (at most one: the lock guards it)
HISTORY = "history"  # one folder per committed install, oldest first
TRASH = "trash"  # entries being deleted; removed on the next run if a kill interrupts that
JOURNAL = "journal.json"


def fsync_dir(path: str) -> None:
    """Makes renames/creations inside ``path`` durable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_journal(folder: str, data: dict) -> None:
    """Atomically replaces folder/journal.json: write a temp file, fsync it, rename, fsync the folder."""
    tmp = os.path.join(folder, JOURNAL + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, os.path.join(folder, JOURNAL))
    fsync_dir(folder)


def read_journal(folder: str) -> Optional[dict]:
    try:
        with open(os.path.join(folder, JOURNAL), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def history_entries(state_dir: str) -> List[str]:
    """Committed installs, oldest first (names start with a zero-padded sequence number)."""
    folder = os.path.join(state_dir, HISTORY)
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names]


def next_history_name(state_dir: str, txid: str) -> str:
    entries = history_entries(state_dir)
    seq = int(os.path.basename(entries[-1]).split("-", 1)[0]) + 1 if entries else 1
    return os.path.join(state_dir, HISTORY, "%04d-%s" % (seq, txid))


def discard(state_dir: str, folder: str) -> None:
    """Deletes a transaction/history folder: rename into trash/ first, so a kill mid-delete is harmless."""
    trash = os.path.join(state_dir, TRASH)
    dest = os.path.join(trash, "%s-%d" % (os.path.basename(folder), time.time_ns()))
    try:
        os.makedirs(trash, exist_ok=True)
    except OSError:
        # A full disk (ENOSPC in the middle of staging) has no block for the trash folder. The staged copies are
        # what filled it, and nothing needs them once a transaction is given up (undo works from the journal and
        # the backups), so they go first, in place; that frees the space the rest of the discard needs.
        shutil.rmtree(os.path.join(folder, "staging"), ignore_errors=True)
        os.makedirs(trash, exist_ok=True)
    os.rename(folder, dest)
    fsync_dir(os.path.dirname(folder))
    empty_trash(state_dir)


def empty_trash(state_dir: str) -> None:
    trash = os.path.join(state_dir, TRASH)
    if os.path.isdir(trash):
        shutil.rmtree(trash, ignore_errors=True)


class StateLock:
    """An exclusive flock on <state>/lock, so two installs into one target cannot interleave.

    Policy: fail fast by default (the second run says who holds the lock and exits 1), or wait up
    to ``wait`` seconds (--lock-wait). Waiting forever is never the default: a hung install
    would otherwise stall every later one silently.
    The lock file is removed when the state folder holds nothing else, so a refused install
    leaves the target exactly as it was; the inode check after locking makes that safe.
    """

    def __init__(self, state_dir: str, wait: float = 0.0) -> None:
        self.state_dir, self.wait, self.fd = state_dir, wait, -1
        self.path = os.path.join(state_dir, LOCK)

    def acquire(self) -> "StateLock":
        deadline = time.monotonic() + max(self.wait, 0.0)
        races = 0
        while True:
            try:
                os.makedirs(self.state_dir, mode=0o755, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            except FileNotFoundError:
                races += 1  # another run removed the state folder between the two calls
                if races > 100:
                    raise
                continue
            except PermissionError:
                raise Refusal("no permission to write into %s" % os.path.dirname(self.state_dir),
                              "installing cuDNN there needs write access",
                              write_access_fix())
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise Refusal("another cudnn-doctor install or rollback (%s) is working on %s"
                                  % (self._holder(), os.path.dirname(self.state_dir)),
                                  "two installs into one toolkit would interleave and mix versions",
                                  wait_for_lock_fix())
                time.sleep(0.1)
                continue
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # we locked a file the previous holder had just removed
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, ("pid %d\n" % os.getpid()).encode())
            self.fd = fd
            return self

    def _holder(self) -> str:
        try:
            with open(self.path, encoding="utf-8") as fh:
                return fh.read().strip() or "pid unknown"
        except OSError:
            return "pid unknown"

    def release(self) -> None:
        """Unlocks; removes the state folder too when nothing but the lock is left in it."""
        if self.fd < 0:
            return
        try:
            for empty in (HISTORY, TXN):
                try:
                    os.rmdir(os.path.join(self.state_dir, empty))
                except OSError:
                    pass  # missing, or holds entries that must stay
            leftover = [n for n in os.listdir(self.state_dir) if n not in (LOCK, TRASH)]
            if not leftover:
                empty_trash(self.state_dir)
                os.unlink(self.path)
                os.rmdir(self.state_dir)
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> "StateLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
