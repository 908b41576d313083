"""Bench child: times the seed network and convolution layers through cuDNN, plain CUDA (NVRTC) and reports them.

Speaks native/child.py's protocol (a JSON task list on stdin, one result line per task on stdout) so
Host.run_native (native/runner.py) can cut it off after a crash or hang. Standard library (+ pynvml when present) only;
its siblings and smoke's bindings are imported by file location. Progress goes to task["progress"] as JSON.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "smoke"))

import api  # noqa: E402  (bench's bindings, built on smoke's)
import graph_api  # noqa: E402  (cuDNN's backend API: the engines frameworks reach)
import refcheck as rc  # noqa: E402
import child as smoke_child  # noqa: E402  (smoke's driver start-up and helpers)
from child_common import DIRECTIONS, ConvOp, Progress, Session, _algo_name, _now, _perf_list, choose  # noqa: E402,F401
from seed_child import _seed  # noqa: E402
from nvml_state import nvml_facts  # noqa: E402  (clocks, power and throttling while timing)



class Contender:
    """One way cuDNN can run this convolution, timed: a legacy algorithm or a backend-API engine."""

    def __init__(self, name, math, workspace, call, ms, how, quick_ms=None):
        self.name, self.math, self.workspace, self.call = name, math, workspace, call
        self.ms, self.how, self.quick_ms = ms, how, quick_ms

    def summary(self):
        return {"algo": self.name, "math": self.math, "time_ms": self.ms, "workspace": self.workspace}


FIND_SLOWER = 5.0  # a Find result this many times slower than its fastest (and 1 ms more) is not re-timed


def legacy_contenders(sess, op, direction, workspace, ws_limit, target_ms, candidates=3):
    """cudnnFind*Ex, then its few fastest re-timed the way the winner will be (Find's own ranking can be off by a
    wide margin: an algorithm it timed fast can run 20x slower in a loop). Returns (contenders, Find's list,
    what the search cost)."""
    dnn = sess.dnn
    started = _now()
    dnn.set_math(op, api.MATH[op.dtype])  # search under the data type's own math type
    perfs = [p for p in dnn.find(sess.handle, direction, op, workspace, ws_limit) if p.status == 0]
    stats = {"find_ms": round((_now() - started) * 1000.0, 1)}
    out = []
    for perf in perfs[:candidates]:
        if out and perf.time > FIND_SLOWER * perfs[0].time + 1.0:
            break  # Find's ranking errs by a few times, not by this much: re-timing it would cost, not change
        algo, math_type, ws_bytes = choose(dnn, sess.handle, direction, op, perf)
        if ws_bytes > ws_limit:
            continue

        def call(a=algo, m=math_type, w=ws_bytes):
            dnn.set_math(op, m)
            dnn.run(sess.handle, direction, op, a, workspace, w)
        ms, how = sess.timed(call, target_ms / 2.0)
        out.append(Contender(_algo_name(direction, algo), math_type, ws_bytes, call, ms, how))
    stats["ms"] = round((_now() - started) * 1000.0, 1)
    return out, perfs, stats


COLD_START_MS = 5.0  # what loading an engine's kernels can add to its first run


def graph_contenders(sess, op, direction, fmt, workspace, ws_limit, target_ms, keep=2):
    """The backend API's engines for this convolution (those torch's cudnn.benchmark would try): every plan that
    builds is run once and timed, the ``keep`` fastest are re-timed as the legacy ones are. Also returns the
    fastest engine that needs no workspace (from the single timings) and what the search cost."""
    clock = [_now()]
    stats = {}

    def lap(name):
        now = _now()
        stats[name + "_ms"] = round(stats.get(name + "_ms", 0.0) + (now - clock[0]) * 1000.0, 1)
        clock[0] = now

    conv = graph_api.GraphConv(sess.dnn, sess.handle, op, direction, fmt)
    sess.graph_convs.append(conv)  # closed once the direction's winner is checked (or by the session, on error)
    offered = conv.engines(lambda e: graph_api.usable(e, op.dtype) and (sess.graph_compile or not e.compiles),
                           most=sess.graph_engines)
    lap("heuristics")
    quick = []
    for engine in offered:
        built = conv.build(engine)
        lap("build")
        if not built or engine.workspace > ws_limit:
            continue

        def call(e=engine):
            conv.execute(e, workspace)
        try:
            # The first run also loads the engine's kernels, so only a run far slower than the best so far is
            # final; any other is run again, warm. Slow engines (tens of ms on a large layer) run once.
            ms = sess.once(call)
            best = min((q[0] for q in quick), default=None)
            if best is None or ms < 4.0 * best + COLD_START_MS:
                ms = sess.once(call)
            quick.append((ms, engine, call))
        except api.ApiError:
            pass  # an engine that builds but will not run here is no contender
        lap("first_run")
    quick.sort(key=lambda t: t[0])
    out = []
    for once_ms, engine, call in quick[:keep]:
        ms, how = sess.timed(call, target_ms / 2.0, sticky=False)
        out.append(Contender(engine.name, None, engine.workspace, call, ms, how, quick_ms=once_ms))
    lap("timing")
    no_ws = next(((ms, e) for ms, e, _ in quick if e.workspace == 0), None)
    stats.update(offered=len(offered), ran=len(quick), compiled=sum(e.compiles for e in offered))
    return out, no_ws, stats


class Search:
    """What one layout's search found: its contenders, cuDNN's Find list, what it cost."""

    def __init__(self, op, fmt):
        self.op, self.fmt = op, fmt
        self.contenders, self.perfs, self.graph_no_ws, self.notes = [], [], None, {}


def search_layout(sess, op, fmt, direction, workspace, ws_limit, target_ms, legacy=True):
    """Time cuDNN's candidates for one direction in one layout, through the legacy API and the backend API."""
    found = Search(op, fmt)
    if legacy:
        found.contenders, found.perfs, found.notes["legacy"] = legacy_contenders(sess, op, direction, workspace,
                                                                                 ws_limit, target_ms)
    if sess.graph_api:
        try:
            more, found.graph_no_ws, found.notes["graph"] = graph_contenders(sess, op, direction, fmt, workspace,
                                                                             ws_limit, target_ms)
            found.contenders += more
        except api.ApiError as exc:  # the graph could not be described here: the legacy algorithms stand alone
            found.notes["graph_error"] = exc.to_dict()
    if not found.contenders:
        func = sess.dnn._FIND[direction] if legacy else "cudnnBackendFinalize"
        found.notes["error"] = {"api": "cudnn", "func": func, "message": "no algorithm succeeded"}
    return found


