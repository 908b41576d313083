"""The smoke convolution on the CPU: its shape, random float32 inputs, a double-precision reference, the error."""
from __future__ import annotations

import math
import random
from array import array
from typing import List, Sequence, Tuple

# x: N×C×H×W, w: K×C×R×S, NCHW float32, zero padding 1, stride 1, no dilation, cross-correlation
# (what frameworks call convolution, no filter flip).
N, C, H, W = 2, 3, 16, 16
K, R, S = 4, 3, 3
PAD, STRIDE, DILATION = 1, 1, 1

# float32 sums of 27 products carry ~1e-7 relative error; TF32 math (10-bit mantissa) gives ~1e-3.
THRESHOLD = 1e-5

# cuMemsetD8(0xFF) makes every float 0xFFFFFFFF, a NaN no convolution of finite inputs can produce.
POISON_BYTE = 0xFF
POISON_WORD = 0xFFFFFFFF


def output_dims() -> Tuple[int, int, int, int]:
    p = (H + 2 * PAD - DILATION * (R - 1) - 1) // STRIDE + 1
    q = (W + 2 * PAD - DILATION * (S - 1) - 1) // STRIDE + 1
    return N, K, p, q


def random_inputs(seed: int) -> Tuple[array, array]:
    """Fresh x and w in [-1, 1), stored as float32 so the reference sees exactly what the GPU sees."""
    rng = random.Random(seed)
    x = array("f", (rng.uniform(-1.0, 1.0) for _ in range(N * C * H * W)))
    w = array("f", (rng.uniform(-1.0, 1.0) for _ in range(K * C * R * S)))
    return x, w


def reference(x: Sequence[float], w: Sequence[float]) -> List[float]:
    """The convolution in double precision, as a flat NCHW list."""
    _, _, p_out, q_out = output_dims()
    y = [0.0] * (N * K * p_out * q_out)
    for n in range(N):
        for k in range(K):
            base = (n * K + k) * p_out * q_out
            for p in range(p_out):
                for q in range(q_out):
                    acc = 0.0
                    for c in range(C):
                        x_plane = (n * C + c) * H * W
                        w_plane = (k * C + c) * R * S
                        for r in range(R):
                            ih = p * STRIDE - PAD + r * DILATION
                            if ih < 0 or ih >= H:
                                continue
                            for s in range(S):
                                iw = q * STRIDE - PAD + s * DILATION
                                if 0 <= iw < W:
                                    acc += x[x_plane + ih * W + iw] * w[w_plane + r * S + s]
                    y[base + p * q_out + q] = acc
    return y


def poisoned_count(raw: bytes) -> int:
    """How many output words still hold the poison pattern (never written)."""
    words = array("I")
    words.frombytes(raw)
    return sum(1 for v in words if v == POISON_WORD)


def relative_error(got: Sequence[float], ref: Sequence[float]) -> Tuple[float, int]:
    """(max|got - ref| / max|ref|, count of non-finite values); the error is inf when any value is non-finite.

    Scaling by the largest reference value keeps outputs near zero from inflating the error.
    """
    scale = max((abs(v) for v in ref), default=0.0) or 1.0
    worst = 0.0
    nonfinite = 0
    for g, r in zip(got, ref):
        if not math.isfinite(g):
            nonfinite += 1
            continue
        worst = max(worst, abs(g - r))
    if len(got) != len(ref):
        return math.inf, nonfinite
    return (math.inf if nonfinite else worst / scale), nonfinite
