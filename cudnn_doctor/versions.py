"""Decoding NVIDIA's version numbers and version files (pure functions, no I/O)."""
from __future__ import annotations

import json
import re
from typing import Dict, Optional, Tuple

from packaging.version import InvalidVersion, Version


def parse_version(text: Optional[str]) -> Optional[Version]:
    """A packaging Version, or None for missing/garbage text."""
    if not text:
        return None
    try:
        return Version(str(text).strip())
    except InvalidVersion:
        return None


def major_minor(text: Optional[str]) -> Optional[str]:
    """'12.6.20241114' -> '12.6' (version.json may carry a date as the third field)."""
    v = parse_version(text)
    if v is None or len(v.release) < 2:
        return None if v is None else "%d.0" % v.release[0]
    return "%d.%d" % v.release[:2]


def decode_cudnn(value: Optional[int]) -> Optional[str]:
    """cudnnGetVersion()/CUDNN_VERSION: 9.x is M*10000+m*100+p, 8.x and older M*1000+m*100+p."""
    if value is None or value <= 0:
        return None
    if value >= 10000:
        return "%d.%d.%d" % (value // 10000, (value // 100) % 100, value % 100)
    return "%d.%d.%d" % (value // 1000, (value // 100) % 10, value % 100)


def decode_cuda(value: Optional[int]) -> Optional[str]:
    """CUDART_VERSION / cuDriverGetVersion / cudnnGetCudartVersion: 1000*major + 10*minor."""
    if value is None or value <= 0:
        return None
    return "%d.%d" % (value // 1000, (value % 1000) // 10)


_DEFINE = r"#\s*define\s+%s\s+(\d+)"


def small_int(text: Optional[str], digits: int = 18) -> Optional[int]:
    """A plain ASCII decimal of at most ``digits`` digits, else None: a version field in a damaged file may hold
    thousands of digits (int() refuses more than 4300) or non-ASCII digits that str.isdigit() accepts."""
    if not text or len(text) > digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def parse_cudnn_header(text: str) -> Optional[Dict[str, Optional[str]]]:
    """Version macros from cudnn_version.h (8+) or cudnn.h (<=7). None when absent or garbage."""
    found = {}
    for key in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(_DEFINE % key, text)
        value = small_int(m.group(1)) if m else None
        if value is None:
            return None
        found[key] = value
    out: Dict[str, Optional[str]] = {
        "version": "%d.%d.%d" % (found["CUDNN_MAJOR"], found["CUDNN_MINOR"], found["CUDNN_PATCHLEVEL"]),
        "max_sm": None,
    }
    sm_major = re.search(_DEFINE % "CUDNN_MAX_SM_MAJOR_NUMBER", text)
    sm_minor = re.search(_DEFINE % "CUDNN_MAX_SM_MINOR_NUMBER", text)
    if sm_major and sm_minor:
        out["max_sm"] = "%s.%s" % (sm_major.group(1), sm_minor.group(1))
    return out


def parse_cuda_h(text: str) -> Optional[str]:
    """'#define CUDA_VERSION 12040' in cuda.h -> '12.4'."""
    m = re.search(r"#\s*define\s+CUDA_VERSION\s+(\d+)", text)
    return decode_cuda(small_int(m.group(1))) if m else None


def parse_cudart_h(text: str) -> Optional[str]:
    m = re.search(r"#\s*define\s+CUDART_VERSION\s+(\d+)", text)
    return decode_cuda(small_int(m.group(1))) if m else None


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


_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


def soname_version(filename: str) -> Optional[str]:
    """'libcudnn_ops.so.9.14.0' -> '9.14.0'; 'libcuda.so.580.95.05' -> '580.95.05'."""
    m = _SO_VERSION.search(filename)
    return m.group(1) if m else None
