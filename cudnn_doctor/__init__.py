"""cudnn-doctor: finds out why a CUDA/cuDNN stack will fail before a framework does."""
try:
    from importlib.metadata import PackageNotFoundError, version as _dist_version

    __version__ = _dist_version("cudnn-doctor")
except Exception:  # running from a source tree that was never installed
    __version__ = "0.1.0"
