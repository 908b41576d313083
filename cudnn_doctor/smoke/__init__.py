"""Smoke test: a real convolution through cuDNN in a child. Imports native, knowledge and model, never probes."""
from .result import SmokeResult
from .run import run_smoke

__all__ = ["SmokeResult", "run_smoke"]
