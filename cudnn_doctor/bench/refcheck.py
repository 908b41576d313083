"""CPU references for sampled output elements of every operation bench runs (standard library only).

Checking every element of a ResNet layer in Python would take minutes; a few random elements per operation,
each against its exact sum in double precision, catch a wrong algorithm, layout or data type just as surely.
Errors are measured against the sum of the absolute products, so long reductions are judged fairly.
"""
import random
import struct

NCHW, NHWC = 0, 1
# Largest error allowed, relative to sum(|products|): float32 ~1e-7 per add; TF32 keeps 10 mantissa bits,
# bfloat16 7, half 10 (inputs are exact in their type; outputs are rounded to it).
TOLERANCE = {"fp32": 1e-5, "tf32": 4e-3, "fp16": 4e-3, "bf16": 2e-2}
UNPACK = {"fp32": "<f", "tf32": "<f", "fp16": "<e"}


def decode(dtype, raw):
    """One element's bytes -> float."""
    if dtype == "bf16":
        return struct.unpack("<f", b"\x00\x00" + raw[:2])[0]
    return struct.unpack(UNPACK[dtype], raw)[0]


def quantize(dtype, value):
    """The nearest value the data type holds (so the reference sees exactly what the GPU sees)."""
    if dtype == "fp16":
        return struct.unpack("<e", struct.pack("<e", value))[0]
    if dtype == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0] & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return struct.unpack("<f", struct.pack("<f", value))[0]


def encode(dtype, values):
    if dtype == "bf16":
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), UNPACK[dtype][1]), *values)


class Pattern:
    """A tensor filled with a repeating run of random values: element i is values[i % period].

    A prime period never lines up with a tensor's dimensions, so neighbouring channels and pixels differ.
    """

    def __init__(self, dtype, seed, period=4099, scale=1.0):
        rng = random.Random(seed)
        self.dtype = dtype
        self.values = [quantize(dtype, rng.uniform(-scale, scale)) for _ in range(period)]

    def __getitem__(self, i):
        return self.values[i % len(self.values)]

    def raw(self):
        return encode(self.dtype, self.values)


def tensor_index(fmt, dims, n, c, h, w):
    _, cc, hh, ww = dims
    if fmt == NHWC:
        return ((n * hh + h) * ww + w) * cc + c
    return ((n * cc + c) * hh + h) * ww + w


def filter_index(fmt, dims, k, c, r, s):
    """Filters follow the tensor format: KCRS for NCHW, KRSC for NHWC."""
    return tensor_index(fmt, dims, k, c, r, s)


class Conv:
    """Geometry of one convolution and its three tensors' dims."""

    def __init__(self, n, c, h, w, k, r, s, stride, pad, fmt):
        self.n, self.c, self.h, self.w, self.k, self.r, self.s = n, c, h, w, k, r, s
        self.stride, self.pad, self.fmt = stride, pad, fmt
        self.p = (h + 2 * pad - r) // stride + 1
        self.q = (w + 2 * pad - s) // stride + 1
        self.xdims, self.wdims, self.ydims = (n, c, h, w), (k, c, r, s), (n, k, self.p, self.q)

    def xi(self, n, c, h, w):
        return tensor_index(self.fmt, self.xdims, n, c, h, w)

    def wi(self, k, c, r, s):
        return filter_index(self.fmt, self.wdims, k, c, r, s)

    def yi(self, n, k, p, q):
        return tensor_index(self.fmt, self.ydims, n, k, p, q)

    def terms(self, direction):
        """Products summed per output element."""
        return {"fwd": self.c * self.r * self.s, "bwd_data": self.k * self.r * self.s,
                "bwd_filter": self.n * self.p * self.q}[direction]

    def out_dims(self, direction):
        return {"fwd": self.ydims, "bwd_data": self.xdims, "bwd_filter": self.wdims}[direction]

    def out_index(self, direction, a, b, c, d):
        return {"fwd": self.yi, "bwd_data": self.xi, "bwd_filter": self.wi}[direction](a, b, c, d)

    def reference(self, direction, ins, a, b, c, d):
        """(exact value, sum of |products|) of one output element; ins = (x, w) / (dy, w) / (x, dy)."""
        total = scale = 0.0
        st, pad = self.stride, self.pad
        if direction == "fwd":
            x, w = ins
            for cc in range(self.c):
                for r in range(self.r):
                    ih = c * st - pad + r
                    if not 0 <= ih < self.h:
                        continue
                    for s in range(self.s):
                        iw = d * st - pad + s
                        if 0 <= iw < self.w:
                            t = x[self.xi(a, cc, ih, iw)] * w[self.wi(b, cc, r, s)]
                            total += t
                            scale += abs(t)
        elif direction == "bwd_data":
            dy, w = ins
            for k in range(self.k):
                for r in range(self.r):
                    ph, rem = divmod(c + pad - r, st)
                    if rem or not 0 <= ph < self.p:
                        continue
                    for s in range(self.s):
                        qw, rem = divmod(d + pad - s, st)
                        if rem or not 0 <= qw < self.q:
                            continue
                        t = dy[self.yi(a, k, ph, qw)] * w[self.wi(k, b, r, s)]
                        total += t
                        scale += abs(t)
        else:
            return self._filter_gradient(ins, a, b, c, d)
        return total, scale

    def _filter_gradient(self, ins, k, c, r, s):
        """One filter gradient element: a sum over every image and output pixel (N*P*Q terms, 200,000 for a
        ResNet stage-1 layer), so rows are indexed by stride rather than element by element. Same terms, same
        order as the plain loops."""
        x, dy = ins
        xv, dv = getattr(x, "values", x), getattr(dy, "values", dy)  # a Pattern repeats its values; a list is whole
        xp, dp = len(xv), len(dv)
        st, pad = self.stride, self.pad
        nhwc = self.fmt == NHWC
        qs = [q for q in range(self.q) if 0 <= q * st - pad + s < self.w]
        total = scale = 0.0
        for n in range(self.n):
            for p in range(self.p):
                ih = p * st - pad + r
                if not 0 <= ih < self.h:
                    continue
                if nhwc:
                    xb, xs = (n * self.h + ih) * self.w * self.c + c, self.c
                    db, ds = (n * self.p + p) * self.q * self.k + k, self.k
                else:
                    xb, xs = ((n * self.c + c) * self.h + ih) * self.w, 1
                    db, ds = ((n * self.k + k) * self.p + p) * self.q, 1
                for q in qs:
                    t = xv[(xb + (q * st - pad + s) * xs) % xp] * dv[(db + q * ds) % dp]
                    total += t
                    scale += abs(t)
        return total, scale


