"""The seed network's training step on the CPU: numpy im2col + BLAS GEMM, float32 (the `bench` extra)."""
from __future__ import annotations

import time
from typing import Any, Dict, Optional

from .shapes import SEED_BATCH, seed_convs

try:
    import numpy as np
except ImportError:  # the optional extra: bench reports the CPU column as skipped
    np = None  # type: ignore[assignment]


def available() -> bool:
    return np is not None


def im2col(x, r: int, s: int, pad: int):
    """N×C×H×W -> (N·P·Q) × (C·R·S) patches, stride 1."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    p, q = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    view = np.lib.stride_tricks.sliding_window_view(xp, (r, s), axis=(2, 3))  # n, c, p, q, r, s
    return np.ascontiguousarray(view.transpose(0, 2, 3, 1, 4, 5)).reshape(n * p * q, c * r * s), p, q


def col2im(cols, shape, r: int, s: int, pad: int):
    """The adjoint of im2col: scatter-add patches back into an N×C×H×W gradient."""
    n, c, h, w = shape
    p, q = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    out = np.zeros((n, c, h + 2 * pad, w + 2 * pad), dtype=cols.dtype)
    patches = cols.reshape(n, p, q, c, r, s)
    for i in range(r):
        for j in range(s):
            out[:, :, i:i + p, j:j + q] += patches[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return out[:, :, pad:pad + h, pad:pad + w] if pad else out


def conv_forward(x, w, pad: int):
    k, c, r, s = w.shape
    cols, p, q = im2col(x, r, s, pad)
    y = cols @ w.reshape(k, -1).T  # (N·P·Q) × K
    return y.reshape(x.shape[0], p, q, k).transpose(0, 3, 1, 2), cols


def conv_backward(dy, cols, x_shape, w, pad: int, need_dx: bool = True):
    k, c, r, s = w.shape
    d2 = dy.transpose(0, 2, 3, 1).reshape(-1, k)
    dw = (d2.T @ cols).reshape(w.shape)
    dx = col2im(d2 @ w.reshape(k, -1), x_shape, r, s, pad) if need_dx else None
    return dx, dw


def maxpool(x):
    n, c, h, w = x.shape
    v = x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2)
    return v.max(axis=(3, 5))


def maxpool_backward(x, y, dy):
    n, c, h, w = x.shape
    hh, ww = h // 2 * 2, w // 2 * 2
    v = x[:, :, :hh, :ww].reshape(n, c, h // 2, 2, w // 2, 2)
    mask = v == y[:, :, :, None, :, None]
    dx = np.zeros_like(x)
    dx[:, :, :hh, :ww] = (mask * dy[:, :, :, None, :, None]).reshape(n, c, hh, ww)
    return dx


def training_step(x, weights, dloss):
    """Forward and backward through conv-relu ×2, pool, conv-relu ×2, pool; returns the filter gradients."""
    convs = seed_convs(x.shape[0])
    acts, cols, pre = [], [], []
    h = x
    for i, (shape, w) in enumerate(zip(convs, weights)):
        acts.append(h)
        a, col = conv_forward(h, w, shape.pad)
        cols.append(col)
        pre.append(a)
        h = np.maximum(a, 0)
        if i in (1, 3):
            pooled = maxpool(h)
            pre.append(h)
            h = pooled
    grads = []
    g = maxpool_backward(pre[-1], h, dloss)
    order = [(3, pre[4]), (2, pre[3]), (1, pre[1]), (0, pre[0])]
    for i, a in order:
        g = g * (a > 0)
        dx, dw = conv_backward(g, cols[i], acts[i].shape, weights[i], convs[i].pad, need_dx=i > 0)
        grads.append(dw)
        if i == 2:  # the gradient of conv3's input flows back through the first pool
            relu2 = np.maximum(pre[2], 0)
            g = maxpool_backward(relu2, maxpool(relu2), dx)
        else:
            g = dx
    return grads


def run_cpu(budget_s: float = 3.0, steps: int = 5, batch: int = SEED_BATCH) -> Dict[str, Any]:
    """Time the step (one warm-up, then up to ``steps`` or ``budget_s``) -> {"step_ms", "steps", "threads"}."""
    if np is None:
        return {"skipped": "numpy is not installed: pip install 'cudnn-doctor[bench]'"}
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (batch, 3, 32, 32)).astype(np.float32)
    weights = [rng.uniform(-0.1, 0.1, (c.k, c.c, c.r, c.s)).astype(np.float32) for c in seed_convs(batch)]
    dloss = rng.uniform(-1, 1, (batch, 64, 6, 6)).astype(np.float32)
    training_step(x, weights, dloss)
    done, started = 0, time.perf_counter()
    while done < steps and (done == 0 or time.perf_counter() - started < budget_s):
        training_step(x, weights, dloss)
        done += 1
    elapsed = time.perf_counter() - started
    return {"step_ms": elapsed / done * 1000.0, "steps": done, "numpy": np.__version__, "threads": _threads()}


def _threads() -> Optional[int]:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
