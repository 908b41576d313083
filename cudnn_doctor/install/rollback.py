"""The rollback procedure: repair an interrupted run, undo the newest install, or prune old history entries."""
from __future__ import annotations

import os
from typing import Mapping, Optional

from ..diagnose import fixes_for_this_machine
from . import hooks
from .history import backup_bytes, prune, rollback_newest
from .journal import TXN, StateLock, history_entries, read_journal
from .target import resolve
from .transaction import recover
from .verify import refresh_loader_cache


@fixes_for_this_machine
def run_rollback(cuda_home: Optional[str], prefix: Optional[str], env: Mapping[str, str], lock_wait: float = 0.0,
                 force: bool = False, prune_keep: Optional[int] = None, machine_root: Optional[str] = None) -> dict:
    """Undoes the newest install (or first repairs an interrupted one, and stops there).

    With ``prune_keep`` it rolls nothing back: it drops all but the newest N history entries.
    """
    target = resolve(cuda_home, prefix, env)
    report: dict = {"target": target.root, "recovered": [], "rolled_back": None}
    if not os.path.isdir(target.state_dir):
        # Nothing to undo is a state, not a failure: the one line says so and the command exits 0.
        return dict(report, nothing="cudnn-doctor has no record of an install there (it only undoes its own "
                                    "installs)")
    with StateLock(target.state_dir, lock_wait):
        # An install killed part-way into a prefix it had created: undoing it must take the prefix away too.
        interrupted = read_journal(os.path.join(target.state_dir, TXN)) or {}
        report["recovered"] = recover(target.state_dir)
        if prune_keep is not None:
            report["pruned"] = prune(target.state_dir, prune_keep)
            report["kept"] = len(history_entries(target.state_dir))
            report["kept_bytes"] = sum(backup_bytes(e) for e in history_entries(target.state_dir))
            return report
        if not report["recovered"]:
            done = rollback_newest(target.state_dir, force)
            if done is None:
                return dict(report, nothing="every recorded install was already rolled back")
            report["rolled_back"] = {k: done.get(k) for k in ("id", "source", "cudnn_version", "committed",
                                                               "restored", "removed", "set_aside", "left",
                                                               "root_created")}
            libdirs = {d["path"] for d in done.get("dirs", []) if os.path.isdir(d["path"])}
            machine = machine_root or hooks.machine_root()
            report["loader_cache"] = [n for n in (refresh_loader_cache(d, machine) for d in sorted(libdirs)) if n]
    rolled = report["rolled_back"] or {}
    created = rolled.get("root_created") or interrupted.get("root_created") and not history_entries(target.state_dir)
    if created and target.kind == "prefix":
        try:
            os.rmdir(target.root)
            report["removed_prefix"] = target.root
        except OSError:
            pass  # something else was put there since: it stays
    return report
