"""The seed network's training step on the CPU: numpy im2col + BLAS GEMM, float32 (the `bench` extra).

Activations are kept channels-last (N×H×W×C) so every im2col copy and every GEMM operand is contiguous: the
CPU column measures BLAS, not numpy's strided copies. Filters stay K×C×R×S as the GPU paths hold them.
"""
from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional

from .shapes import SEED_BATCH, seed_convs

try:
    import numpy as np
except ImportError:  # the optional extra: bench reports the CPU column as skipped
    np = None  # type: ignore[assignment]  # the module's "numpy absent" marker, checked before any use


def available() -> bool:
    return np is not None


def _pad(x, pad: int):
    return np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0))) if pad else x


def im2col(x, r: int, s: int, pad: int):
    """N×H×W×C -> (N·P·Q) × (R·S·C) patches (stride 1), taps outermost so each copy moves whole channel rows."""
    n, h, w, c = x.shape
    xp = _pad(x, pad)
    p, q = h + 2 * pad - r + 1, w + 2 * pad - s + 1
    cols = np.concatenate([xp[:, i:i + p, j:j + q, :] for i in range(r) for j in range(s)], axis=3)
    return cols.reshape(n * p * q, r * s * c), p, q


def _filter_matrix(w):
    """K×C×R×S -> K × (R·S·C), the column order im2col produces."""
    return np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(w.shape[0], -1)


def conv_forward(x, w, pad: int):
    """(y N×P×Q×K, the patches for the backward pass)."""
    cols, p, q = im2col(x, w.shape[2], w.shape[3], pad)
    y = cols @ _filter_matrix(w).T
    return y.reshape(x.shape[0], p, q, w.shape[0]), cols


def conv_backward(dy, cols, x_shape, w, pad: int, need_dx: bool = True):
    """(dx N×H×W×C or None, dw K×C×R×S)."""
    k, c, r, s = w.shape
    d2 = dy.reshape(-1, k)
    dw = (d2.T @ cols).reshape(k, r, s, c).transpose(0, 3, 1, 2)
    if not need_dx:
        return None, dw
    n, h, wd, _ = x_shape
    p, q = dy.shape[1], dy.shape[2]
    dcols = (d2 @ _filter_matrix(w)).reshape(n, p, q, r * s, c)
    dxp = np.zeros((n, h + 2 * pad, wd + 2 * pad, c), dtype=dy.dtype)
    for t in range(r * s):  # col2im: the adjoint of im2col, one tap at a time
        i, j = divmod(t, s)
        dxp[:, i:i + p, j:j + q, :] += dcols[:, :, :, t, :]
    return (dxp[:, pad:pad + h, pad:pad + wd, :] if pad else dxp), dw


def maxpool(x):
    n, h, w, c = x.shape
    return x[:, : h // 2 * 2, : w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def maxpool_backward(x, y, dy):
    n, h, w, c = x.shape
    hh, ww = h // 2 * 2, w // 2 * 2
    v = x[:, :hh, :ww, :].reshape(n, h // 2, 2, w // 2, 2, c)
    mask = v == y[:, :, None, :, None, :]
    dx = np.zeros_like(x)
    dx[:, :hh, :ww, :] = (mask * dy[:, :, None, :, None, :]).reshape(n, hh, ww, c)
    return dx


def training_step(x, weights, dloss) -> List[Any]:
    """Forward and backward through conv-relu ×2, pool, conv-relu ×2, pool (x and dloss channels-last);
    returns the filter gradients, last layer first."""
    convs = seed_convs(x.shape[0])
    inputs, cols, pre, relu = [], [], [], []
    h = x
    for i, (shape, w) in enumerate(zip(convs, weights)):
        inputs.append(h)
        a, col = conv_forward(h, w, shape.pad)
        cols.append(col)
        pre.append(a)
        h = np.maximum(a, 0)
        relu.append(h)
        if i in (1, 3):
            h = maxpool(h)
    grads = []
    g = maxpool_backward(relu[3], h, dloss)
    for i in (3, 2, 1, 0):
        g = g * (pre[i] > 0)
        dx, dw = conv_backward(g, cols[i], inputs[i].shape, weights[i], convs[i].pad, need_dx=i > 0)
        grads.append(dw)
        g = maxpool_backward(relu[1], inputs[2], dx) if i == 2 else dx
    return grads


def run_cpu(budget_s: float = 3.0, steps: int = 5, batch: int = SEED_BATCH) -> Dict[str, Any]:
    """Time the step (one warm-up, then up to ``steps`` or ``budget_s``) -> {"step_ms", "steps", "threads"}."""
    if np is None:
        return {"skipped": "numpy is not installed: pip install 'cudnn-doctor[bench]'"}
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (batch, 32, 32, 3)).astype(np.float32)
    weights = [rng.uniform(-0.1, 0.1, (c.k, c.c, c.r, c.s)).astype(np.float32) for c in seed_convs(batch)]
    dloss = rng.uniform(-1, 1, (batch, 6, 6, 64)).astype(np.float32)
    training_step(x, weights, dloss)
    done, started = 0, time.perf_counter()
    while done < steps and (done == 0 or time.perf_counter() - started < budget_s):
        training_step(x, weights, dloss)
        done += 1
    elapsed = time.perf_counter() - started
    return {"step_ms": elapsed / done * 1000.0, "steps": done, "numpy": np.__version__, "threads": _threads()}


def _threads() -> Optional[int]:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