def bench_direction(sess, ops, direction, ins, workspace, ws_limit, target_ms, seed, legacy_fmts):
    """Search every layout, check the fastest contender of all against the CPU (once: a reference sum can take
    a fifth of a second), and give the fastest way with no workspace (DL4J's NO_WORKSPACE) and its slowdown."""
    started, searches = _now(), []
    try:
        for fmt, op in ops:
            if fmt not in legacy_fmts and not sess.graph_api:
                continue
            try:
                searches.append(search_layout(sess, op, fmt, direction, workspace, ws_limit, target_ms,
                                              legacy=fmt in legacy_fmts))
            except api.ApiError as exc:
                searches.append(Search(op, fmt))
                searches[-1].notes["error"] = exc.to_dict()
        ranked = [(c, found) for found in searches for c in found.contenders]
        if not ranked:
            failed = next((f for f in searches if "error" in f.notes), None)
            return {"error": failed.notes["error"] if failed else {"api": "cudnn", "message": "nothing to try"}}
        best, where = min(ranked, key=lambda pair: pair[0].ms)
        out_ptr, count = where.op.output(direction)
        sess.poison(out_ptr, count * api.ELEMENT_BYTES[where.op.dtype])
        best.call()
        sess.driver.stream_sync(sess.stream)
        checked_at = _now()
        check = rc.check_conv(where.op.g, direction, ins, sess.fetcher(out_ptr, where.op.dtype), where.op.dtype,
                              seed)
        check["ms"] = round((_now() - checked_at) * 1000.0, 1)
    finally:
        closed_at = _now()
        sess.close_graph_convs()  # plans hold their kernels; a run makes hundreds of them
        closed_ms = round((_now() - closed_at) * 1000.0, 1)
    res = dict(where.notes, algo=best.name, math=best.math, workspace=best.workspace, time_ms=best.ms,
               timing=best.how, check=check, layout=LAYOUT_NAMES[where.fmt],
               find=_perf_list(direction, where.perfs),
               candidates=[dict(c.summary(), layout=LAYOUT_NAMES[f.fmt]) for f in searches for c in f.contenders])
    res["no_workspace"] = no_workspace(direction, best, searches)
    res["spent_ms"] = round((_now() - started) * 1000.0, 1)  # the whole search, every layout
    res["close_ms"] = closed_ms
    return res


