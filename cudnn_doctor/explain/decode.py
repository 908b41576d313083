"""A pasted text -> typed evidence: status codes, loader failures, Windows codes, libraries with the releases
that ship them, version checks, named conditions, the CUDA releases and GPU it states, and its platform."""
from __future__ import annotations

import re
from typing import List, Optional

from ..knowledge import Compat
from ..versions import decode_cuda
from .decode_checks import decode_checks
from .decode_loader import decode_loader, decode_windows
from .decode_status import decode_statuses
from .evidence import Evidence, Signal
from .paste_facts import STATED_CC, read_paste
from .parse import extract_sonames, match_symptoms

_CUDA = (re.compile(r"found (?:CUDA )?version (\d{4,5})\b", re.I), re.compile(r"\bimage (\d{1,2}\.\d)\.\d"),
         re.compile(r"toolkit/r(\d{1,2}\.\d)\b"), re.compile(r"cuda[-_ ]?[(\uff08]?(\d{1,2}\.\d)(?![\d.])", re.I),
         re.compile(r"cuda\s{0,3}>=\s*(\d+\.\d+)"),  # nvidia-container-cli's "cuda>=9.2", spaced or not
         re.compile(r"CUDA ?(?:version|ver\.?|runtime|toolkit)?(?: is)?\s{0,3}:?\s{0,3}(\d{1,2}\.\d)\b", re.I))


def _cudas(text: str) -> List[str]:
    out: List[str] = []
    for pattern in _CUDA:
        for m in pattern.finditer(text):
            value = m.group(1)
            cuda = decode_cuda(int(value)) if value.isdigit() else value
            if cuda and cuda not in out:
                out.append(cuda)
    return out


_DRIVER = re.compile(r"(?:driver(?: version)?|NVML library version|Kernel Module|NVIDIA-SMI)\s*:?\s*(\d{3}\.\d{2,3}"
                     r"(?:\.\d{1,3})?)\b", re.I)


def _line(text: str, pattern: str) -> str:
    """The line of `text` where a symptom pattern matched: what the text said about it."""
    if pattern.startswith("re:"):
        m = re.search(pattern[3:], text, re.I)
        start = m.start() if m else 0
    else:
        start = max(text.lower().find(pattern.lower()), 0)
    end = text.find("\n", start)
    return text[text.rfind("\n", 0, start) + 1:end if end >= 0 else len(text)].strip()


def _gpu_cc(text: str) -> Optional[str]:
    """The GPU's own compute capability: the sm_XX a 'with CUDA capability sm_XX' names, else one stated."""
    own = re.search(r"with CUDA capability sm_(\d{2,3})", text)
    if own:
        return "%s.%s" % (own.group(1)[:-1], own.group(1)[-1])
    m = STATED_CC.search(text)
    return m.group(1) if m else None


def decode(text: str, compat: Compat) -> Evidence:
    """Everything the text says, each kind in the order it appears."""
    text = text or ""
    names = extract_sonames(text)
    facts = read_paste(text)
    said = {s.value for s in facts.os}
    cudas = _cudas(text)
    return Evidence(
        statuses=decode_statuses(text, compat), loader=decode_loader(text), windows=decode_windows(text, compat),
        libraries=[s for s in (compat.shipped_by(n) for n in names) if s is not None],
        checks=decode_checks(text, compat, facts, cudas),
        signals=[Signal(m.id, _line(text, m.pattern)) for m in match_symptoms(text, compat)],
        cuda=cudas, gpu_cc=_gpu_cc(text), drivers=list(dict.fromkeys(_DRIVER.findall(text))),
        platform="windows" if "windows" in said and "wsl" not in said else "linux", text=text, facts=facts)
