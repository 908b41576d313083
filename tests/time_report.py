"""Where a full run's minutes went (CI sets CUDNN_DOCTOR_TIME_REPORT=1): each worker's busy seconds and each file's,
printed at the end. `--durations` names single tests; CI's 45-minute bound is spent by files (`--dist loadfile` gives
a worker a file at a time), and a worker that finishes long before the other shows the split is uneven."""
from __future__ import annotations

import os
import time
from collections import defaultdict
from typing import DefaultDict

ENABLED = bool(os.environ.get("CUDNN_DOCTOR_TIME_REPORT"))
_BY_WORKER: DefaultDict[str, float] = defaultdict(float)
_BY_FILE: DefaultDict[str, float] = defaultdict(float)
_LAST: DefaultDict[str, float] = defaultdict(float)  # when each worker's last report came, from the start
_START = time.monotonic()


def record(report) -> None:
    """One phase (setup, call, teardown) of one test, as the controller receives it."""
    node = getattr(report, "node", None)  # an xdist report names the worker that ran it
    worker = getattr(getattr(node, "gateway", None), "id", "main")
    _BY_WORKER[worker] += report.duration
    _LAST[worker] = time.monotonic() - _START
    _BY_FILE[report.nodeid.split("::")[0]] += report.duration


def summary(terminal, most: int = 15) -> None:
    if not _BY_FILE:
        return
    terminal.section("time by worker and by file (CUDNN_DOCTOR_TIME_REPORT)")
    for worker, seconds in sorted(_BY_WORKER.items()):
        terminal.write_line("%-6s %7.0f s busy, its last test ended at %.0f s" % (worker, seconds, _LAST[worker]))
    for path, seconds in sorted(_BY_FILE.items(), key=lambda item: -item[1])[:most]:
        terminal.write_line("%7.0f s  %s" % (seconds, path))