def no_workspace(direction, best, searches):
    """The fastest way to run with no workspace and its slowdown against ``best``. Legacy algorithms are scaled
    from cuDNN's own Find timings (it timed every one on these buffers); engines from their single timing."""
    if best.workspace == 0:
        return {"algo": best.name, "slowdown": 1.0, "time_ms": best.ms}
    options = []
    for found in searches:
        legacy_best = min((c for c in found.contenders if c.quick_ms is None), key=lambda c: c.ms, default=None)
        perfs = found.perfs
        free = next((p for p in perfs if p.memory == 0), None)
        if free is not None and perfs[0].time > 0 and legacy_best is not None:
            options.append((legacy_best.ms * free.time / perfs[0].time, _algo_name(direction, free.algo), free.time))
        if found.graph_no_ws is not None:
            options.append((found.graph_no_ws[0], found.graph_no_ws[1].name, None))
    if not options:
        return None
    ms, name, find_ms = min(options, key=lambda o: o[0])
    out = {"algo": name, "slowdown": max(1.0, ms / best.ms) if best.ms > 0 else 1.0}
    out["time_ms"] = best.ms * out["slowdown"]
    if find_ms is not None:
        out["find_ms"] = find_ms
    return out


LAYOUT_NAMES = {rc.NCHW: "NCHW", rc.NHWC: "NHWC"}


def _cc_tuple(text):
    """'8.6' -> (8, 6); None when unknown."""
    try:
        return tuple(int(p) for p in str(text).split("."))
    except (TypeError, ValueError):
        return None


def layouts(dtype, direction=None, graph=False):
    """Where the legacy algorithms are searched. Tensor-core types run NHWC, their native layout (torch's
    channels_last). Strict float32 has no such preference: on the H100 its fastest legacy algorithms were NCHW
    (Winograd, FFT) for every ResNet-50 layer but backward-filter, which went either way, so without the backend
    API that direction tries both. Backend-API engines are tried in every layout of layouts(dtype) (both for
    strict float32), and they cover backward-filter in NHWC."""
    if dtype != "fp32":
        return [rc.NHWC]
    return [rc.NCHW, rc.NHWC] if direction is None or (direction == "bwd_filter" and not graph) else [rc.NCHW]


