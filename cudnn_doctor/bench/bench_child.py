"""Bench child: times the seed network and convolution layers through cuDNN, plain CUDA (NVRTC) and reports them.

Speaks native/child.py's protocol (a JSON task list on stdin, one result line per task on stdout) so
native.runner.run_native can cut it off after a crash or hang. Standard library (+ pynvml when present) only;
its siblings and smoke's bindings are imported by file location. Progress goes to task["progress"] as JSON.
"""
import ctypes
import json
import os
import sys
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "smoke"))

import api  # noqa: E402  (bench's bindings, built on smoke's)
import kernels  # noqa: E402
import refcheck as rc  # noqa: E402
import child as smoke_child  # noqa: E402  (smoke's driver start-up and helpers)

DIRECTIONS = ("fwd", "bwd_data", "bwd_filter")


def _now():
    return time.perf_counter()


class Progress:
    """Stage, step counts and what is known so far, where the parent (and a crash report) can read them."""

    def __init__(self, path):
        self.path, self.stage, self.known, self.done, self.total = path, None, {}, 0, 0

    def __call__(self, stage, advance=0):
        self.stage = stage
        self.done += advance
        if self.path:
            tmp = self.path + ".tmp"
            with open(tmp, "w") as fh:
                json.dump({"stage": stage, "done": self.done, "total": self.total, "known": self.known}, fh)
            os.replace(tmp, self.path)


class Session:
    """Driver, cuDNN handle on its own stream, timing events and every allocation, freed however the run ends."""

    def __init__(self, driver, dnn, dev):
        self.driver, self.dnn, self.dev = driver, dnn, dev
        self.buffers, self.descs, self.graphs = [], [], []
        self.stream = driver.stream()
        self.handle = dnn.create()
        dnn.set_stream(self.handle, self.stream)
        self.ev0, self.ev1 = driver.event(), driver.event()
        self.capture_error = None
        self.min_iters = 3

    def alloc(self, nbytes):
        ptr = self.driver.alloc(max(1, nbytes))
        self.buffers.append(ptr)
        return ptr

    def release(self, ptr):
        if ptr in self.buffers:
            self.buffers.remove(ptr)
            smoke_child._quietly(self.driver.free, ptr)

    def desc(self, kind, value):
        self.descs.append((kind, value))
        return value

    def fill(self, ptr, pattern, count):
        """Tile pattern over count elements: one upload, then device copies that double the filled part."""
        raw = pattern.raw()
        size = len(raw) // len(pattern.values)
        total = count * size
        first = min(len(raw), total)
        buf = ctypes.create_string_buffer(raw[:first], first)
        self.driver.to_device(ptr, buf, first)
        done = first
        while done < total:
            n = min(done, total - done)
            self.driver.copy(ptr + done, ptr, n)
            done += n

    def poison(self, ptr, nbytes):
        self.driver.synchronize()
        self.driver.fill_bytes(ptr, 0xFF, nbytes)  # NaN in every float type: an unwritten output cannot pass

    def fetcher(self, ptr, dtype):
        """fetch(i) -> element i of a device tensor, one small copy each (only sampled elements are read)."""
        size = api.ELEMENT_BYTES[dtype]
        buf = ctypes.create_string_buffer(size)

        def fetch(i):
            self.driver.to_host(buf, ptr + i * size, size)
            return rc.decode(dtype, buf.raw)
        return fetch

    def download(self, ptr, count):
        out = array("f", bytes(count * 4))
        self.driver.to_host(out.buffer_info()[0], ptr, count * 4)
        return out

    def timed(self, enqueue, target_ms, most=100):
        """(milliseconds per call, how): the calls captured in a CUDA graph when the driver allows, so the
        GPU's time is measured rather than Python's call overhead; a plain timed loop otherwise."""
        d = self.driver
        d.record(self.ev0, self.stream)
        enqueue()
        d.record(self.ev1, self.stream)
        single = max(d.elapsed_ms(self.ev0, self.ev1), 1e-3)
        iters = int(max(self.min_iters, min(most, target_ms / single)))
        if self.capture_error is None:
            try:
                d.begin_capture(self.stream)
                try:
                    for _ in range(iters):
                        enqueue()
                finally:
                    exe = d.end_capture(self.stream)
                self.graphs.append(exe)
                d.launch_graph(exe, self.stream)  # warm: uploads the graph
                d.record(self.ev0, self.stream)
                d.launch_graph(exe, self.stream)
                d.record(self.ev1, self.stream)
                ms = d.elapsed_ms(self.ev0, self.ev1) / iters
                self.graphs.remove(exe)
                smoke_child._quietly(d.destroy_graph, exe)
                return ms, "graph"
            except (api.ApiError, api.MissingSymbol) as exc:
                self.capture_error = str(exc)  # not capturable here: time a loop from now on
                smoke_child._quietly(d.synchronize)
        d.record(self.ev0, self.stream)
        for _ in range(iters):
            enqueue()
        d.record(self.ev1, self.stream)
        return d.elapsed_ms(self.ev0, self.ev1) / iters, "loop"

    def close(self):
        for exe in self.graphs:
            smoke_child._quietly(self.driver.destroy_graph, exe)
        for kind, value in reversed(self.descs):
            smoke_child._quietly(self.dnn.free_other, kind, value)
        if self.handle:
            smoke_child._quietly(self.dnn.destroy, self.handle)
        for ptr in self.buffers:
            smoke_child._quietly(self.driver.free, ptr)


