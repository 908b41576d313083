"""What the probes of one run share (Context: the host, the facts so far, the loader view, the native calls to
make and the Run) and the guard that turns a probe's exception into a recorded error. Its own module so that the
probes that build a Context (toolkit.read_version) or guard their steps (windows/) import it, not the package that
runs them."""
from __future__ import annotations

import functools
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..host import Host, NativeTask
from ..model import Facts, ProbeError
from .executor import record_native_timeouts
from .loader import LoaderView
from .run import Run

ApplyFn = Callable[[List[dict]], None]


class Context:
    """What probes share during one run: the host, the facts so far, the loader view, native calls to make, and the
    Run (deadline, native child) they are part of."""

    def __init__(self, host: Host, facts: Optional[Facts] = None, loader: Optional[LoaderView] = None,
                 compat: Optional[Any] = None, run: Optional[Run] = None) -> None:
        self.host = host
        self.run = run if run is not None else Run(host)
        self._compat = compat  # the knowledge the caller hands in (collect's caller; diagnose loads it)
        self.facts = facts if facts is not None else Facts()
        self.loader = loader if loader is not None else LoaderView(host)
        self.facts.loader = self.loader.facts
        self._native: List[Tuple[str, List[int], ApplyFn]] = []
        self._native_done = False  # results collected; a late (abandoned) probe cannot queue more
        self.also_resolve: Tuple[str, ...] = ()  # names the caller asks the loader step about (explain)
        self.ready = False  # check --ready: run the readiness kernel on every GPU

    @property
    def knowledge(self) -> Any:
        """The knowledge base probes consult (sonames, layouts): the one handed in; probes never load it."""
        if self._compat is None:
            raise RuntimeError("the probes were given no knowledge base: pass compat= to collect()")
        if callable(self._compat):  # its loader: read when a probe first needs it (diagnose.collect_facts)
            self._compat = self._compat()
        return self._compat

    def native(self, probe: str, tasks: Sequence[NativeTask], apply: ApplyFn) -> None:
        """Queue a group of native tasks; the run's one native child starts on them at once and ``apply``
        gets one result per task after the file-system probes."""
        if not tasks or self._native_done:
            return
        # A FIFO, socket or device where a library belongs would block the child's dlopen until the run's deadline
        # (opening a FIFO waits for a writer): such a task is answered here, never sent, and the path noted (CD003).
        sendable, answers = [], {}
        for index, task in enumerate(tasks):
            lib = str(task.get("lib") or "")
            inside = self.host.inside(lib) if lib.startswith("/") else None
            kind = self.host.regular_file_kind(inside) if inside else None
            if kind is None:
                sendable.append(task)
                continue
            if inside is not None:  # a kind is only found for a path inside the root
                self.host.note_not_regular(inside, self.host.realpath(inside)[0], kind, probe)
            answers[index] = {"error": "%s is a %s, not a library file; it was not loaded" % (inside, kind)}
        ids: List[int] = []
        if sendable:
            ids = self.run.start_native().submit(sendable)
        if answers:
            count, given = len(tasks), apply
            apply = functools.partial(_merged, given, answers, count)
        self._native.append((probe, ids, apply))

    def searched(self, probe: str, place: str) -> None:
        self.facts.searched.setdefault(probe, []).append(place)

    def run_native(self) -> None:
        self._native_done = True
        queued, self._native = self._native, []
        session = self.run.session
        if session is None:  # nothing was sent (every task answered here), or nothing was queued
            for probe, _ids, apply in queued:
                guard(self.facts, probe, functools.partial(apply, []))
            return
        try:
            results = session.collect(self.run.native_timeout)
        finally:
            session.close()
        for probe, ids, apply in queued:
            guard(self.facts, probe, functools.partial(_apply_picked, apply, results, ids))
            record_native_timeouts(self.facts, self.host, probe, [(session.tasks[i], results[i]) for i in ids])


def _merged(apply: ApplyFn, answers: Dict[int, Dict[str, Any]], count: int, results: List[Dict[str, Any]]) -> None:
    """``apply`` given the child's results merged with the answers given without it (_merge)."""
    apply(_merge(results, answers, count))


def _apply_picked(apply: ApplyFn, results: List[Dict[str, Any]], ids: List[int]) -> None:
    """``apply`` given the results of its own tasks (picked inside the guard: a short answer is a probe error)."""
    apply([results[i] for i in ids])


def _merge(results: List[dict], answers: Dict[int, dict], count: int) -> List[dict]:
    """The child's results for the tasks sent, with the answers given without it, in the tasks' order."""
    sent = iter(results)
    return [answers[i] if i in answers else next(sent) for i in range(count)]


def guard(facts: Facts, name: str, fn: Callable[[], None]) -> None:
    """A probe that raises becomes a recorded error, never a crash of the run (flutter doctor's rule)."""
    start = time.perf_counter()
    try:
        fn()
    except Exception as exc:
        facts.probe_errors.append(ProbeError(probe=name, error="%s: %s" % (type(exc).__name__, exc)))
    facts.timings_ms[name] = facts.timings_ms.get(name, 0.0) + round((time.perf_counter() - start) * 1000, 2)