def bench_layers(sess, task, progress, deadline, res):
    """Every requested shape × data type × direction, in the layouts of layouts(dtype)."""
    layers = task["layers"]
    dtypes = task["dtypes"]
    directions = task.get("directions") or list(DIRECTIONS)
    target_ms = float(task.get("target_ms", 20.0))
    geoms = [rc.Conv(l["n"], l["c"], l["h"], l["w"], l["k"], l["r"], l["s"], l["stride"], l["pad"], rc.NCHW)
             for l in layers]
    xmost = max(g.n * g.c * g.h * g.w for g in geoms)
    ymost = max(g.n * g.k * g.p * g.q for g in geoms)
    wmost = max(g.k * g.c * g.r * g.s for g in geoms)
    counts = {"x": xmost, "dx": xmost, "y": ymost, "dy": ymost, "w": wmost, "dw": wmost}
    bufs = {k: sess.alloc(v * 4) for k, v in counts.items()}
    free, _ = sess.driver.mem_info()
    ws_limit = int(min(task.get("workspace_limit") or (4 << 30), free // 2))
    workspace = sess.alloc(ws_limit) if ws_limit else 0
    res["workspace_limit"] = ws_limit
    rows = res.setdefault("layers", [])
    cc = _cc_tuple(res["device"].get("cc"))
    for dtype in dtypes:
        need = (task.get("dtype_min_cc") or {}).get(dtype)
        if need and cc and cc < _cc_tuple(need):
            for layer in layers:
                rows.append({"layer": layer["name"], "dtype": dtype,
                             "skipped": "%s needs compute capability %s or newer" % (dtype.upper(), need)})
            progress("%s unsupported here" % dtype, advance=len(layers) * len(directions))
            continue
        pats = {k: rc.Pattern(dtype, seed) for k, seed in (("x", 11), ("w", 12), ("dy", 13))}
        for key in pats:
            sess.fill(bufs[key], pats[key], counts[key])
        fmts = layouts(dtype)
        for li, (layer, g0) in enumerate(zip(layers, geoms)):
            row = {"layer": layer["name"], "dtype": dtype, "layout": "/".join(LAYOUT_NAMES[f] for f in fmts)}
            rows.append(row)
            if _now() > deadline:
                row["skipped"] = "time budget"
                progress("skipped %s %s" % (layer["name"], dtype), advance=len(directions))
                continue
            ops = []
            for fmt in fmts:
                g = rc.Conv(g0.n, g0.c, g0.h, g0.w, g0.k, g0.r, g0.s, g0.stride, g0.pad, fmt)
                try:
                    ops.append((fmt, ConvOp(sess, g, dtype, fmt, bufs)))
                except api.ApiError as exc:
                    row["error"] = exc.to_dict()
            if not ops:
                progress("%s %s unsupported" % (layer["name"], dtype), advance=len(directions))
                continue
            row.pop("error", None)
            ins = {"fwd": (pats["x"], pats["w"]), "bwd_data": (pats["dy"], pats["w"]),
                   "bwd_filter": (pats["x"], pats["dy"])}
            for direction in directions:
                progress("%s %s %s" % (layer["name"], dtype, direction))
                legacy_fmts = ([f for f, _ in ops if f in layouts(dtype, direction, sess.graph_api)]
                               or [f for f, _ in ops])
                row[direction] = bench_direction(sess, ops, direction, ins[direction], workspace, ws_limit,
                                                 target_ms, seed=li * 7 + len(rows), legacy_fmts=legacy_fmts)
                progress("%s %s %s" % (layer["name"], dtype, direction), advance=1)



# --- the task ----------------------------------------------------------------------------------------------

def op_bench(task, progress):
    started = _now()
    deadline = started + float(task.get("budget_s", 50.0))
    res = {"library": task["lib"], "device": {"index": int(task.get("device", 0))}, "timings": {}}
    progress.known = res
    progress.total = int(task.get("total_steps", 0))
    driver = None
    orig = api.base.Driver
    api.base.Driver = api.Driver  # smoke's start-up builds our richer Driver
    try:
        driver, error = smoke_child._open_driver(task, res, progress)
    finally:
        api.base.Driver = orig
    if error is not None:
        res["error"] = error
        return res
    dev = res["device"]["handle"]
    try:
        res["device"]["sm_count"] = driver.attribute(api.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
        free, total = driver.mem_info()
        res["device"]["memory_free"], res["device"]["memory_total"] = free, total
    except (api.ApiError, api.MissingSymbol) as exc:
        res["device"]["attribute_error"] = str(exc)
    progress("NVML")
    res["nvml"] = nvml_facts(int(task.get("device", 0)))
    progress("load cuDNN")
    sess = None
    try:
        dnn = api.Cudnn(task["lib"])
        res["version"] = dnn.version()
        progress("cudnnCreate")
        sess = Session(driver, dnn, dev)
        sess.min_iters = int(task.get("min_iters", 3))
        # The backend API (cuDNN 8+): the engines torch's cudnn.benchmark reaches, beside the legacy algorithms.
        sess.graph_api = bool(task.get("graph_api", True)) and graph_api.available(dnn)
        sess.graph_engines = int(task.get("graph_engines", 10))
        sess.graph_compile = bool(task.get("graph_compile", True))
        res["graph_api"] = sess.graph_api
        res["timings"]["start_ms"] = smoke_child._ms(started)
        if task.get("seed", True):
            _seed(sess, task, res, progress)
            res["timings"]["seed_ms"] = smoke_child._ms(started)
        if task.get("layers"):
            bench_layers(sess, task, progress, deadline, res)
            res["timings"]["layers_ms"] = smoke_child._ms(started)
        res["capture_error"] = sess.capture_error
    except OSError as exc:
        res["error"] = {"api": "loader", "func": "dlopen", "message": str(exc)}
    except api.ApiError as exc:
        res["error"] = exc.to_dict()
        res["error"]["stage"] = progress.stage
    except api.MissingSymbol as exc:
        res["error"] = {"api": "symbol", "func": str(exc), "stage": progress.stage}
    finally:
        progress("cleanup")
        if sess is not None:
            sess.close()
        smoke_child._quietly(driver.release_primary_context, res["device"].pop("handle", 0))
        res["timings"]["total_ms"] = smoke_child._ms(started)
    return res




def main():
    smoke_child.serve(op_bench, Progress)


if __name__ == "__main__":
    main()
