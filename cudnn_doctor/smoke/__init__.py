"""Smoke test: a real convolution through cuDNN in a child started through the host seam. Imports host, knowledge
and model, never probes or native."""
from .result import SmokeResult
from .run import run_smoke

__all__ = ["SmokeResult", "run_smoke"]
