"""What each --require key is compared with: read by `check --help` and rules/policy.py; outside rules/, since the
help is built on every `check` run and importing the rules package loads the knowledge base."""
from __future__ import annotations

from typing import Dict

# Documented in `cudnn-doctor check --help` and docs/check.md.
REQUIRE_KEYS: Dict[str, str] = {
    "driver": "the NVIDIA driver version (NVML, else libcuda's file name, else the kernel module)",
    "cuda": "the newest CUDA version the driver supports, as nvidia-smi prints it (cuDriverGetVersion; derived "
            "from the driver version through compat/cuda_driver.toml when not reported). Minor-version "
            "compatibility does not count: use 'toolkit' for the installed toolkit",
    "toolkit": "the version of an installed CUDA toolkit (met when any installed toolkit matches)",
    "cudnn": "every cuDNN copy that gets loaded: the one a plain process finds (libcudnn.so.N through the loader) "
             "and the one each installed framework finds; when nothing would load one, any installed copy",
    "cc": "the compute capability of every visible GPU",
}
