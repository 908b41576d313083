"""A safe, verified, reversible cuDNN installer. Imports the core, render and below, never commands.

Modules, in the order an install uses them: fetch (sources), archive (reading), safety (member
rules), extract (one streaming pass into staging), layout (names and folders), inspect (what the
archive holds), target (where it goes), plan (every file's fate), journal (state folder, lock),
transaction (apply/undo/recover), history (what each install placed, rollback, prune), verify
(load check, ldconfig, smoke), checkup (`check` on the result), engine (the whole install),
rollback (the whole rollback), after (reports once an install is committed).
"""
from .engine import Request, run_install
from .errors import Refusal
from .rollback import run_rollback

__all__ = ["Request", "Refusal", "run_install", "run_rollback"]
