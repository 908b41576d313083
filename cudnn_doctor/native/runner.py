"""Runs native tasks in child processes with time limits, and survives children that crash or hang."""
from __future__ import annotations

import os
import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence

from .driver import DEADLINE, OVERRUN, ChildProcess, NativeTask, pump
from .portable import run_native_portable

CHILD_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")

# The child loads libraries by absolute path. A user's LD_PRELOAD or LD_LIBRARY_PATH would
# drag other copies' sub-libraries into the query, so each group sets its own.
_STRIPPED_ENV = ("LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH")


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
        return run_native_portable(groups, timeout, task_timeout, [_child_env(base_env, g) for g in groups], script)
    results: List[List[Optional[dict]]] = [[None] * len(g) for g in groups]
    deadline = time.monotonic() + timeout
    live: Dict[int, ChildProcess] = {}

    def start(gi: int, offset: int) -> None:
        group = groups[gi]
        if offset >= len(group):
            return
        try:
            # -S: no site hooks to import; the child gets sys.path through PYTHONPATH (_child_env).
            live[gi] = ChildProcess([sys.executable, "-S", script], _child_env(base_env, group), group[offset:],
                                    offset)
        except OSError as exc:
            for i in range(offset, len(group)):
                results[gi][i] = {"error": "could not start the native child: %s" % exc}

    def finish(gi: int, reason: dict) -> None:
        child = live.pop(gi)
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

    def on_result(gi: int, task: int, result: dict) -> None:
        results[gi][live[gi].offset + task] = result

    def on_stop(gi: int, why: str) -> None:
        if why == DEADLINE:
            finish(gi, {"timeout": timeout})
        elif why == OVERRUN:
            finish(gi, {"timeout": task_timeout})
        else:
            reason = live[gi].died_in_task()
            if reason is not None:
                finish(gi, reason)
            else:
                live.pop(gi).kill()  # done: it answered every task it was given

    for gi in range(len(groups)):
        start(gi, 0)
    pump(live, deadline, task_timeout, on_result, on_stop)
    return [[r if r is not None else {"error": "no result"} for r in group] for group in results]
