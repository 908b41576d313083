"""Convolution shapes, FLOP counts and epoch extrapolation: the arithmetic of bench (pure, no GPU)."""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Dict, List, Tuple

from ..model import BENCH_DIRECTIONS

DTYPES = ("fp32", "tf32", "fp16", "bf16")
DIRECTIONS = BENCH_DIRECTIONS

# The seed's CIFAR-10 network (../shared/seeds/004): 3x32x32 images, conv32-conv32-maxpool-conv64-conv64-maxpool,
# ReLU after each convolution, Keras' layout ("same" then "valid" padding), batch 32, 45,000 training images.
SEED_BATCH = 32
SEED_EPOCH_IMAGES = 45000
SEED_FIGURES_S = {"cpu": 152.0, "gpu_plain": 20.0, "cudnn": 7.0}  # GTX 1060 / i7-6700HQ, the article's epoch times
SEED_SOURCE = "seeds/004: Theano+Keras CIFAR-10, GeForce GTX 1060 with cuDNN 5005 vs CUDA+CNMeM vs Core i7-6700HQ"


@dataclass(frozen=True)
class ConvShape:
    """One 2-D convolution: input N×C×H×W, K filters of R×S, square stride and zero padding."""

    n: int
    c: int
    h: int
    w: int
    k: int
    r: int
    s: int
    stride: int = 1
    pad: int = 0
    name: str = ""
    count: int = 1  # how many times the network uses this shape

    @property
    def p(self) -> int:
        return (self.h + 2 * self.pad - self.r) // self.stride + 1

    @property
    def q(self) -> int:
        return (self.w + 2 * self.pad - self.s) // self.stride + 1

    def flops(self) -> int:
        """2·N·K·P·Q·C·R·S: one multiply and one add per filter tap. The backward passes cost the same."""
        return 2 * self.n * self.k * self.p * self.q * self.c * self.r * self.s

    def label(self) -> str:
        return self.name or "%dx%dx%dx%d k%d %dx%d/%d" % (self.n, self.c, self.h, self.w, self.k, self.r, self.s,
                                                        self.stride)

    def to_dict(self) -> Dict[str, object]:
        out = asdict(self)
        out.update(p=self.p, q=self.q, flops=self.flops())
        return out


def parse_shape(text: str) -> ConvShape:
    """'N,C,H,W,K,R,S,stride,pad' (stride and pad optional) -> ConvShape; ValueError with the reason."""
    parts = [p for p in re.split(r"[,x ]+", text.strip()) if p]
    if len(parts) not in (7, 8, 9):
        raise ValueError("--shape %r: give N,C,H,W,K,R,S[,stride[,pad]]" % text)
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ValueError("--shape %r: every field must be a whole number" % text) from None
    n, c, h, w, k, r, s = values[:7]
    stride = values[7] if len(values) > 7 else 1
    pad = values[8] if len(values) > 8 else 0
    if min(n, c, h, w, k, r, s, stride) < 1 or pad < 0:
        raise ValueError("--shape %r: sizes and stride must be at least 1, padding at least 0" % text)
    shape = ConvShape(n, c, h, w, k, r, s, stride, pad, name="%dx%dx%dx%d>%d %dx%d/%d+%d" % (
        n, c, h, w, k, r, s, stride, pad))
    if shape.p < 1 or shape.q < 1:
        raise ValueError("--shape %r: the filter is larger than the padded input" % text)
    return shape


