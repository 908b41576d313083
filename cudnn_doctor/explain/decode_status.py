"""Status codes in a pasted text, by name (CUDA_ERROR_NO_DEVICE), by the library's own message ("CUDA driver
version is insufficient for CUDA runtime version") or by number in a CUDA/cuDNN context ("CUDA error 35")."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

from ..knowledge import Compat, StatusCode
from .evidence import StatusSeen

_NAME = re.compile(r"\b(?:CUDA_ERROR_\w+|cuda(?:Error|Success)\w*|CUDNN_STATUS_\w+|NVML_ERROR_\w+|nccl[A-Z]\w+|"
                   r"NVRTC_ERROR_\w+|CUBLAS_STATUS_\w+)\b")
# (pattern, table) for numbers; the runtime's table first: frameworks call the runtime API.
_NUMBER: Tuple[Tuple["re.Pattern[str]", Tuple[str, ...]], ...] = (
    (re.compile(r"cuInit\D{0,20}?(?:failure|error)\D{0,3}(\d{1,4})\b", re.I), ("cuda_driver",)),
    # ollama's words for its cuInit call: "cuda driver library init failure: 3"
    (re.compile(r"driver library init failure:[ \t]*(\d{1,4})\b", re.I), ("cuda_driver",)),
    (re.compile(r"\bcudnn\s*(?:status|error)\s*[:=]?\s*(\d{1,4})\b(?!\.\d)", re.I), ("cudnn",)),
    (re.compile(r"\bCUDA\s*(?:error|failure|err)\s*(?:code\s*)?[:=#]?\s*\(?(\d{1,4})\b(?!\.\d)", re.I),
     ("cuda_runtime", "cuda_driver")),
    (re.compile(r"\bcudaError\s*[:=]?\s*(\d{1,4})\b|\b[Ee]rror (\d{1,4}):\s|(?:failed with error|returned)\s*#?\s*"
                r"(\d{1,4})\b|\berror\s*#\s*(\d{1,4})\b", re.I),
     ("cuda_runtime", "cuda_driver")),
)
_MIN_MESSAGE = 12  # shorter messages ("no error", "invalid value") say too little to name a code by


def _cuda_text(text: str) -> bool:
    """Whether a text is about CUDA at all: a bare number or a short message outside one names no status."""
    return bool(re.search(r"cuda|cudnn|nccl|cublas|nvrtc|nvml|gpu", text, re.I))


def _by_message(text: str, compat: Compat) -> List[StatusSeen]:
    """Each library message the text holds on a line about CUDA ('DCGM initialization error' is DCGM's, not the
    runtime's 'initialization error'); of two messages one of which holds the other ('operation not permitted' in
    'operation not permitted when stream is capturing', 800 in 900), the longer."""
    low = text.lower()
    out: List[StatusSeen] = []
    if not _cuda_text(text):
        return out
    for api in ("cuda_runtime", "nccl", "cublas"):
        for code in compat.status_codes_of(api):
            said = code.message.split(" (run with")[0].strip().rstrip(".")
            at = low.find(said.lower()) if code.number and len(said) >= _MIN_MESSAGE and said != code.name else -1
            if at >= 0 and _cuda_text(text[low.rfind("\n", 0, at) + 1:at + len(said)]):
                out.append(StatusSeen(code, said))
    return [s for s in out if not any(len(o.said) > len(s.said) and s.said.lower() in o.said.lower() for o in out)]


def _cudnn_table(number: int) -> str:
    return "cudnn_v9" if number >= 1000 else "cudnn_legacy"


def _by_type(text: str, compat: Compat) -> List[StatusSeen]:
    """'nvmlReturn_t 9', 'cudnnStatus_t = 1008': a number after its C type names it in that type's table."""
    out: List[StatusSeen] = []
    for api, table in compat.status_apis().items():
        for m in re.finditer(r"\b%s\s*[:=]?\s*(\d{1,5})\b" % re.escape(str(table["type"])), text):
            number = int(m.group(1))
            if api.startswith("cudnn") and api != _cudnn_table(number):
                continue
            code = compat.status_by_number(api, number)
            if code is not None:
                out.append(StatusSeen(code, m.group(0)))
    return out


def _by_number(text: str, compat: Compat) -> List[StatusSeen]:
    out: List[StatusSeen] = []
    if not _cuda_text(text):
        return out  # a bare "error 2" outside a CUDA text is not a CUDA status
    for pattern, apis in _NUMBER:
        for m in pattern.finditer(text):
            number = int(next(g for g in m.groups() if g))
            for api in apis:
                code: Optional[StatusCode] = compat.status_by_number(
                    _cudnn_table(number) if api == "cudnn" else api, number)
                if code is not None and code.number:
                    out.append(StatusSeen(code, m.group(0).strip()))
                    break
    return out


# glog's CHECK_EQ as Caffe prints it: "Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  CUDNN_STATUS_BAD_PARAM"
_CHECKED = re.compile(r"\((\d{1,4}) vs\. 0\)\s*(CUDNN_STATUS_\w+)")


def _by_name(text: str, compat: Compat) -> List[StatusSeen]:
    """Each name once; a cuDNN name is cuDNN 9's unless the number beside it is the older table's (3 is 7.x/8.x's
    BAD_PARAM, 2000 cuDNN 9's)."""
    checked = {m.group(2): compat.status_by_number("cudnn_legacy", int(m.group(1))) for m in _CHECKED.finditer(text)
               if int(m.group(1)) < 1000}
    found = []
    for name in dict.fromkeys(_NAME.findall(text)):
        older = checked.get(name)
        code = older if older is not None and older.name == name else compat.status_by_name(name)
        if code is not None and code.number:
            found.append(StatusSeen(code, name))
    return found


def decode_statuses(text: str, compat: Compat) -> List[StatusSeen]:
    """Every status the text names, once per (library, number), in the order: names, messages, numbers."""
    found = _by_name(text, compat)
    found += _by_message(text, compat) + _by_type(text, compat) + _by_number(text, compat)
    seen: Dict[Tuple[str, int], StatusSeen] = {}
    for s in found:
        key = (s.code.api.replace("cuda_driver", "cuda_runtime"), s.code.number)  # 803 by name and by number: one
        seen.setdefault(key, s)
    return list(seen.values())
