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
import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence

from .driver import DEADLINE, ENDED, ChildProcess, pump
from .runner import CHILD_SCRIPT, NativeTask, _child_env
from .tasks import early_tasks

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
        self.child: Optional[ChildProcess] = None
        self.sent: List[int] = []  # task ids the live child was given, in order
        self.start_error: Optional[str] = None
        self.exits_without_work = 0  # children that ended before starting any task (a broken interpreter)
        self.speculative: List[int] = []  # ids of tasks sent before any probe asked (``speculate``)
        self.waiting: Dict[int, int] = {}  # task id -> the speculative task whose answer it may take (``_settle``)
        self.loaded_from: Dict[int, Optional[str]] = {}  # speculative task id -> the file it loaded (the child says)

    # --- child lifecycle ----------------------------------------------------

    def start(self) -> None:
        """Start the child now, so its interpreter and imports overlap with the file-system probes."""
        if self.child is not None or self.start_error:
            return
        try:
            # -S: the child needs no site hooks (sys.path comes through PYTHONPATH), which saves their imports.
            self.child = ChildProcess([sys.executable, "-S", self.script, "--stream", str(self.task_timeout)],
                                      _child_env(self.base_env, []))
            self.child.loaded_from = self.loaded_from  # every child's notes in one place
        except OSError as exc:
            self.start_error = "could not start the native child: %s" % exc
            return
        self.sent = []

    def _send(self, task_id: int) -> None:
        assert self.child is not None
        # A child that died takes no more; collect() sees its end and restarts for what is left.
        self.child.write((json.dumps(dict(self.tasks[task_id], id=task_id)) + "\n").encode())
        self.sent.append(task_id)

    def _kill(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child = None

    # --- public --------------------------------------------------------------

    def speculate(self, tasks: Optional[Sequence[NativeTask]] = None) -> None:
        """Start ``tasks`` (the driver and node probes', by default) before any probe asks for them. A later task
        takes the answer when it asks the same of the same thing (op, GPU, options: all but the library) and is
        the same task or names the file the speculative one loaded (the child says which); else it runs itself."""
        self.speculative += self.submit([dict(task, early=True) for task in (
            early_tasks(False) if tasks is None else tasks)])

    def submit(self, tasks: List[NativeTask]) -> List[int]:
        """Queue tasks (started on at once); returns their ids for ``collect``."""
        ids = []
        for task in tasks:
            self.tasks.append(task)
            ids.append(len(self.tasks) - 1)
        self.start()
        for task_id in ids:
            early = self._speculated(self.tasks[task_id])
            if early is not None:
                self.waiting[task_id] = early
            elif self.child is not None:
                self._send(task_id)
        return ids

    def _speculated(self, task: NativeTask) -> Optional[int]:
        """The unclaimed speculative task that may answer ``task``: the same question, the same task or a named
        file."""
        if task.get("early"):
            return None
        for early in self.speculative:
            if early in self.waiting.values() or _question(self.tasks[early]) != _question(task):
                continue
            if self.tasks[early].get("lib") == task.get("lib") or task.get("lib"):
                return early
        return None

    def _settle(self) -> None:
        """Tasks waiting on a speculative answer: take it when it fits, else they become tasks to run."""
        for task_id, early in list(self.waiting.items()):
            if early not in self.results:
                continue
            del self.waiting[task_id]
            answer, loaded = self.results[early], self.loaded_from.get(early)
            task, guess = self.tasks[task_id], self.tasks[early]
            same = guess.get("lib") == task.get("lib")  # _speculated: the rest is the same
            if same or (loaded and task.get("lib") and os.path.realpath(str(task["lib"])) == loaded):
                self.results[task_id] = answer

    def collect(self, timeout: float) -> List[dict]:
        """Wait (at most ``timeout`` seconds) for every submitted task; one result per task id."""
        deadline = time.monotonic() + timeout
        while True:
            self._settle()
            if len(self.results) >= len(self.tasks):
                break
            pending = [i for i in range(len(self.tasks)) if i not in self.results and i not in self.waiting]
            if self.child is None:
                if self.start_error or time.monotonic() >= deadline:
                    break
                self.start()
                if self.child is None:
                    break
                for task_id in pending:
                    self._send(task_id)
            else:  # a task whose speculative answer did not fit runs now, in the same child
                for task_id in pending:
                    if task_id not in self.sent:
                        self._send(task_id)
            self.child.close_stdin()  # end of tasks: the child exits after the last one
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

    def _drain(self, deadline: float) -> None:
        """Read events until the child exits, dies, overruns a task or the deadline passes."""
        assert self.child is not None
        children = {0: self.child}

        def on_result(_: int, task: int, result: dict) -> None:
            self.results.setdefault(task, result)
            if self._all_answered():
                # Nothing more to read: the child's own end (its select round and interpreter teardown, about 5 ms
                # after its input closes) is not waited for. Its workers have all ended, each having answered.
                children.pop(0, None)
                self._kill()

        def on_stop(_: int, why: str) -> None:
            child = children.pop(0)
            if why == DEADLINE:
                self._give_up({"timeout": round(deadline - child.started_at, 2)} if child.current is not None
                              else None)
            elif why == ENDED:
                reason = child.died_in_task()
                if reason is not None and child.current is not None:
                    self._give_up(reason)
                    return
                # Finished, or died between tasks: tasks it never reached go to a fresh child, unless children
                # keep ending without doing anything.
                code = child.exit_code()
                if code != 0 and not any(i in self.results for i in self.sent):
                    self.exits_without_work += 1
                    if self.exits_without_work >= 2:
                        self.start_error = "the native child exited with status %d" % code
                self._kill()
            else:
                self._give_up({"timeout": self.task_timeout})

        pump(children, deadline, self.task_timeout, on_result, on_stop, poll=_KILL_GRACE * 2)

    def _all_answered(self) -> bool:
        """Every task has its result, or waits on a speculative task that has one (``_settle`` decides)."""
        return all(i in self.results or self.waiting.get(i) in self.results for i in range(len(self.tasks)))

    def _give_up(self, reason: Optional[dict]) -> None:
        """Kill the child; the task it was on gets ``reason``; the rest go to a fresh child."""
        if self.child is not None and self.child.current is not None and reason is not None:
            self.results.setdefault(self.child.current, reason)
        self._kill()


def _question(task: NativeTask) -> dict:
    """What a task asks, whichever spelling of its library it loads: a GPU's readiness answers only for that GPU,
    and health reads without the NVLink counters do not answer a task that wants them."""
    return {key: value for key, value in task.items() if key not in ("lib", "early")}