def _rn(c: int, hw: int, k: int, rs: int, stride: int, name: str, count: int, batch: int) -> ConvShape:
    return ConvShape(batch, c, hw, hw, k, rs, rs, stride, rs // 2, name=name, count=count)


def resnet50(batch: int = 64) -> List[ConvShape]:
    """ResNet-50's distinct convolutions (torchvision v1.5: stride on the 3×3), with how often each occurs."""
    b = batch
    return [
        _rn(3, 224, 64, 7, 2, "conv1", 1, b),
        _rn(64, 56, 64, 1, 1, "l1.conv1a", 1, b),
        _rn(64, 56, 64, 3, 1, "l1.conv2", 3, b),
        _rn(64, 56, 256, 1, 1, "l1.conv3", 3, b),
        _rn(64, 56, 256, 1, 1, "l1.down", 1, b),
        _rn(256, 56, 64, 1, 1, "l1.conv1", 2, b),
        _rn(256, 56, 128, 1, 1, "l2.conv1a", 1, b),
        _rn(128, 56, 128, 3, 2, "l2.conv2a", 1, b),
        _rn(128, 28, 512, 1, 1, "l2.conv3", 4, b),
        _rn(256, 56, 512, 1, 2, "l2.down", 1, b),
        _rn(512, 28, 128, 1, 1, "l2.conv1", 3, b),
        _rn(128, 28, 128, 3, 1, "l2.conv2", 3, b),
        _rn(512, 28, 256, 1, 1, "l3.conv1a", 1, b),
        _rn(256, 28, 256, 3, 2, "l3.conv2a", 1, b),
        _rn(256, 14, 1024, 1, 1, "l3.conv3", 6, b),
        _rn(512, 28, 1024, 1, 2, "l3.down", 1, b),
        _rn(1024, 14, 256, 1, 1, "l3.conv1", 5, b),
        _rn(256, 14, 256, 3, 1, "l3.conv2", 5, b),
        _rn(1024, 14, 512, 1, 1, "l4.conv1a", 1, b),
        _rn(512, 14, 512, 3, 2, "l4.conv2a", 1, b),
        _rn(512, 7, 2048, 1, 1, "l4.conv3", 3, b),
        _rn(1024, 14, 2048, 1, 2, "l4.down", 1, b),
        _rn(2048, 7, 512, 1, 1, "l4.conv1", 2, b),
        _rn(512, 7, 512, 3, 1, "l4.conv2", 2, b),
    ]


# The --quick subset: one layer of each kind (7×7 stem, 1×1, 3×3, strided) that finishes in a few seconds.
QUICK_LAYERS = ("l1.conv2", "l3.conv3", "l3.conv2a")


def seed_convs(batch: int = SEED_BATCH) -> List[ConvShape]:
    """The seed network's four convolutions (3×3; 'same' then 'valid' padding, as Keras' CIFAR-10 example)."""
    return [
        ConvShape(batch, 3, 32, 32, 32, 3, 3, 1, 1, name="conv1"),
        ConvShape(batch, 32, 32, 32, 32, 3, 3, 1, 0, name="conv2"),
        ConvShape(batch, 32, 15, 15, 64, 3, 3, 1, 1, name="conv3"),
        ConvShape(batch, 64, 15, 15, 64, 3, 3, 1, 0, name="conv4"),
    ]


def seed_step_flops(batch: int = SEED_BATCH) -> int:
    """Convolution FLOPs of one training step: forward, backward-filter, and backward-data except the first layer
    (its input gradient is never used)."""
    convs = seed_convs(batch)
    return sum(3 * c.flops() for c in convs) - convs[0].flops()


def epoch_seconds(step_seconds: float, batch: int = SEED_BATCH, images: int = SEED_EPOCH_IMAGES) -> float:
    """One epoch of ``images`` at ``batch`` per step: every step, the last one partly full, costs a full step."""
    return step_seconds * math.ceil(images / batch)


def tflops(flops: float, seconds: float) -> float:
    return flops / seconds / 1e12 if seconds > 0 else 0.0


def weighted_tflops(rows: List[Tuple[ConvShape, float]]) -> float:
    """All layers together, each as often as the network uses it: total FLOPs over total time."""
    total_flops = sum(shape.flops() * shape.count for shape, _ in rows)
    total_time = sum(seconds * shape.count for shape, seconds in rows)
    return tflops(total_flops, total_time)