class ConvOp:
    """Descriptors and buffers of one convolution, in the names cudnn's calls use."""

    def __init__(self, sess, g, dtype, fmt, bufs):
        dnn = sess.dnn
        self.g, self.dtype = g, dtype
        self.xd = sess.desc("Tensor", dnn.tensor_of(dtype, fmt, g.n, g.c, g.h, g.w))
        self.wd = sess.desc("Filter", dnn.filter_of(dtype, fmt, g.k, g.c, g.r, g.s))
        self.math = api.MATH[dtype]
        self.cd = sess.desc("Convolution", dnn.conv_of(g.pad, g.stride, self.math))
        self.yd = sess.desc("Tensor", dnn.tensor_of(dtype, fmt, g.n, g.k, g.p, g.q))
        self.x, self.w, self.y, self.dy, self.dx, self.dw = (bufs[k] for k in ("x", "w", "y", "dy", "dx", "dw"))

    def output(self, direction):
        g = self.g
        count = {"fwd": g.n * g.k * g.p * g.q, "bwd_data": g.n * g.c * g.h * g.w,
                 "bwd_filter": g.k * g.c * g.r * g.s}[direction]
        return {"fwd": self.y, "bwd_data": self.dx, "bwd_filter": self.dw}[direction], count


def _algo_name(direction, algo):
    names = api.ALGOS[direction]
    return names[algo] if 0 <= algo < len(names) else str(algo)


def _perf_list(direction, perfs):
    return [{"algo": _algo_name(direction, p.algo), "id": p.algo, "time_ms": round(p.time, 4), "workspace": p.memory,
             "math": p.mathType} for p in perfs if p.status == 0]


def choose(dnn, handle, direction, op, perfs):
    """(algo, math type, workspace) of a Find result, with the workspace cuDNN really asks for at that math type
    (Find's own figure can be short of it)."""
    dnn.set_math(op, perfs.mathType)
    need = dnn.workspace_for(handle, direction, op, perfs.algo)
    return perfs.algo, perfs.mathType, max(need, perfs.memory)


