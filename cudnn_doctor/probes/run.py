"""One observation run's own state, handed to the probes explicitly: its deadline, its one native child and the time
that child may take. Nothing of a run is written into the Host the caller passed."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..host import Host
from .executor import Deadline

if TYPE_CHECKING:
    from ..host import NativeSession  # the child native/session.py drives; only host imports native/


class Run:
    """The deadline every probe runs under, the native child every native call of the run goes to (started on
    first use, or the one collect starts first) and that child's time limit (the host's, until collect cuts it to
    what the deadline leaves)."""

    def __init__(self, host: Host, deadline: Optional[Deadline] = None,
                 session: Optional[NativeSession] = None) -> None:
        self.host = host
        self.deadline = deadline if deadline is not None else Deadline()
        self.session = session
        self.native_timeout = host.native_timeout

    def start_native(self) -> NativeSession:
        """The run's native child, started now if it is not yet (its start overlaps with the file-system probes)."""
        if self.session is None:
            self.session = self.host.native_session()
            self.session.start()
        return self.session

    def leave_for_after_native(self) -> None:
        """Cut the native child's time limit to what the deadline leaves, less a share kept for the steps after it
        (which copy each program loads: quick, and the heart of the report)."""
        self.native_timeout = min(self.native_timeout, max(self.deadline.left() - self.deadline.reserve(), 0.2))
