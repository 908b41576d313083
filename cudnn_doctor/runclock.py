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
        return iso_utc(self.wall)

    def finish(self, host: Optional[str] = None) -> RunStamp:
        return RunStamp(host=host, started_at=self.started_at, duration_s=round(time.monotonic() - self.mono, 3),
                        finished_unix=round(time.time(), 3))


def iso_utc(wall: float) -> str:
    """``wall`` (seconds since the epoch) as UTC ISO 8601 with microseconds, e.g. 2026-11-28T23:46:05.123456Z."""
    return datetime.fromtimestamp(wall, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
