"""Version texts NVIDIA software writes: version.json, version.txt, `nvcc --version`, /proc/driver/nvidia/version."""
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


def parse_nvcc(text: str) -> Tuple[Optional[str], Optional[str]]:
    """(release 'X.Y', nvcc component version 'X.Y.Z') from `nvcc --version`."""
    m = re.search(r"release (\d+)\.(\d+), V(\d+\.\d+\.\d+)", text)
    if not m:
        return None, None
    return "%s.%s" % (m.group(1), m.group(2)), m.group(3)


def parse_kernel_module(text: str) -> Optional[str]:
    """Driver version from /proc/driver/nvidia/version ('... Kernel Module  580.95.05 ...')."""
    m = re.search(r"Kernel Module(?: for [\w-]+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None
