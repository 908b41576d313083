"""When a run started (UTC, ISO 8601) and how long it took: the time stamps of mergeable reports."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
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
    """datetime.fromtimestamp(wall, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), microseconds rounded half to
    even as datetime rounds them, without importing datetime (2 ms at every start)."""
    fraction, whole = math.modf(wall)
    micro = round(fraction * 1e6)
    if micro >= 1000000:
        micro, whole = micro - 1000000, whole + 1.0
    elif micro < 0:
        micro, whole = micro + 1000000, whole - 1.0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + ".%06dZ" % micro
