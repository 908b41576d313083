"""Native tasks in child processes without POSIX-only calls (no select on pipes, no process groups): Windows."""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from typing import Dict, List, Mapping, Optional, Sequence

NativeTask = Dict[str, object]


def _reader(stream, out: "queue.Queue[Optional[bytes]]") -> None:
    for line in iter(stream.readline, b""):
        out.put(line)
    out.put(None)


def run_group(group: Sequence[NativeTask], env: Mapping[str, str], script: str, task_timeout: float,
              deadline: float) -> List[dict]:
    """One group's tasks, in one child at a time; a hung or crashed task is recorded and the rest go on."""
    results: List[Optional[dict]] = [None] * len(group)
    offset = 0
    while offset < len(group) and time.monotonic() < deadline:
        try:
            proc = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=dict(env))
        except OSError as exc:
            return [r or {"error": "could not start the native child: %s" % exc} for r in results]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(list(group[offset:])).encode())
        proc.stdin.close()
        lines: "queue.Queue[Optional[bytes]]" = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        current: Optional[int] = None
        started = time.monotonic()
        reason: Optional[dict] = None
        while True:
            limit = min(deadline, started + task_timeout) if current is not None else deadline
            try:
                line = lines.get(timeout=max(0.01, limit - time.monotonic()))
            except queue.Empty:
                reason = {"timeout": task_timeout if time.monotonic() < deadline else round(deadline - started, 1)}
                break
            if line is None:
                code = proc.wait()
                if current is not None:
                    reason = {"crashed": "exit status %d" % code}
                break
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("state") == "start":
                current, started = event["task"], time.monotonic()
            elif "result" in event:
                results[offset + event["task"]] = event["result"]
                current = None
        if reason is not None:
            proc.kill()
            proc.wait()
        if current is None:
            break
        results[offset + current] = reason
        offset += current + 1
    return [r if r is not None else {"error": "no result"} for r in results]


def run_native_portable(groups: List[Sequence[NativeTask]], timeout: float, task_timeout: float,
                        envs: Sequence[Mapping[str, str]], script: str) -> List[List[dict]]:
    """Each group in its own thread, all at once, within one overall deadline."""
    deadline = time.monotonic() + timeout
    out: List[List[dict]] = [[] for _ in groups]

    def work(index: int) -> None:
        out[index] = run_group(groups[index], envs[index], script, task_timeout, deadline)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(groups))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()) + 1)
    return [o or [{"timeout": timeout}] * len(g) for o, g in zip(out, groups)]
