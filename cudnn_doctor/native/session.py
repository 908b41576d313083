"""One native child for a whole `check` run: started before the probes, fed tasks as they are found.

The interpreter's start and NVML's import cost the same for one task as for ten, so a run pays them
once, and while the probes still walk the file system: the child starts first and works on each task
(NVML, libcuda, each toolkit's libcudart, each cuDNN copy) as soon as a probe queues it, each in its own
fork of the child, side by side (child.py ``stream``): copies never share a link map, NVML's slow start
overlaps the libraries' loads, and a crash or hang ends only its own task (``{"crashed": "SIGSEGV"}``,
``{"timeout": s}``). A child that dies anyway is replaced by a fresh one for the tasks it had not
answered; at the run's deadline the whole process group is killed.
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from typing import Dict, List, Mapping, Optional

from .runner import CHILD_SCRIPT, NativeTask, _child_env, _signal_name, split_events

_KILL_GRACE = 0.05  # seconds between the select polls that watch the per-task limit


class NativeSession:
    """Streams native tasks to one child process and collects one result per task."""

    def __init__(self, env: Optional[Mapping[str, str]] = None, task_timeout: float = 5.0,
                 script: str = CHILD_SCRIPT) -> None:
        self.base_env = dict(os.environ if env is None else env)
        self.task_timeout = task_timeout
        self.script = script
        self.tasks: List[NativeTask] = []
        self.results: Dict[int, dict] = {}
        self.proc: Optional[subprocess.Popen] = None
        self.sent: List[int] = []  # task ids the live child was given, in order
        self.current: Optional[int] = None
        self.started_at = 0.0
        self.buffer = b""
        self.start_error: Optional[str] = None
        self.exits_without_work = 0  # children that ended before starting any task (a broken interpreter)

    # --- child lifecycle ----------------------------------------------------

    def start(self) -> None:
        """Start the child now, so its interpreter and imports overlap with the file-system probes."""
        if self.proc is not None or self.start_error:
            return
        try:
            # -S: the child needs no site hooks (sys.path comes through PYTHONPATH), which saves their imports.
            self.proc = subprocess.Popen(
                [sys.executable, "-S", self.script, "--stream", str(self.task_timeout)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=_child_env(self.base_env, []), start_new_session=True)
        except OSError as exc:
            self.start_error = "could not start the native child: %s" % exc
            return
        self.sent, self.current, self.buffer = [], None, b""

    def _send(self, task_id: int) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        line = json.dumps(dict(self.tasks[task_id], id=task_id)) + "\n"
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except OSError:
            pass  # the child died; collect() sees it and restarts for what is left
        self.sent.append(task_id)

    def _kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self.proc = None

    # --- public --------------------------------------------------------------

    def submit(self, tasks: List[NativeTask]) -> List[int]:
        """Queue tasks (started on at once); returns their ids for ``collect``."""
        ids = []
        for task in tasks:
            self.tasks.append(task)
            ids.append(len(self.tasks) - 1)
        self.start()
        if self.proc is not None:
            for task_id in ids:
                self._send(task_id)
        return ids

    def collect(self, timeout: float) -> List[dict]:
        """Wait (at most ``timeout`` seconds) for every submitted task; one result per task id."""
        deadline = time.monotonic() + timeout
        while len(self.results) < len(self.tasks):
            pending = [i for i in range(len(self.tasks)) if i not in self.results]
            if self.proc is None:
                if self.start_error or time.monotonic() >= deadline:
                    break
                self.start()
                if self.proc is None:
                    break
                for task_id in pending:
                    self._send(task_id)
            self._close_stdin()
            self._drain(deadline)
            if time.monotonic() >= deadline:
                break
        self._kill()
        for i in range(len(self.tasks)):
            if i not in self.results:
                self.results[i] = ({"error": self.start_error} if self.start_error else {"timeout": timeout})
        return [self.results[i] for i in range(len(self.tasks))]

    def close(self) -> None:
        self._kill()

    # --- reading ---------------------------------------------------------------

    def _close_stdin(self) -> None:
        try:
            if self.proc is not None and self.proc.stdin is not None and not self.proc.stdin.closed:
                self.proc.stdin.close()  # end of tasks: the child exits after the last one
        except OSError:
            pass

    def _drain(self, deadline: float) -> None:
        """Read events until the child exits, dies, overruns a task or the deadline passes."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                now = time.monotonic()
                if now >= deadline:
                    self._give_up({"timeout": round(deadline - self.started_at, 2)} if self.current is not None
                                  else None)
                    return
                if self.current is not None and now - self.started_at > self.task_timeout:
                    self._give_up({"timeout": self.task_timeout})
                    return
                if not sel.select(timeout=min(_KILL_GRACE * 2, deadline - now)):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    code = self.proc.wait()
                    if self.current is not None:
                        self._give_up({"crashed": _signal_name(code) if code < 0 else "exit status %d" % code})
                    else:
                        # Finished, or died between tasks: tasks it never reached go to a fresh child,
                        # unless children keep ending without doing anything.
                        if code != 0 and not any(i in self.results for i in self.sent):
                            self.exits_without_work += 1
                            if self.exits_without_work >= 2:
                                self.start_error = "the native child exited with status %d" % code
                        self._kill()
                    return
                self._events(chunk)

    def _events(self, chunk: bytes) -> None:
        events, self.buffer = split_events(self.buffer + chunk)
        for event in events:
            if event.get("state") == "start":
                self.current = event["task"]
                self.started_at = time.monotonic()
            elif "result" in event:
                self.results.setdefault(event["task"], event["result"])
                self.current = None

    def _give_up(self, reason: Optional[dict]) -> None:
        """Kill the child; the task it was on gets ``reason``; the rest go to a fresh child."""
        if self.current is not None and reason is not None:
            self.results.setdefault(self.current, reason)
        self.current = None
        self._kill()
