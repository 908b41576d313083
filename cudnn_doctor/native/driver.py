"""The one driver of native children: start a child, feed it tasks, read its events, and stop it when a task
overruns, the deadline passes or it dies. runner.run_native (a child per group) and session.NativeSession (one
streaming child per run) share it and differ only in what they do when a child stops.

The line protocol (child.py): ``{"task": i, "state": "start"}`` before task i, ``{"task": i, "result": {...}}``
after it; anything else on stdout (a library printing) is skipped.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

NativeTask = Dict[str, object]


def split_events(buffer: bytes) -> "tuple[List[dict], bytes]":
    """The child protocol's complete JSON lines in ``buffer`` and the incomplete rest; a garbled line (a library
    writing to stdout) is skipped."""
    events = []
    while b"\n" in buffer:
        line, buffer = buffer.split(b"\n", 1)
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events, buffer


def signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except (ValueError, AttributeError):
        return "signal %d" % -code


class ChildProcess:
    """One child process speaking the line protocol, in its own process group (a hang is killed with all it
    spawned)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], tasks: Optional[Sequence[NativeTask]] = None,
                 offset: int = 0) -> None:
        self.offset = offset  # index of its first task in its group (run_native's restarts)
        self.tasks = list(tasks or [])
        self.current: Optional[int] = None  # the task it is on, by its own numbering
        self.started_at = time.monotonic()
        self.buffer = b""
        self.loaded_from: Dict[int, Optional[str]] = {}  # speculative tasks' notes (native/session.py)
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=dict(env), start_new_session=True)
        if tasks is not None:  # batch mode: every task at once, then end of input
            self.write(json.dumps(self.tasks).encode())
            self.close_stdin()

    def fileno(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def write(self, data: bytes) -> bool:
        """Send to the child; False when it is gone (the driver notices its end and acts on it)."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except OSError:
            return False

    def close_stdin(self) -> None:
        try:
            if self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass

    def read(self) -> Optional[List[Tuple[int, dict]]]:
        """(task, result) for each task finished in what the child wrote; None at the end of its output."""
        chunk = os.read(self.fileno(), 65536)
        if not chunk:
            return None
        events, self.buffer = split_events(self.buffer + chunk)
        done = []
        for event in events:
            if "loaded_from" in event:
                self.loaded_from[event["task"]] = event["loaded_from"]
            elif event.get("state") == "start":
                self.current = event["task"]
                self.started_at = time.monotonic()
            elif "result" in event:
                done.append((event["task"], event["result"]))
                self.current = None
        return done

    def overran(self, now: float, limit: float) -> bool:
        return self.current is not None and now - self.started_at > limit

    def exit_code(self) -> int:
        return self.proc.wait()

    def died_in_task(self) -> Optional[dict]:
        """After the end of its output: the reason for the task it was on, if it ended in one or by a signal."""
        code = self.exit_code()
        if code < 0:
            return {"crashed": signal_name(code)}
        if self.current is not None:
            return {"crashed": "exit status %d" % code}
        return None

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


# Why the driver stops a child: the deadline passed, a task ran over its limit, or its output ended.
DEADLINE, OVERRUN, ENDED = "deadline", "overrun", "ended"

OnResult = Callable[[Any, int, dict], None]
OnStop = Callable[[Any, str], None]


def pump(children: Dict[Any, ChildProcess], deadline: float, task_timeout: float, on_result: OnResult,
         on_stop: OnStop, poll: float = 0.05) -> None:
    """Read every child's events until ``children`` is empty. ``on_result(key, task, result)`` gets each finished
    task; ``on_stop(key, why)`` must take the child out of ``children`` (and may put a fresh one in its place)."""
    while children:
        now = time.monotonic()
        if now >= deadline:
            for key in list(children):
                on_stop(key, DEADLINE)
            return
        for key, child in list(children.items()):
            if child.overran(now, task_timeout):
                on_stop(key, OVERRUN)
        if not children:
            return
        with selectors.DefaultSelector() as sel:
            for key, child in children.items():
                sel.register(child.fileno(), selectors.EVENT_READ, (key, child))
            ready = sel.select(timeout=max(0.0, min(poll, deadline - now)))
        for selected, _ in ready:
            key, child = selected.data
            if children.get(key) is not child:
                continue  # stopped (and perhaps replaced) by an earlier event in this round
            done = child.read()
            if done is None:
                on_stop(key, ENDED)
                continue
            for task, result in done:
                on_result(key, task, result)
