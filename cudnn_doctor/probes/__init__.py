"""Probes observe the machine through the host seam into Facts. Never rules, remedies or render."""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence, Tuple

from ..host import Host
from ..model import Facts
from .context import Context, guard
from .executor import Deadline, record_not_regular, run_bounded
from .loader import LoaderView
from .run import Run
from .windows import collect_windows, is_windows

if TYPE_CHECKING:
    from ..host import NativeSession  # the child native/session.py drives; only host imports native/


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


def _guarded(facts: Facts, name: str, fn: Callable[[], None]) -> Callable[[], None]:
    """``fn`` under guard, as run_bounded takes it."""
    return functools.partial(guard, facts, name, fn)


def _stale_cache_entries(ctx: Context) -> None:
    ctx.loader.find_stale_entries()


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
    # why: smoke's and bench's loader view (diagnose.loader_facts) and check --ready's early task import this package
    # for one probe; the others cost them 84 ms more.
    from . import cudnn, driver, environment, gpu_code, hostinfo, java, leftovers, machine_state, python_env, toolkit
    from . import container_runtime, install_state, node, theano

    deadline = Deadline(timeout)
    host = host.for_run()  # what this run meets (FIFOs where files belong) is its own, never the caller's
    if is_windows(host):  # a Windows machine, live or a drive under --root: its own probes
        if early is not None:
            early.close()
        ctx = Context(host, Facts(), LoaderView.empty(host), compat, Run(host, deadline))
        run_bounded(ctx.facts, "windows", lambda: guard(ctx.facts, "windows", lambda: collect_windows(ctx)), deadline)
        guard(ctx.facts, "environment", lambda: environment.probe(ctx))
        return ctx.facts
    session = host.native_session(early)
    session.start()  # first (a no-op for an early session: already running): the child's start overlaps with every file-system probe below
    facts = Facts()
    # Reading ld.so.conf and ld.so.cache can block like any other read, so it runs under the deadline too.
    views: List[LoaderView] = []
    run_bounded(facts, "ld.so", lambda: guard(facts, "ld.so", lambda: views.append(LoaderView(host))), deadline)
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
    guard(ctx.facts, "native", ctx.run_native)
    # After the native calls: which copy each consumer would load, and GPU visibility.
    for name, fn in (("loader", driver.resolve_loader), ("frameworks", python_env.resolve_frameworks),
                     ("gpus", driver.apply_visibility)):
        run_bounded(ctx.facts, name, _guarded(ctx.facts, name, functools.partial(fn, ctx)), deadline)
    record_not_regular(ctx.facts, host)
    return ctx.facts
