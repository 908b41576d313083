"""Version macros of cuDNN and CUDA headers (cudnn_version.h, cudnn.h, cuda.h, cuda_runtime_api.h)."""
from __future__ import annotations

import re
from typing import Dict, Optional, TypedDict

from ..versions import decode_cuda, small_int

_DEFINE = r"#\s*define\s+%s\s+(\d+)"


class CudnnHeader(TypedDict):
    """What a cuDNN version header says: the release, and the newest GPU it knows (cuDNN 9.x headers only)."""

    version: str  # "9.14.0"
    max_sm: Optional[str]  # "12.0" from CUDNN_MAX_SM_MAJOR/MINOR_NUMBER


def parse_cudnn_header(text: str) -> Optional[CudnnHeader]:
    """Version macros from cudnn_version.h (8+) or cudnn.h (<=7). None when absent or garbage."""
    found = {}
    for key in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(_DEFINE % key, text)
        value = small_int(m.group(1)) if m else None  # a damaged header may hold thousands of digits
        if value is None:
            return None
        found[key] = value
    out: CudnnHeader = {
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
