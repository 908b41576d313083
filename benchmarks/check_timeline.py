"""A timeline of one `check --json` run in this process: imports, app build, each probe, the native child, rules,
render, exit. Finds the main thread's critical path; the hooks live here only, never in the product.

    python3 benchmarks/check_timeline.py [--tree DIR] [--min-ms 1.0] [--imports N] [--serial] [-- CHECK ARGS...]

Each module's import is timed by wrapping its loader (a meta-path finder in front of the others); the phases
by wrapping functions right after their module is executed, before any importer binds them. Times are ms
from the script's start (the interpreter's own start and site hooks come before; `python -X importtime` and
check_bench.py see those). Lines: start, end, duration, thread, what.

--serial runs each probe on the main thread instead of its deadline thread: threads share one interpreter lock,
so a phase timed beside another counts the other's work too; serially each phase's time is its own.
"""
from __future__ import annotations

import _thread
import os
import sys
import time

from serial_probes import plain_call

T0 = time.perf_counter()
EVENTS = []  # (start, end, thread name, depth, label, kind)
_STACKS = {}  # thread id -> stack of [name, child time] for self times
SELF = {}  # module -> (self ms, cumulative ms, thread)
MAIN = _thread.get_ident()
SERIAL = False  # --serial

# module -> function names (or "Class.method") whose calls become phases of the timeline
PHASES = {
    "cudnn_doctor.cli": ["build_app"],
    "cudnn_doctor.commands.check_run": ["_validate_policy", "_validate_skip"],
    "cudnn_doctor.diagnose": ["collect_facts", "collect_report"],
    "cudnn_doctor.probes.executor": ["run_bounded"],
    "cudnn_doctor.probes": ["Context.run_native"],
    "cudnn_doctor.native.session": ["NativeSession.start", "NativeSession.collect"],
    "cudnn_doctor.knowledge": ["load_compat"],
    "cudnn_doctor.rules": ["evaluate"],
    "cudnn_doctor.render.machine": ["emit_machine_report"],
    "cudnn_doctor.runclock": ["RunClock.finish"],
}


def _thread_name() -> str:
    ident = _thread.get_ident()
    if ident == MAIN:
        return "main"
    threading = sys.modules.get("threading")
    current = threading.current_thread() if threading else None
    return current.name if current is not None else str(ident)


def _now() -> float:
    return (time.perf_counter() - T0) * 1000


def _phase(label: str, fn):
    def timed(*args, **kwargs):
        what = label
        if label.endswith("run_bounded") and len(args) > 1:
            what = "probe %s" % args[1]  # run_bounded(facts, name, fn, deadline)
        start = _now()
        try:
            return fn(*args, **kwargs)
        finally:
            EVENTS.append((start, _now(), _thread_name(), 0, what, "phase"))
    timed.__wrapped__ = fn
    return timed


def _serialise(module) -> None:
    """--serial: the probes' deadline threads become plain calls on the main thread."""
    if module.__name__ == "cudnn_doctor.probes.executor":
        module.run_bounded = plain_call


def _wrap_phases(module) -> None:
    if SERIAL:
        _serialise(module)
    for dotted in PHASES.get(module.__name__, ()):
        owner, _, attr = dotted.rpartition(".")
        target = getattr(module, owner) if owner else module
        fn = getattr(target, attr, None)
        if fn is not None:
            setattr(target, attr, _phase(dotted, fn))


class _TimedLoader:
    """Delegates to the real loader; times exec_module and wraps phase functions when it ends."""

    def __init__(self, loader, name: str) -> None:
        self._loader, self._name = loader, name

    def __getattr__(self, attr):
        return getattr(self._loader, attr)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        stack = _STACKS.setdefault(_thread.get_ident(), [])
        frame = [self._name, 0.0]
        stack.append(frame)
        start = _now()
        try:
            self._loader.exec_module(module)
        finally:
            end = _now()
            stack.pop()
            if stack:
                stack[-1][1] += end - start
            SELF[self._name] = (end - start - frame[1], end - start, _thread_name())
            EVENTS.append((start, end, _thread_name(), len(stack), "import " + self._name, "import"))
        _wrap_phases(module)


class _TimingFinder:
    def find_spec(self, name, path=None, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _TimedLoader(spec.loader, name)
        return spec


def _args(argv):
    opts = {"tree": None, "min_ms": 1.0, "imports": 15, "serial": False}
    rest = ["check", "--json"]
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], ["check"] + argv[i + 1:]
    it = iter(argv)
    for arg in it:
        if arg == "--tree":
            opts["tree"] = next(it)
        elif arg == "--min-ms":
            opts["min_ms"] = float(next(it))
        elif arg == "--imports":
            opts["imports"] = int(next(it))
        elif arg == "--serial":
            opts["serial"] = True
        else:
            sys.exit("usage: check_timeline.py [--tree DIR] [--min-ms MS] [--imports N] [--serial] [-- CHECK ARGS]")
    return opts, rest


def run(rest) -> int:
    sys.meta_path.insert(0, _TimingFinder())
    devnull = open(os.devnull, "w")
    real_stdout, sys.stdout = sys.stdout, devnull
    code = 0
    try:
        start = _now()
        from cudnn_doctor import cli  # what the console script imports
        EVENTS.append((start, _now(), "main", 0, "import cudnn_doctor.cli (total)", "phase"))
        cli.main(rest)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        EVENTS.append((_now(), _now(), "main", 0, "exit (code %s)" % code, "phase"))
        sys.stdout = real_stdout
        devnull.close()
    return code


def report(min_ms: float, n_imports: int) -> None:
    out = sys.stdout.write
    out("%8s %8s %7s  %-18s %s\n" % ("start", "end", "ms", "thread", "what"))
    for start, end, thread, depth, label, kind in sorted(EVENTS, key=lambda e: (e[0], -e[1])):
        if kind == "import" and (end - start < min_ms or depth > 1):
            continue
        out("%8.1f %8.1f %7.1f  %-18s %s%s\n" % (start, end, end - start, thread[:18], "  " * depth, label))
    out("\nslowest imports by self time (ms): self, cumulative, thread\n")
    for name, (own, cum, thread) in sorted(SELF.items(), key=lambda kv: -kv[1][0])[:n_imports]:
        out("%7.1f %7.1f  %-12s %s\n" % (own, cum, thread[:12], name))
    main_imports = sum(e[1] - e[0] for e in EVENTS if e[4].startswith("import ") and e[2] == "main"
                       and e[3] == 0 and e[5] == "import")
    end = max(e[1] for e in EVENTS)
    out("\nmain thread: %.1f ms in all; %.1f ms of it in imports made on it (outermost only)\n" % (end, main_imports))


def main() -> None:
    global SERIAL
    opts, rest = _args(sys.argv[1:])
    SERIAL = opts["serial"]
    if opts["tree"]:
        sys.path.insert(0, os.path.abspath(opts["tree"]))
    code = run(rest)
    report(opts["min_ms"], opts["imports"])
    sys.stdout.write("exit code %s\n" % code)


if __name__ == "__main__":
    main()
