"""Smoke test: a real float32 convolution through a cuDNN copy, checked against a CPU reference."""
from .result import SmokeResult
from .run import run_smoke

__all__ = ["SmokeResult", "run_smoke"]
