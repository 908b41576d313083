"""Runs each probe under a deadline in a worker thread; a probe that overruns is abandoned, never awaited.

Signal handlers cannot interrupt a read stuck in the kernel (a hung NFS or Lustre mount), and a probe
cannot be killed from outside, but the main thread can stop waiting for it: the probe runs in a daemon
thread, the main thread waits on an event with a time limit, and an overrun is recorded as a fact (the
probe and the path it was on, finding CD002) while the rest of the run goes on. The abandoned thread is
told to stop at its next file operation (``bounded_io.abandon``) so it cannot edit facts the report now
owns. A probe that finishes in time costs one thread start (tens of microseconds).
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional

from .. import bounded_io
from ..model import BlockedPath, Facts

DEFAULT_TIMEOUT = 10.0  # seconds for the whole run (`check --timeout`)
PROBE_SHARE = 0.5  # one probe may use at most this share of the run's budget, so the others still run


class Deadline:
    """The whole run's time budget and the share one probe may spend."""

    def __init__(self, seconds: Optional[float] = None) -> None:
        self.seconds = DEFAULT_TIMEOUT if seconds is None else float(seconds)
        self.end = time.monotonic() + self.seconds

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def reserve(self) -> float:
        """Kept back from the native calls for the steps that follow them."""
        return max(0.3, self.seconds * 0.1)

    def for_probe(self) -> float:
        return min(self.left(), max(0.5, self.seconds * PROBE_SHARE))


def run_bounded(facts: Facts, name: str, fn: Callable[[], None], deadline: Deadline) -> bool:
    """Run ``fn`` (already guarded against exceptions) for probe ``name``; False when abandoned."""
    budget = deadline.for_probe()
    if budget <= 0:
        facts.blocked.append(BlockedPath(probe=name, path=None, reason="not-run", seconds=deadline.seconds))
        return False
    done = threading.Event()
    lock = threading.Lock()  # orders "finished" against "abandoned" (thread ids are reused)

    def work() -> None:
        bounded_io.working_for(name)
        try:
            fn()
        except bounded_io.Abandoned:
            pass  # given up earlier; the report has moved on
        finally:
            with lock:
                bounded_io.forget(threading.get_ident())
                done.set()

    worker = threading.Thread(target=work, name="probe-%s" % name, daemon=True)
    worker.start()
    if done.wait(budget):
        return True
    with lock:
        if done.is_set():  # it finished just as the wait ended
            return True
        path = bounded_io.current_path(worker.ident)  # where it is blocked now
        bounded_io.abandon(worker.ident)
    facts.blocked.append(BlockedPath(probe=name, path=path, reason="timed-out", seconds=round(budget, 2)))
    return False


def record_not_regular(facts: Facts, host) -> None:
    """Move the host's list of FIFOs, sockets and devices met where files belong into the facts."""
    for probe, path, kind, real in host.not_regular:
        facts.blocked.append(BlockedPath(probe=probe, path=path, reason="not-a-regular-file", kind=kind,
                                         resolved=real if real != path else None))


def record_native_timeouts(facts: Facts, host, probe: str, answered) -> None:
    """A native call killed at its time limit is a blocked probe too (CD002), named by its library."""
    for task, result in answered:
        if "timeout" in result:
            lib = task.get("lib")
            facts.blocked.append(BlockedPath(probe=probe, path=host.inside(str(lib)) if lib else None,
                                             reason="timed-out", seconds=result["timeout"]))


def incomplete(facts: Facts) -> bool:
    """True when something could not be checked: exit code 4 unless an error was found."""
    return bool(facts.blocked)
