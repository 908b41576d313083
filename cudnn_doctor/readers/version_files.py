"""Version texts NVIDIA software writes: version.json, version.txt, /proc/driver/nvidia/version."""
from __future__ import annotations

import json
import re
from typing import Optional, Tuple

def parse_version_json(text: str) -> Tuple[Optional[str], Optional[str]]:
    """(toolkit version, bundled driver) from a CUDA 11+ version.json."""
    try:
        data = json.loads(text)
        cuda = data.get("cuda", {}).get("version")
        driver = (data.get("nvidia_driver") or {}).get("version")
    except (ValueError, AttributeError, RecursionError):  # RecursionError: "[[[[..." nested past the stack
        return None, None
    return (str(cuda) if cuda else None), (str(driver) if driver else None)


def parse_version_txt(text: str) -> Optional[str]:
    """'CUDA Version 10.1.243' (CUDA <= 10.2)."""
    m = re.search(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def parse_nvcc_json(text: str) -> Optional[str]:
    """The nvcc component's version ('13.0.88', what `nvcc --version` prints after V) from a CUDA 11+ version.json:
    reading it costs no child process and answers for a toolkit of another machine (--root) too."""
    try:
        version = (json.loads(text).get("cuda_nvcc") or {}).get("version")
    except (ValueError, AttributeError, RecursionError):
        return None
    return str(version) if version else None


def parse_kernel_module(text: str) -> Optional[str]:
    """Driver version from /proc/driver/nvidia/version ('... Kernel Module  580.95.05 ...')."""
    m = re.search(r"Kernel Module(?: for [\w-]+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None