def bench_direction(sess, op, direction, ins, workspace, ws_limit, target_ms, seed, candidates=3):
    """Find, time cuDNN's few fastest candidates ourselves (Find's own ranking can be off by a wide margin for
    some shapes), check the winner's result against the CPU. The fastest algorithm without workspace and its
    slowdown come from the same Find: cuDNN timed every algorithm on these very buffers."""
    dnn = sess.dnn
    dnn.set_math(op, api.MATH[op.dtype])  # search under the data type's own math type
    perfs = [p for p in dnn.find(sess.handle, direction, op, workspace, ws_limit) if p.status == 0]
    if not perfs:
        return {"error": {"api": "cudnn", "func": dnn._FIND[direction], "message": "no algorithm succeeded"}}
    timed = []
    # Find's own ranking can be off by a wide margin (an algorithm it timed fast can run 20x slower in a loop):
    # its three fastest are timed here the way the winner will be, as its best can be the misjudged one.
    contenders = perfs[:candidates]
    for perf in contenders:
        algo, math_type, ws_bytes = choose(dnn, sess.handle, direction, op, perf)
        if ws_bytes > ws_limit:
            continue

        def call(a=algo, w=ws_bytes):
            dnn.run(sess.handle, direction, op, a, workspace, w)
        ms, how = sess.timed(call, target_ms / 2.0)
        timed.append((ms, how, perf, algo, math_type, ws_bytes, call))
    ms, how, best, algo, math_type, ws_bytes, call = min(timed, key=lambda t: t[0])
    dnn.set_math(op, math_type)
    out_ptr, count = op.output(direction)
    sess.poison(out_ptr, count * api.ELEMENT_BYTES[op.dtype])
    call()
    sess.driver.stream_sync(sess.stream)
    check = rc.check_conv(op.g, direction, ins, sess.fetcher(out_ptr, op.dtype), op.dtype, seed)
    res = {"algo": _algo_name(direction, algo), "math": math_type, "workspace": ws_bytes, "time_ms": ms,
           "timing": how, "check": check, "find": _perf_list(direction, perfs),
           "candidates": [{"algo": _algo_name(direction, t[3]), "math": t[4], "time_ms": t[0]} for t in timed]}
    no_ws = next((p for p in perfs if p.memory == 0), None)
    if no_ws is None:
        res["no_workspace"] = None
    elif no_ws.algo == best.algo and no_ws.mathType == best.mathType:
        res["no_workspace"] = {"algo": res["algo"], "find_ms": no_ws.time, "slowdown": 1.0, "time_ms": ms}
    else:
        slowdown = max(1.0, no_ws.time / best.time) if best.time > 0 else 1.0
        res["no_workspace"] = {"algo": _algo_name(direction, no_ws.algo), "find_ms": no_ws.time,
                               "slowdown": slowdown, "time_ms": ms * slowdown}
    return res


LAYOUT_NAMES = {rc.NCHW: "NCHW", rc.NHWC: "NHWC"}


def _cc_tuple(text):
    """'8.6' -> (8, 6); None when unknown."""
    try:
        return tuple(int(p) for p in str(text).split("."))
    except (TypeError, ValueError):
        return None


def layouts(dtype, direction=None):
    """Tensor-core types run NHWC, their native layout (torch's channels_last). Strict float32 has no such
    preference: on the H100 its fastest forward and backward-data kernels were NCHW (Winograd, FFT) for every
    ResNet-50 layer, while backward-filter went either way, so that direction tries both and keeps the faster."""
    if dtype != "fp32":
        return [rc.NHWC]
    return [rc.NCHW, rc.NHWC] if direction in (None, "bwd_filter") else [rc.NCHW]


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
                best = None
                for fmt, op in [(f, o) for f, o in ops if f in layouts(dtype, direction)] or ops:
                    try:
                        got = bench_direction(sess, op, direction, ins[direction], workspace, ws_limit, target_ms,
                                              seed=li * 7 + len(rows))
                    except api.ApiError as exc:
                        got = {"error": exc.to_dict()}
                    got["layout"] = LAYOUT_NAMES[fmt]
                    if best is None or "error" in best or ("error" not in got and got["time_ms"] < best["time_ms"]):
                        best = got
                row[direction] = best
                progress("%s %s %s" % (layer["name"], dtype, direction), advance=1)


# --- the seed network --------------------------------------------------------------------------------------

SEED_CONVS = ((3, 32, 32, 32, 1), (32, 32, 32, 32, 0), (32, 64, 15, 15, 1), (64, 64, 15, 15, 0))  # c,k,h,w,pad


