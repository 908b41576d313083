"""When a run started (UTC, ISO 8601) and how long it took: the time stamps of mergeable reports."""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional


@dataclass(frozen=True)
class RunStamp:
    """A finished run's stamp: the node, when it started (UTC, ISO 8601), how long it took, when it ended."""

    host: Optional[str]
    started_at: str
    duration_s: float
    finished_unix: float


class RunClock:
    """Started when a command starts; ``finish`` gives the report's run fields."""

    def __init__(self) -> None:
        self.wall = time.time()
        self.mono = time.monotonic()

    @property
    def started_at(self) -> str:
        return datetime.fromtimestamp(self.wall, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def finish(self, host: Optional[str] = None) -> RunStamp:
        return RunStamp(host=host, started_at=self.started_at, duration_s=round(time.monotonic() - self.mono, 3),
                        finished_unix=round(time.time(), 3))
