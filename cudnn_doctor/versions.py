"""Decoding and comparing NVIDIA's version numbers (pure functions, no I/O)."""
from __future__ import annotations

import re
from typing import Optional

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


_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


def soname_version(filename: str) -> Optional[str]:
    """'libcudnn_ops.so.9.14.0' -> '9.14.0'; 'libcuda.so.580.95.05' -> '580.95.05'."""
    m = _SO_VERSION.search(filename)
    return m.group(1) if m else None
