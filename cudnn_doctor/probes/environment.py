"""The CUDA environment variables a program started here inherits (model.CUDA_ENVIRONMENT), those that are set."""
from __future__ import annotations

from ..model import CUDA_ENVIRONMENT


def probe(ctx) -> None:
    values = {name: ctx.host.getenv(name) for name in CUDA_ENVIRONMENT}
    ctx.facts.environment = {name: value for name, value in values.items() if value is not None}
