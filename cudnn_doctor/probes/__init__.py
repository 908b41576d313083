"""Runs the probes in order: file-system steps first, then one batch of native calls, then what depends on both."""
from __future__ import annotations

import time
from typing import Callable, List, Sequence, Tuple

from ..host import Host
from ..model import Facts, ProbeError
from ..native.runner import NativeTask
from .loader import LoaderView

ApplyFn = Callable[[List[dict]], None]


class Context:
    """What probes share during one run: the host, the facts so far, the loader view, native calls to make."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.facts = Facts()
        self.loader = LoaderView(host)
        self.facts.loader = self.loader.facts
        self._native: List[Tuple[str, Sequence[NativeTask], ApplyFn]] = []

    def native(self, probe: str, tasks: Sequence[NativeTask], apply: ApplyFn) -> None:
        """Queue a group of native tasks (one child process); ``apply`` gets one result per task."""
        if tasks:
            self._native.append((probe, list(tasks), apply))

    def searched(self, probe: str, place: str) -> None:
        self.facts.searched.setdefault(probe, []).append(place)

    def run_native(self) -> None:
        if not self._native:
            return
        queued, self._native = self._native, []
        results = self.host.native([tasks for _, tasks, _ in queued])
        for (probe, _, apply), result in zip(queued, results):
            _guard(self.facts, probe, lambda: apply(result))


def _guard(facts: Facts, name: str, fn: Callable[[], None]) -> None:
    """A probe that raises becomes a recorded error, never a crash of the run (flutter doctor's rule)."""
    start = time.perf_counter()
    try:
        fn()
    except Exception as exc:
        facts.probe_errors.append(ProbeError(probe=name, error="%s: %s" % (type(exc).__name__, exc)))
    facts.timings_ms[name] = facts.timings_ms.get(name, 0.0) + round((time.perf_counter() - start) * 1000, 2)


def collect(host: Host) -> Facts:
    """Observe the machine through ``host`` and return the facts; never prints, never raises."""
    from . import cudnn, driver, hostinfo, java, python_env, toolkit

    ctx = Context(host)
    from .windows import collect_windows, is_windows

    if is_windows(host):  # a Windows machine, live or a drive under --root: its own probes
        collect_windows(ctx)
        return ctx.facts
    # Order matters: toolkits tell cuDNN where to look; python sites tell both about pip copies.
    steps = (
        ("host", hostinfo.probe),
        ("driver", driver.probe),
        ("python", python_env.probe),
        ("toolkits", toolkit.probe),
        ("cudnn", cudnn.probe),
        ("java", java.probe),
    )
    for name, fn in steps:
        _guard(ctx.facts, name, lambda fn=fn: fn(ctx))
    _guard(ctx.facts, "native", ctx.run_native)
    # After the native calls: which copy each consumer would load, and GPU visibility.
    for name, fn in (("loader", driver.resolve_loader), ("frameworks", python_env.resolve_frameworks),
                     ("gpus", driver.apply_visibility), ("ld.so.cache", lambda c: c.loader.find_stale_entries())):
        _guard(ctx.facts, name, lambda fn=fn: fn(ctx))
    return ctx.facts
