"""A safe, verified, reversible cuDNN installer: fetch, check, stage, journal, apply, verify, roll back.

Modules, in the order an install uses them: fetch (sources), archive (reading), safety (member
rules), extract (one streaming pass into staging), layout (names and folders), inspect (what the
archive holds), target (where it goes), plan (every file's fate), journal (state folder, lock),
transaction (apply/undo/recover), verify (load check, ldconfig, smoke), engine (the whole run).
"""
from .engine import Request, run_install, run_rollback
from .errors import Refusal

__all__ = ["Request", "Refusal", "run_install", "run_rollback"]
