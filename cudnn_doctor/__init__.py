"""cudnn-doctor: finds out why a CUDA/cuDNN stack will fail before a framework does."""

# The one place the version is written: pyproject.toml reads it from here (setuptools' dynamic version),
# so no run pays for importlib.metadata (about 20 ms of imports) to print it.
__version__ = "0.1.0"
