"""Test-only hooks: die or pause at named points, and point post-install machine reads at a fake machine."""
from __future__ import annotations

import os
import signal
import time

CRASH_ENV = "CUDNN_DOCTOR_TEST_CRASH_AT"  # e.g. "after-backup-3"
SLEEP_ENV = "CUDNN_DOCTOR_TEST_SLEEP_AT"  # e.g. "after-lock:2.5"
PAUSED_ENV = "CUDNN_DOCTOR_TEST_PAUSED_FILE"  # created when the sleep starts: a test knows the run is there now
MACHINE_ENV = "CUDNN_DOCTOR_TEST_MACHINE_ROOT"  # the root that ld.so.conf and `check` are read under (default /)


def machine_root() -> str:
    """The machine an install serves: "/" unless a test points it at a fake machine root."""
    return os.environ.get(MACHINE_ENV) or "/"


def point(name: str) -> None:
    """Called at each named step; does nothing unless a test set one of the variables."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)  # like a power cut for the process: no cleanup runs
    wanted = os.environ.get(SLEEP_ENV, "")
    if wanted:
        where, _, seconds = wanted.partition(":")
        if where == name:
            paused = os.environ.get(PAUSED_ENV)
            if paused:
                open(paused, "w").close()
            time.sleep(float(seconds or 1))
