"""Runs native tasks in child processes with time limits, and survives children that crash or hang."""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence

NativeTask = Dict[str, object]

CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")

# The child loads libraries by absolute path. A user's LD_PRELOAD or LD_LIBRARY_PATH would
# drag other copies' sub-libraries into the query, so each group sets its own.
_STRIPPED_ENV = ("LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH")


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


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except (ValueError, AttributeError):
        return "signal %d" % -code


class _Child:
    """One child process working through the remaining tasks of a group."""

    def __init__(self, tasks: Sequence[NativeTask], offset: int, env: Mapping[str, str], script: str) -> None:
        self.offset = offset
        self.tasks = tasks
        self.current: Optional[int] = None
        self.started_at = time.monotonic()
        self.buffer = b""
        self.proc = subprocess.Popen(
            # -S: no site hooks to import; the child gets sys.path through PYTHONPATH (_child_env).
            [sys.executable, "-S", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,  # a hung child and anything it spawned can be killed as a group
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(list(tasks)).encode())
        self.proc.stdin.close()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()


def _child_env(base: Mapping[str, str], group: Sequence[NativeTask]) -> Dict[str, str]:
    env = {k: v for k, v in base.items() if k not in _STRIPPED_ENV}
    # Let a cuDNN shim find its own sub-libraries (they are dlopened by bare name).
    dirs = [str(t["search_dir"]) for t in group if t.get("search_dir")]
    if dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dict.fromkeys(dirs))
    # pynvml must import in the child even when the doctor runs from a source tree.
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    return env


def run_native(
    groups: List[Sequence[NativeTask]],
    timeout: float = 10.0,
    task_timeout: Optional[float] = None,
    env: Optional[Mapping[str, str]] = None,
    script: str = CHILD_SCRIPT,
) -> List[List[dict]]:
    """Run each group of tasks in its own child, all groups at once.

    Returns, per group, one result dict per task. A task whose child died gets
    ``{"crashed": "SIGSEGV"}``; one that ran out of time gets ``{"timeout": seconds}``.
    The remaining tasks of that group go on in a fresh child. ``script`` is the child
    program; any script that speaks the same line protocol (see child.py) can be used.
    """
    task_timeout = task_timeout or max(1.0, timeout / 2)
    base_env = dict(os.environ if env is None else env)
    if sys.platform == "win32":  # selectors cannot wait on pipes there, and there are no process groups
        from .portable import run_native_portable

        return run_native_portable(groups, timeout, task_timeout, [_child_env(base_env, g) for g in groups], script)
    results: List[List[Optional[dict]]] = [[None] * len(g) for g in groups]
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    live: Dict[int, _Child] = {}

    def start(gi: int, offset: int) -> None:
        group = groups[gi]
        if offset >= len(group):
            return
        try:
            child = _Child(group[offset:], offset, _child_env(base_env, group), script)
        except OSError as exc:
            for i in range(offset, len(group)):
                results[gi][i] = {"error": "could not start the native child: %s" % exc}
            return
        live[gi] = child
        assert child.proc.stdout is not None
        sel.register(child.proc.stdout, selectors.EVENT_READ, gi)

    def finish(gi: int, reason: dict) -> None:
        child = live.pop(gi)
        sel.unregister(child.proc.stdout)
        child.kill()
        nxt = child.offset
        if child.current is not None:
            results[gi][child.offset + child.current] = reason
            nxt = child.offset + child.current + 1
        else:
            # Died before starting anything: every task it held gets the reason.
            for i in range(child.offset, len(groups[gi])):
                if results[gi][i] is None:
                    results[gi][i] = dict(reason)
            return
        # Skip past tasks that already have results, then carry on in a new child.
        while nxt < len(groups[gi]) and results[gi][nxt] is not None:
            nxt += 1
        if time.monotonic() < deadline:
            start(gi, nxt)

    for gi in range(len(groups)):
        start(gi, 0)

    while live:
        now = time.monotonic()
        if now >= deadline:
            for gi in list(live):
                finish(gi, {"timeout": timeout})
            break
        for gi, child in list(live.items()):
            if child.current is not None and now - child.started_at > task_timeout:
                finish(gi, {"timeout": task_timeout})
        if not live:
            break
        for key, _ in sel.select(timeout=0.05):
            gi = key.data
            child = live.get(gi)
            if child is None:
                continue
            chunk = os.read(key.fd, 65536)
            if not chunk:
                code = child.proc.wait()
                if code < 0:
                    finish(gi, {"crashed": _signal_name(code)})
                elif child.current is not None:
                    finish(gi, {"crashed": "exit status %d" % code})
                else:
                    live.pop(gi)
                    sel.unregister(child.proc.stdout)
                continue
            events, child.buffer = split_events(child.buffer + chunk)
            for event in events:
                if event.get("state") == "start":
                    child.current = event["task"]
                    child.started_at = time.monotonic()
                elif "result" in event:
                    results[gi][child.offset + event["task"]] = event["result"]
                    child.current = None

    sel.close()
    return [[r if r is not None else {"error": "no result"} for r in group] for group in results]
