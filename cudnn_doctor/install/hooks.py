"""Test-only hooks: die or pause at named points so tests can prove crash recovery and locking."""
from __future__ import annotations

import os
import signal
import time

CRASH_ENV = "CUDNN_DOCTOR_TEST_CRASH_AT"  # e.g. "after-backup-3"
SLEEP_ENV = "CUDNN_DOCTOR_TEST_SLEEP_AT"  # e.g. "after-lock:2.5"


def point(name: str) -> None:
    """Called at each named step; does nothing unless a test set one of the variables."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)  # like a power cut for the process: no cleanup runs
    wanted = os.environ.get(SLEEP_ENV, "")
    if wanted:
        where, _, seconds = wanted.partition(":")
        if where == name:
            time.sleep(float(seconds or 1))
