"""SIGTERM and SIGHUP (what `timeout`, systemd, Slurm and `docker stop` send) stop an install like Ctrl-C does.

Python turns only SIGINT into an exception; any other signal kills the process where it stands, leaving staged
files and a journal behind. Inside ``interrupt_on_signals`` all three raise ``Interrupted`` at the first one, so
the engine's own unwinding (undo to the old state, remove the staging folder) runs; later ones are noted and
ignored until that unwinding is done, because a second Ctrl-C or a repeated `docker stop` must not cut the undo
itself short. SIGKILL cannot be caught: the journal and the next run's recovery cover that.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator, List, Optional

CAUGHT = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """The install or rollback was stopped by a signal; ``installed`` is set when the install had already
    committed (then it stands, and only what followed it was cut short)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.installed = False

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP


@contextmanager
def interrupt_on_signals() -> Iterator[List[int]]:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise Interrupted once; yields the signals received."""
    if threading.current_thread() is not threading.main_thread():
        yield []  # handlers can only be set from the main thread (a test runner's worker): leave them as they are
        return
    received: List[int] = []

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) == 1:
            raise Interrupted(signum)

    previous: List[Optional[object]] = []
    for signum in CAUGHT:
        previous.append(signal.signal(signum, handler))
    try:
        yield received
    finally:
        for signum, old in zip(CAUGHT, previous):
            # typeshed: signal.signal returns handlers it would not take back (a C handler's int); these are Python's
            signal.signal(signum, old if old is not None else signal.SIG_DFL)  # type: ignore[arg-type]