class SeedNet:
    """Buffers of the seed network's training step (float32 NCHW), shared by the cuDNN and plain CUDA paths."""

    def __init__(self, sess, batch):
        self.sess, self.batch = sess, batch
        self.convs = [rc.Conv(batch, c, h, w, k, 3, 3, 1, pad, rc.NCHW) for c, k, h, w, pad in SEED_CONVS]
        self.buf = {}
        for i, g in enumerate(self.convs, 1):
            # a: conv output, r: after ReLU, da / dr: their gradients, w / dw: filters
            for name, count in (("in%d" % i, g.n * g.c * g.h * g.w), ("a%d" % i, g.n * g.k * g.p * g.q),
                                ("r%d" % i, g.n * g.k * g.p * g.q), ("da%d" % i, g.n * g.k * g.p * g.q),
                                ("dr%d" % i, g.n * g.k * g.p * g.q), ("w%d" % i, g.k * g.c * 9),
                                ("dw%d" % i, g.k * g.c * 9), ("din%d" % i, g.n * g.c * g.h * g.w)):
                self.buf[name] = (sess.alloc(count * 4), count)
        # pools: r2 (32×30×30) -> in3 (15×15), r4 (64×13×13) -> m2 (6×6); the loss gradient arrives at m2
        self.pools = [("r2", "in3", self.convs[1].ydims), ("r4", "m2", self.convs[3].ydims)]
        # one network: a layer's input is the previous ReLU's (or pool's) output, not a buffer of its own
        self.buf["in2"], self.buf["in4"] = self.buf["r1"], self.buf["r3"]
        n, k, p, q = self.convs[3].ydims
        for name in ("m2", "dm2"):
            self.buf[name] = (sess.alloc(n * k * (p // 2) * (q // 2) * 4), n * k * (p // 2) * (q // 2))
        for name, seed, scale in (("in1", 21, 1.0), ("dm2", 22, 1.0), ("w1", 23, 0.5), ("w2", 24, 0.1),
                                  ("w3", 25, 0.1), ("w4", 26, 0.05)):
            ptr, count = self.buf[name]
            sess.fill(ptr, rc.Pattern("fp32", seed, scale=scale), count)

    def steps(self):
        """The training step as (kind, args): forward through the four layers, then back."""
        s = []
        for i in (1, 2, 3, 4):
            s.append(("conv_fwd", (i, "in%d" % i, "w%d" % i, "a%d" % i)))
            s.append(("relu_fwd", ("a%d" % i, "r%d" % i)))
            if i == 2:
                s.append(("pool_fwd", (0,)))
            if i == 4:
                s.append(("pool_fwd", (1,)))
        s.append(("pool_bwd", (1, "dm2", "dr4")))
        for i in (4, 3, 2, 1):
            s.append(("relu_bwd", ("a%d" % i, "dr%d" % i, "da%d" % i)))
            s.append(("conv_bwd_filter", (i, "in%d" % i, "da%d" % i, "dw%d" % i)))
            if i > 1:  # the image's own gradient is never needed
                s.append(("conv_bwd_data", (i, "da%d" % i, "w%d" % i, "din%d" % i)))
            if i == 3:
                s.append(("pool_bwd", (0, "din3", "dr2")))
            if i in (4, 2):
                s.append(("copy", ("din%d" % i, "dr%d" % (i - 1))))
        return s

    def check(self, kind, args, seed):
        """The CPU's verdict on one step's output, from the device's own inputs to that step."""
        sess = self.sess
        get = lambda name: sess.download(*self.buf[name])  # noqa: E731
        if kind.startswith("conv_"):
            i = args[0]
            g = self.convs[i - 1]
            direction = {"conv_fwd": "fwd", "conv_bwd_data": "bwd_data", "conv_bwd_filter": "bwd_filter"}[kind]
            a, b, out = (get(n) for n in args[1:])
            return rc.check_conv(g, direction, (a, b), out.__getitem__, "fp32", seed)
        if kind == "relu_fwd":
            x, y = get(args[0]), get(args[1])
            return rc.check_elementwise(len(x), [x.__getitem__], y.__getitem__, lambda v: max(v, 0.0), seed)
        if kind == "relu_bwd":
            x, dy, dx = (get(n) for n in args)
            return rc.check_elementwise(len(x), [x.__getitem__, dy.__getitem__], dx.__getitem__,
                                        lambda v, d: d if v > 0 else 0.0, seed)
        if kind == "pool_fwd":
            src, dst, dims = self.pools[args[0]]
            x, y = get(src), get(dst)
            return rc.check_maxpool(dims, 2, x.__getitem__, y.__getitem__, seed=seed)
        if kind == "pool_bwd":
            src, dst, dims = self.pools[args[0]]
            x, dy, dx = get(src), get(args[1]), get(args[2])
            return rc.check_maxpool(dims, 2, x.__getitem__, None, fetch_dx=dx.__getitem__, dy=dy.__getitem__,
                                    seed=seed)
        return None


class CudnnPath:
    """The step through cuDNN: algorithms found once (as frameworks' benchmark mode does), then enqueued."""

    name = "cudnn"

    def __init__(self, net, workspace, ws_bytes):
        sess, dnn = net.sess, net.sess.dnn
        self.net, self.workspace, self.ws_bytes = net, workspace, ws_bytes
        self.ops, self.algos = [], {}
        for g in net.convs:
            self.ops.append(ConvOp(sess, g, "fp32", rc.NCHW, {k: 0 for k in ("x", "w", "y", "dy", "dx", "dw")}))
        self.pool = sess.desc("Pooling", dnn.pooling(2, 2))
        self.relu = sess.desc("Activation", dnn.relu())
        self.pool_desc = []
        for src, dst, (n, c, h, w) in net.pools:
            self.pool_desc.append((sess.desc("Tensor", dnn.tensor_of("fp32", rc.NCHW, n, c, h, w)),
                                   sess.desc("Tensor", dnn.tensor_of("fp32", rc.NCHW, n, c, h // 2, w // 2))))
        self.act_desc = {}

    def _bind(self, i, kind, args):
        op = self.ops[i - 1]
        b = self.net.buf
        if kind == "conv_fwd":
            op.x, op.w, op.y = (b[n][0] for n in args[1:])
        elif kind == "conv_bwd_data":
            op.dy, op.w, op.dx = (b[n][0] for n in args[1:])
        else:
            op.x, op.dy, op.dw = (b[n][0] for n in args[1:])
        return op

    def _tensor(self, name):
        """An NCHW float descriptor for an activation buffer, made once per shape."""
        count = self.net.buf[name][1]
        desc = self.act_desc.get(count)
        if desc is None:
            for g in self.net.convs:
                for dims in (g.xdims, g.ydims):
                    n, c, h, w = dims
                    if n * c * h * w == count:
                        desc = self.net.sess.desc("Tensor", self.net.sess.dnn.tensor_of("fp32", rc.NCHW, *dims))
                        self.act_desc[count] = desc
                        return desc
        return desc

    def prepare(self, kind, args):
        """Find the algorithm of a convolution step (first time only)."""
        if not kind.startswith("conv_"):
            return
        direction = kind[5:]
        op = self._bind(args[0], kind, args)
        key = (args[0], direction)
        if key not in self.algos:
            sess = self.net.sess
            sess.dnn.set_math(op, api.MATH["fp32"])
            perfs = [p for p in sess.dnn.find(sess.handle, direction, op, self.workspace, self.ws_bytes)
                     if p.status == 0]
            if not perfs:
                raise api.ApiError("cudnn", sess.dnn._FIND[direction], -1, "no algorithm succeeded")
            self.algos[key] = choose(sess.dnn, sess.handle, direction, op, perfs[0])

    def enqueue(self, kind, args):
        sess, dnn, b = self.net.sess, self.net.sess.dnn, self.net.buf
        h = sess.handle
        if kind.startswith("conv_"):
            op = self._bind(args[0], kind, args)
            algo, math_type, ws = self.algos[(args[0], kind[5:])]
            dnn.set_math(op, math_type)
            dnn.run(h, kind[5:], op, algo, self.workspace, ws)
        elif kind == "relu_fwd":
            dnn.relu_forward(h, self.relu, self._tensor(args[0]), b[args[0]][0], b[args[1]][0])
        elif kind == "relu_bwd":
            x, dy, dx = (b[n][0] for n in args)
            # cuDNN's ReLU backward reads y; where x > 0, y == x, and elsewhere both give a zero gradient
            dnn.relu_backward(h, self.relu, self._tensor(args[0]), x, dy, x, dx)
        elif kind == "pool_fwd":
            src, dst, _ = self.net.pools[args[0]]
            xd, yd = self.pool_desc[args[0]]
            dnn.pool_forward(h, self.pool, xd, b[src][0], yd, b[dst][0])
        elif kind == "pool_bwd":
            src, dst, _ = self.net.pools[args[0]]
            xd, yd = self.pool_desc[args[0]]
            dnn.pool_backward(h, self.pool, yd, b[dst][0], b[args[1]][0], xd, b[src][0], b[args[2]][0])
        elif kind == "copy":
            sess.driver.copy_async(b[args[1]][0], b[args[0]][0], b[args[1]][1] * 4, sess.stream)


class PlainPath:
    """The step as NVRTC-compiled direct loops: the GPU without cuDNN."""

    name = "gpu_plain"

    def __init__(self, net, nvrtc, cc):
        sess = net.sess
        self.net = net
        ptx = nvrtc.compile(kernels.SOURCE, "bench_kernels.cu", cc.replace(".", ""))
        self.module = sess.driver.load_module(ptx)
        self.fns = {k: sess.driver.function(self.module, k) for k in kernels.KERNELS}

    def prepare(self, kind, args):
        pass

    def _launch(self, name, count, args):
        block = 256
        self.net.sess.driver.launch(self.fns[name], (count + block - 1) // block, block, self.net.sess.stream, args)

    def enqueue(self, kind, args):
        b = self.net.buf
        I, L, V = ctypes.c_int, ctypes.c_long, ctypes.c_void_p
        if kind.startswith("conv_"):
            g = self.net.convs[args[0] - 1]
            ptrs = [V(b[n][0]) for n in args[1:]]
            geo = [I(v) for v in (g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.p, g.q, g.stride, g.pad)]
            count = {"conv_fwd": g.n * g.k * g.p * g.q, "conv_bwd_data": g.n * g.c * g.h * g.w,
                     "conv_bwd_filter": g.k * g.c * g.r * g.s}[kind]
            self._launch(kind, count, ptrs + geo)
        elif kind == "relu_fwd":
            count = b[args[0]][1]
            self._launch("relu_fwd", count, [V(b[args[0]][0]), V(b[args[1]][0]), L(count)])
        elif kind == "relu_bwd":
            count = b[args[0]][1]
            self._launch("relu_bwd", count, [V(b[n][0]) for n in args] + [L(count)])
        elif kind in ("pool_fwd", "pool_bwd"):
            src, dst, (n, c, h, w) = self.net.pools[args[0]]
            dims = [I(v) for v in (n, c, h, w, 2)]
            if kind == "pool_fwd":
                self._launch("pool_fwd", n * c * (h // 2) * (w // 2), [V(b[src][0]), V(b[dst][0])] + dims)
            else:
                self._launch("pool_bwd", n * c * h * w, [V(b[src][0]), V(b[args[1]][0]), V(b[args[2]][0])] + dims)
        elif kind == "copy":
            self.net.sess.driver.copy_async(b[args[1]][0], b[args[0]][0], b[args[1]][1] * 4, self.net.sess.stream)


def run_seed(path, net, target_ms, progress):
    """First step op by op, each checked against the CPU; then the whole step timed."""
    sess = net.sess
    checks = []
    steps = net.steps()
    for i, (kind, args) in enumerate(steps):
        progress("seed %s: %s" % (path.name, kind))
        path.prepare(kind, args)
        path.enqueue(kind, args)
        sess.driver.stream_sync(sess.stream)
        result = net.check(kind, args, seed=100 + i)
        if result is not None:
            result["op"] = "%s %s" % (kind, args[0] if isinstance(args[0], int) else "")
            checks.append(result)

    def step():
        for kind, args in steps:
            path.enqueue(kind, args)
    ms, how = sess.timed(step, target_ms, most=50)
    return {"step_ms": ms, "timing": how, "checks": checks, "ok": all(c["ok"] for c in checks),
            "ops": len(steps)}


# --- NVML facts ---------------------------------------------------------------------------------------------

THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                 0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
                 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}


def nvml_facts(index, pci_bus=None):
    """Clocks, power limit, throttle reasons and PCIe link from NVML; {"error": ...} when it cannot answer."""
    try:
        import pynvml as nv
    except ImportError as exc:
        return {"error": "pynvml: %s" % exc}
    out = {}
    try:
        nv.nvmlInit()
    except Exception as exc:
        return {"error": str(exc)}
    try:
        h = nv.nvmlDeviceGetHandleByPciBusId(pci_bus) if pci_bus else nv.nvmlDeviceGetHandleByIndex(index)
        calls = {
            "sm_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            "sm_clock_max_mhz": lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            "power_limit_w": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
            "power_default_limit_w": lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0,
            "power_w": lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "temperature_c": lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            "throttle_mask": lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h),
            "pcie_gen": lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h),
            "pcie_gen_max": lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h),
            "pcie_width": lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h),
            "pcie_width_max": lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h),
            "gpu_max_pcie_gen": lambda: nv.nvmlDeviceGetGpuMaxPcieLinkGeneration(h),
        }
        for key, call in calls.items():
            try:
                out[key] = call()
            except Exception as exc:  # a call this driver or board lacks: record it and go on
                out.setdefault("unavailable", {})[key] = str(exc)
        mask = out.get("throttle_mask")
        if isinstance(mask, int):
            out["throttle_reasons"] = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    except Exception as exc:
        out["error"] = str(exc)
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass
    return out


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


def _seed(sess, task, res, progress):
    batch = int(task.get("seed_batch", 32))
    target = float(task.get("seed_target_ms", 30.0))
    net = SeedNet(sess, batch)
    seed = res["seed"] = {"batch": batch}
    ws_bytes = 256 << 20
    workspace = sess.alloc(ws_bytes)
    t0 = _now()
    seed["cudnn"] = run_seed(CudnnPath(net, workspace, ws_bytes), net, target, progress)
    seed["cudnn"]["wall_ms"] = smoke_child._ms(t0)
    progress("seed cuDNN", advance=1)
    t0 = _now()
    lib = task.get("nvrtc_lib")
    if not lib:
        seed["gpu_plain"] = {"skipped": "libnvrtc not found"}
    else:
        try:
            seed["gpu_plain"] = run_seed(PlainPath(net, api.Nvrtc(lib), res["device"]["cc"]), net, target, progress)
        except OSError as exc:
            seed["gpu_plain"] = {"error": {"api": "loader", "func": "dlopen", "message": str(exc)}}
        except (api.ApiError, api.MissingSymbol) as exc:
            seed["gpu_plain"] = {"error": exc.to_dict() if isinstance(exc, api.ApiError) else {"func": str(exc)}}
    if isinstance(seed.get("gpu_plain"), dict):
        seed["gpu_plain"]["wall_ms"] = smoke_child._ms(t0)
    progress("seed plain CUDA", advance=1)
    sess.release(workspace)


def main():
    tasks = json.loads(sys.stdin.read() or "[]")
    for index, task in enumerate(tasks):
        smoke_child._emit({"task": index, "state": "start"})
        progress = Progress(task.get("progress"))
        try:
            result = op_bench(task, progress)
        except Exception as exc:
            result = {"error": {"api": "child", "func": progress.stage,
                                "message": "%s: %s" % (type(exc).__name__, exc)}}
        smoke_child._emit({"task": index, "result": result})


if __name__ == "__main__":
    main()
