"""Bench child: the seed article's CIFAR-10 network as one training step, through cuDNN and through plain CUDA
kernels compiled with NVRTC, each operation checked against the CPU once. Imported by bench_child.py."""
import ctypes

import api  # noqa: E402  (bench's bindings, built on smoke's)
import kernels  # noqa: E402
import refcheck as rc  # noqa: E402
import child as smoke_child  # noqa: E402  (smoke's driver start-up and helpers)
from child_common import ConvOp, _now, choose  # noqa: E402

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
