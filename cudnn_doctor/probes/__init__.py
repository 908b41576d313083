"""Probes observe the machine through the host seam into Facts. Never rules, remedies or render."""
from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..host import Host, NativeTask
from ..model import Facts, ProbeError
from .executor import record_native_timeouts
from .loader import LoaderView
from .run import Run

if TYPE_CHECKING:
    from ..host import NativeSession  # the child native/session.py drives; only host imports native/

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
                _guard(self.facts, probe, functools.partial(apply, []))
            return
        try:
            results = session.collect(self.run.native_timeout)
        finally:
            session.close()
        for probe, ids, apply in queued:
            _guard(self.facts, probe, functools.partial(_apply_picked, apply, results, ids))
            record_native_timeouts(self.facts, self.host, probe, [(session.tasks[i], results[i]) for i in ids])


def _meanwhile(work: Optional[Callable[[], None]]) -> None:
    """``work`` (the caller's imports), run once the file-system probes have sent the native child its tasks and
    before their results are read, so it overlaps with the child's calls. On the main thread, not beside the probes:
    both need the processor far more than the disk, threads share one interpreter lock, and measured on three
    machines a thread beside them made the whole run no faster and the probes slower. What it raises is ignored:
    the caller meets the error again when it does the same work."""
    if work is None:
        return
    try:
        work()
    except Exception:
        pass


def _merged(apply: ApplyFn, answers: Dict[int, Dict[str, Any]], count: int, results: List[Dict[str, Any]]) -> None:
    """``apply`` given the child's results merged with the answers given without it (_merge)."""
    apply(_merge(results, answers, count))


def _apply_picked(apply: ApplyFn, results: List[Dict[str, Any]], ids: List[int]) -> None:
    """``apply`` given the results of its own tasks (picked inside the guard: a short answer is a probe error)."""
    apply([results[i] for i in ids])


def _guarded(facts: Facts, name: str, fn: Callable[[], None]) -> Callable[[], None]:
    """``fn`` under _guard, as run_bounded takes it."""
    return functools.partial(_guard, facts, name, fn)


def _merge(results: List[dict], answers: Dict[int, dict], count: int) -> List[dict]:
    """The child's results for the tasks sent, with the answers given without it, in the tasks' order."""
    sent = iter(results)
    return [answers[i] if i in answers else next(sent) for i in range(count)]


def _stale_cache_entries(ctx: Context) -> None:
    ctx.loader.find_stale_entries()


def _guard(facts: Facts, name: str, fn: Callable[[], None]) -> None:
    """A probe that raises becomes a recorded error, never a crash of the run (flutter doctor's rule)."""
    start = time.perf_counter()
    try:
        fn()
    except Exception as exc:
        facts.probe_errors.append(ProbeError(probe=name, error="%s: %s" % (type(exc).__name__, exc)))
    facts.timings_ms[name] = facts.timings_ms.get(name, 0.0) + round((time.perf_counter() - start) * 1000, 2)


def collect(host: Host, timeout: Optional[float] = None, meanwhile: Optional[Callable[[], None]] = None, *,
            compat: Any, sonames: Sequence[str] = (), ready: bool = False,
            early: Optional[NativeSession] = None) -> Facts:
    """Observe the machine through ``host`` and return the facts; never prints, never raises, never hangs:
    each probe runs under the ``timeout`` budget (seconds for the whole run; see executor.py).

    ``compat``: the knowledge base the probes consult (sonames, layouts, release defaults), or a function that
    returns it, called when a probe first needs it; probes never load it themselves.

    ``meanwhile`` (the caller's own work, e.g. importing the rules) runs after the file-system probes, while the
    native child works, and before its results are read; what it raises is ignored.
    ``sonames``: more library names for the loader step to resolve, as a plain process would.
    ``ready``: also run the readiness kernel on every GPU (check --ready).
    ``early``: a native child the command line already started (Host.native_session says when it is used)."""
    with host.snapshot():  # links resolved once per path for the run (Host.snapshot says why that is safe)
        return _collect(host, timeout, meanwhile, compat, tuple(sonames), ready, early)


def _collect(host: Host, timeout: Optional[float], meanwhile: Optional[Callable[[], None]],
             compat: Any, sonames: Tuple[str, ...] = (), ready: bool = False,
             early: Optional[NativeSession] = None) -> Facts:
    from . import cudnn, driver, environment, gpu_code, hostinfo, java, leftovers, machine_state, python_env, toolkit
    from . import container_runtime, install_state, node, theano
    from .executor import Deadline, record_not_regular, run_bounded

    from .windows import collect_windows, is_windows

    deadline = Deadline(timeout)
    host = host.for_run()  # what this run meets (FIFOs where files belong) is its own, never the caller's
    if is_windows(host):  # a Windows machine, live or a drive under --root: its own probes
        if early is not None:
            early.close()
        ctx = Context(host, Facts(), LoaderView.empty(host), compat, Run(host, deadline))
        run_bounded(ctx.facts, "windows", lambda: _guard(ctx.facts, "windows", lambda: collect_windows(ctx)), deadline)
        _guard(ctx.facts, "environment", lambda: environment.probe(ctx))
        return ctx.facts
    session = host.native_session(early)
    session.start()  # first (a no-op for an early session: already running): the child's start overlaps with every file-system probe below
    facts = Facts()
    # Reading ld.so.conf and ld.so.cache can block like any other read, so it runs under the deadline too.
    views: List[LoaderView] = []
    run_bounded(facts, "ld.so", lambda: _guard(facts, "ld.so", lambda: views.append(LoaderView(host))), deadline)
    ctx = Context(host, facts, views[0] if views else LoaderView.empty(host), compat, Run(host, deadline, session))
    ctx.also_resolve = sonames
    ctx.ready = ready
    # Order matters: toolkits tell cuDNN where to look; python sites tell both about pip copies.
    steps = (
        ("host", hostinfo.probe),
        ("environment", environment.probe),
        ("driver", driver.probe),
        ("node", node.probe),  # after driver: it asks NVML through the library driver found
        ("container-runtime", container_runtime.probe),
        ("python", python_env.probe),
        ("gpu-code", gpu_code.probe),
        ("toolkits", toolkit.probe),
        ("theano", theano.probe),  # before cudnn: its dnn.library_path folders are searched for copies too
        ("cudnn", cudnn.probe),
        ("cudnn-leftovers", leftovers.probe),
        ("install-state", install_state.probe),
        ("java", java.probe),
        ("machine-state", machine_state.probe),
        ("ld.so.cache", _stale_cache_entries),  # reads only the loader's files: runs while the native child works
    )
    for name, fn in steps:
        run_bounded(ctx.facts, name, _guarded(ctx.facts, name, functools.partial(fn, ctx)), deadline)
    _meanwhile(meanwhile)
    ctx.run.leave_for_after_native()  # the native child's time limit: what the run's budget leaves it
    _guard(ctx.facts, "native", ctx.run_native)
    # After the native calls: which copy each consumer would load, and GPU visibility.
    for name, fn in (("loader", driver.resolve_loader), ("frameworks", python_env.resolve_frameworks),
                     ("gpus", driver.apply_visibility)):
        run_bounded(ctx.facts, name, _guarded(ctx.facts, name, functools.partial(fn, ctx)), deadline)
    record_not_regular(ctx.facts, host)
    return ctx.facts
