"""The one exception the installer raises on purpose: a refusal with what, why and the exact fix."""
from __future__ import annotations

from typing import Optional

from ..diagnose import fixes_for_this_machine
from ..model import Fix
from ..remedies.install import (check_after_interrupt_fix, repeat_rollback_fix, resume_rollback_fix,
                                undo_unknown_state_fix)
from .signals import Interrupted


class Refusal(Exception):
    """Stops an install or rollback; ``str()`` is the one line the user sees. ``fix`` is a Fix from a
    remedies/ builder (its words are the line's "fix: ..." part), never text written here."""

    def __init__(self, what: str, why: str = "", fix: Optional[Fix] = None, code: int = 1) -> None:
        if fix is not None and not isinstance(fix, Fix):
            raise TypeError("Refusal's fix must be a Fix built by cudnn_doctor.remedies, not %r" % (fix,))
        self.what, self.why, self.fix, self.code = what, why, fix, code
        parts = [what]
        if why:
            parts.append(why)
        if fix:
            parts.append("fix: " + fix.text)
        super().__init__("; ".join(parts))


@fixes_for_this_machine  # raised after run_install/run_rollback returned: their Target is gone
def unexpected_failure(command: str, exc: OSError) -> Refusal:
    """The last resort for an OS error the engine did not classify: how far ``command`` (install or rollback) got
    is said as plainly as it is known, with the run that repairs it."""
    if command == "rollback":
        return Refusal("rollback failed: %s" % exc, "it stopped part-way", resume_rollback_fix())
    return Refusal("install failed: %s" % exc, "it is not known how far it got", undo_unknown_state_fix())


@fixes_for_this_machine
def interruption(signalled: Interrupted, command: str) -> Refusal:
    """An install or rollback stopped by SIGINT, SIGTERM or SIGHUP: the state it left, and what to run next."""
    what = "interrupted by %s" % signalled.name
    if command == "rollback":
        return Refusal(what, "the rollback stopped part-way", repeat_rollback_fix(), signalled.exit_code)
    if signalled.installed:
        return Refusal(what, "the install had finished and stands; only the checks after it were cut short",
                       check_after_interrupt_fix(), signalled.exit_code)
    return Refusal(what, "the install was undone and its staged files removed: nothing was changed",
                   code=signalled.exit_code)
