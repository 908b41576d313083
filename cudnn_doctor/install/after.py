"""After the commit: loader cache, backup size, `check` and the smoke test; reports that never undo or fail it."""
from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

from ..remedies.install import ldconfig_if_listed_fix
from ..run_results import InstallResult
from .checkup import check_install
from .history import backup_bytes
from .journal import history_entries
from .target import Target
from .verify import refresh_loader_cache

NOT_HERE = "not run: the library is not for this machine"


def finish(target: Target, report: InstallResult, main: Optional[str], machine: str, env: Mapping[str, str],
           smoke_fn: Optional[Callable[[str], dict]], check: bool) -> None:
    """Fills loader_cache, backup, check and smoke of ``report`` (main: the installed library when it loads here;
    smoke_fn None: --no-smoke)."""
    dest_dirs = report.plan["dest_dirs"]
    lib = dest_dirs.get("lib", target.root)
    try:
        report.loader_cache = refresh_loader_cache(lib, machine)
    except Exception as exc:  # it reports its own ldconfig failures; this is for reading the configuration
        report.loader_cache = "could not decide whether to run ldconfig (%s); %s" % (exc,
                                                                                    ldconfig_if_listed_fix(lib).text)
    if report.plan.get("unchanged"):  # an install that changed nothing (the same files were in place) kept no backup
        report.backup = {}
    elif report.history_entry is not None:  # the committed transaction's entry: always set when finish runs
        report.backup = backup_report(target, report.history_entry, report.rollback_hint)
    if not check:
        report.check = {"ran": False, "note": "skipped (--no-check)"}
    elif not main:
        report.check = {"ran": False, "note": NOT_HERE}
    else:
        report.check = check_install(target.kind, target.root, dest_dirs, machine, env)
    if smoke_fn is None:
        report.smoke = {"available": None, "ok": None, "summary": "skipped (--no-smoke)"}
    elif not main:
        report.smoke = {"available": False, "ok": None, "summary": NOT_HERE}
    else:
        report.smoke = smoke_fn(main)


def backup_report(target: Target, entry: str, rollback_hint: str) -> Dict[str, Any]:
    """The space this install's backup holds, and the whole history's (each install keeps what it replaced)."""
    try:
        sizes = [backup_bytes(e) for e in history_entries(target.state_dir)]
        return {"entry": entry, "bytes": backup_bytes(entry), "entries": len(sizes), "total_bytes": sum(sizes),
                "prune_hint": "%s --prune 1" % rollback_hint}
    except OSError as exc:
        return {"entry": entry, "bytes": None, "error": str(exc)}
