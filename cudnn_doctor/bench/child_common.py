"""Bench child, shared parts: the CUDA session (context, stream, allocations, timing), convolution operands and
cuDNN's choice of algorithm. Imported by the child scripts beside it (bench_child.py, seed_child.py)."""
import ctypes
import json
import os
import time
from array import array

import api  # noqa: E402  (bench's bindings, built on smoke's)
import refcheck as rc  # noqa: E402
import child as smoke_child  # noqa: E402  (smoke's driver start-up and helpers)

DIRECTIONS = ("fwd", "bwd_data", "bwd_filter")


def _now():
    return time.perf_counter()


class Progress:
    """Stage and step counts where the parent can read them at once (PATH), and what is known so far for a crash
    report (PATH.known): the latter is a snapshot at most once a second, as it grows with every layer measured
    and writing it at every step would cost more than the steps."""

    KNOWN_EVERY_S = 1.0

    def __init__(self, path):
        self.path, self.stage, self.known, self.done, self.total = path, None, {}, 0, 0
        self.known_at = None

    def __call__(self, stage, advance=0):
        self.stage = stage
        self.done += advance
        if not self.path:
            return
        _write_json(self.path, {"stage": stage, "done": self.done, "total": self.total})
        # Small until layers are measured: written every time; then at most once a second.
        if not self.known.get("layers") or self.known_at is None or _now() - self.known_at >= self.KNOWN_EVERY_S:
            _write_json(self.path + ".known", self.known)
            self.known_at = _now()


def _write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(obj, fh)
    os.replace(tmp, path)


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
        self.graph_api = False  # whether the backend (graph) API's engines are tried too (bench_child sets it)
        self.graph_convs = []
        self.graph_engines, self.graph_compile = 10, True

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

    def once(self, enqueue):
        """Milliseconds of one call, between two events on the stream."""
        d = self.driver
        d.record(self.ev0, self.stream)
        enqueue()
        d.record(self.ev1, self.stream)
        return d.elapsed_ms(self.ev0, self.ev1)

    def timed(self, enqueue, target_ms, most=100, sticky=True):
        """(milliseconds per call, how): the calls captured in a CUDA graph when the driver allows, so the
        GPU's time is measured rather than Python's call overhead; a plain timed loop otherwise. A failed
        capture stops capturing for the rest of the run (``sticky``) or, for one engine's calls, for them alone."""
        d = self.driver
        single = max(self.once(enqueue), 1e-3)
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
                if sticky:
                    self.capture_error = str(exc)  # not capturable here: time a loop from now on
                smoke_child._quietly(d.synchronize)
        d.record(self.ev0, self.stream)
        for _ in range(iters):
            enqueue()
        d.record(self.ev1, self.stream)
        return d.elapsed_ms(self.ev0, self.ev1) / iters, "loop"

    def close_graph_convs(self):
        for conv in self.graph_convs:
            conv.close()
        self.graph_convs = []

    def close(self):
        self.close_graph_convs()
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