def sample_positions(dims, count, seed):
    rng = random.Random(seed)
    return [tuple(rng.randrange(d) for d in dims) for _ in range(count)]


def samples_for(terms, budget=30000, most=8):
    """How many elements to check: as many as the budget of products allows, at least one."""
    return max(1, min(most, budget // max(1, terms)))


def check_conv(conv, direction, ins, fetch, dtype, seed, budget=30000):
    """Compare sampled outputs (fetch(flat index) -> float) with the exact sums. Returns a result dict."""
    positions = sample_positions(conv.out_dims(direction), samples_for(conv.terms(direction), budget), seed)
    worst = 0.0
    bad = None
    for pos in positions:
        ref, scale = conv.reference(direction, ins, *pos)
        got = fetch(conv.out_index(direction, *pos))
        err = abs(got - ref) / (scale or 1.0) if got == got and abs(got) != float("inf") else float("inf")
        if err > worst:
            worst, bad = err, {"at": list(pos), "got": got if err != float("inf") else str(got), "expected": ref}
    ok = worst <= TOLERANCE[dtype]
    out = {"ok": ok, "checked": len(positions), "max_error": worst if worst != float("inf") else None,
           "tolerance": TOLERANCE[dtype]}
    if not ok:
        out["worst"] = bad
    return out


def check_elementwise(count, fetch_in, fetch_out, expect, seed, dtype="fp32", samples=64):
    """ReLU and friends: out[i] == expect(inputs at i) exactly (no rounding involved)."""
    rng = random.Random(seed)
    for _ in range(samples):
        i = rng.randrange(count)
        want = expect(*[f(i) for f in fetch_in])
        got = fetch_out(i)
        if got != want:
            return {"ok": False, "checked": samples, "worst": {"at": i, "got": got, "expected": want}}
    return {"ok": True, "checked": samples, "max_error": 0.0, "tolerance": 0.0}


def check_maxpool(dims, window, x, y, fetch_dx=None, dy=None, seed=0, samples=32):
    """Forward: y is the window's max. Backward: the window's gradient sums to dy and sits only on maxima."""
    n, c, h, w = dims
    ph, pw = h // window, w // window
    rng = random.Random(seed)
    for _ in range(samples):
        a, b, i, j = rng.randrange(n), rng.randrange(c), rng.randrange(ph), rng.randrange(pw)
        cells = [((a * c + b) * h + i * window + u) * w + j * window + v for u in range(window) for v in range(window)]
        top = max(x(k) for k in cells)
        yi = ((a * c + b) * ph + i) * pw + j
        if fetch_dx is None:
            if y(yi) != top:
                return {"ok": False, "checked": samples, "worst": {"at": [a, b, i, j], "got": y(yi), "expected": top}}
            continue
        grads = [(k, fetch_dx(k)) for k in cells]
        total = sum(g for _, g in grads)
        misplaced = [k for k, g in grads if g != 0.0 and x(k) != top]
        if misplaced or abs(total - dy(yi)) > 1e-6 * (abs(dy(yi)) + 1.0):
            return {"ok": False, "checked": samples, "worst": {"at": [a, b, i, j], "got": total, "expected": dy(yi)}}
    return {"ok": True, "checked": samples, "max_error": 0.0, "tolerance": 0.0}
