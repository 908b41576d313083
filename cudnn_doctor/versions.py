"""Decoding and comparing NVIDIA's version numbers (pure functions, no I/O)."""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from packaging.requirements import Requirement


def parse_version(text: Optional[str]) -> Optional[Version]:
    """A packaging Version, or None for missing/garbage text."""
    if not text:
        return None
    return _parse(str(text).strip())


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> Optional[Version]:
    # Rules and the knowledge base parse the same few hundred texts (table rows, found versions) thousands of
    # times a run; the answer depends on the text alone, and a Version is never changed once made.
    try:
        return Version(text)
    except (InvalidVersion, ValueError):  # ValueError: a field of more than 4300 digits (int()'s limit)
        return None


def requirements(texts: Sequence[str]) -> List[Tuple[str, "Requirement"]]:
    """(line, requirement) for each Requires-Dist line packaging reads; a line it rejects is left out.

    packaging.requirements (its markers, tokenizer and platform tags) is imported on the first line, not at start:
    most runs read no framework's metadata."""
    out = []
    for text in texts:
        req = _requirement(text)
        if req is not None:
            out.append((text, req))
    return out


@functools.lru_cache(maxsize=4096)
def _requirement(text: str) -> Optional["Requirement"]:
    # The probes, the rules and their fixes read the same frameworks' Requires-Dist lines again and again (one torch
    # rule parsed 206 lines for its 20); the answer depends on the text alone and nothing changes a Requirement.
    from packaging.requirements import InvalidRequirement, Requirement  # why: 11 ms; see requirements()

    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


@functools.lru_cache(maxsize=4096)
def canonical_name(name: str) -> str:
    """A distribution's name as PyPI compares it (PEP 503), e.g. 'NVIDIA_cuDNN.cu12' -> 'nvidia-cudnn-cu12'."""
    return str(canonicalize_name(name))


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


def small_int(text: Optional[str], digits: int = 18) -> Optional[int]:
    """A plain ASCII decimal of at most ``digits`` digits, else None: a version field in a damaged file may hold
    thousands of digits (int() refuses more than 4300) or non-ASCII digits that str.isdigit() accepts."""
    if not text or len(text) > digits or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


_SO_VERSION = re.compile(r"\.so\.(\d+(?:\.\d+)*)$")


def tag_cuda(tag: Optional[str]) -> Optional[str]:
    """A PyTorch build tag's CUDA, the last digit its minor: cu101 -> 10.1, cu130 -> 13.0, cu92 -> 9.2; jaxlib's
    (its local version's first part): cuda111 -> 11.1, cuda92 -> 9.2, and since 0.4 the major alone, cuda11 -> 11,
    cuda12 -> 12 ("0.4.13+cuda11.cudnn86"); None for cpu, rocm or no tag."""
    m = re.fullmatch(r"cu(da)?(\d{2,3})", (tag or "").split(".")[0])
    if m is None:
        return None
    digits = m.group(2)
    if m.group(1) and len(digits) == 2 and digits[0] == "1":  # jaxlib's cuda11, cuda12: a major, never 1.1
        return digits
    return "%s.%s" % (digits[:-1], digits[-1])


def soname_version(filename: str) -> Optional[str]:
    """'libcudnn_ops.so.9.14.0' -> '9.14.0'; 'libcuda.so.580.95.05' -> '580.95.05'."""
    m = _SO_VERSION.search(filename)
    return m.group(1) if m else None


# --- comparing versions (the knowledge base and the rules judge with these) ---------------------------------


def ver(text: Any) -> Optional[Version]:
    """A Version for '580.65.06', '9.14.0', 'r440', '13'; None for '', 'N/A' or garbage."""
    if text is None:
        return None
    if isinstance(text, Version):  # already one (Version(str(v)) == v; a Version is never changed)
        return text
    return _ver_text(text if isinstance(text, str) else str(text))


@functools.lru_cache(maxsize=4096)
def _ver_text(text: str) -> Optional[Version]:
    # Asked a few thousand times a run, of a few hundred texts (as _parse says).
    s = text.strip().lstrip("rR")
    if not s or s.upper() == "N/A":
        return None
    return _parse(s)


def mm(text: Any) -> Optional[Tuple[int, int]]:
    """(major, minor) of a CUDA or cuDNN version; '13' -> (13, 0) is *not* assumed: returns None."""
    v = ver(text)
    if v is None or len(v.release) < 2:
        return None
    return v.release[0], v.release[1]


def mm_before(a: Any, b: Any) -> bool:
    """Whether major.minor of ``a`` is older than that of ``b``; False when either is missing or unreadable."""
    pa, pb = mm(a), mm(b)
    return pa is not None and pb is not None and pa < pb


def mm_at_least(a: Any, b: Any) -> bool:
    """Whether major.minor of ``a`` is that of ``b`` or newer; False when either is missing or unreadable."""
    pa, pb = mm(a), mm(b)
    return pa is not None and pb is not None and pa >= pb


def newer_than(a: Any, b: Any) -> bool:
    """Whether version ``a`` is newer than ``b``; False when either is missing or unreadable."""
    va, vb = ver(a), ver(b)
    return va is not None and vb is not None and va > vb


def version_of(text: Any) -> Version:
    """The Version of a text already known to be one (a knowledge-table cell the schema checked, a version a caller
    parsed before); a ValueError names the text otherwise, where a comparison with None would raise a TypeError."""
    v = ver(text)
    if v is None:
        raise ValueError("not a version: %r" % (text,))
    return v


def mm_of(text: Any) -> Tuple[int, int]:
    """(major, minor) of a text already known to carry both (a knowledge-table cell, a checked fact); a ValueError
    names the text otherwise."""
    pair = mm(text)
    if pair is None:
        raise ValueError("not a major.minor version: %r" % (text,))
    return pair


def version_key(text: Any) -> Version:
    """Sort key for texts that may not parse: the unreadable ones sort first (as 0), instead of raising."""
    return ver(text) or _ZERO


_ZERO = Version("0")


def mm_text(text: Any) -> Optional[str]:
    pair = mm(text)
    return "%d.%d" % pair if pair else None


def major_of(text: Any) -> Optional[int]:
    v = ver(text)
    return v.release[0] if v is not None else None


def cuda_label(text: Any) -> Optional[str]:
    """Normalise how a CUDA build is named: 'cuda13', '13.x', 'cu130', '13.1' -> '13' / '13.1'."""
    if text is None:
        return None
    s = str(text).strip().lower()
    m = re.fullmatch(r"cu(\d{2,3})", s)  # wheel tags: cu118, cu130
    if m:
        digits = m.group(1)
        return "%s.%s" % (digits[:-1], digits[-1])
    s = re.sub(r"^cuda", "", s)
    s = re.sub(r"\.x$", "", s)
    return s or None


# DL4J's pre-release stages in the order they were published. The 1.0.0 milestones (M1, M1.1, M2, M2.1) came
# after the betas (beta2 ... beta7), but PEP 440 would read "M" as nothing known and packaging sorts neither
# consistently, so the order is spelled out here.
_DL4J_STAGES = {"alpha": 0, "beta": 1, "m": 2}


def dl4j_key(text: Any) -> Tuple[Tuple[int, ...], int, Tuple[int, ...]]:
    """Sort key for DL4J versions: 1.0.0-beta6 < 1.0.0-M1 < 1.0.0-M1.1 < 1.0.0-M2.1 < 1.0.0."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)*)(?:-?([A-Za-z]+)\.?(\d+(?:\.\d+)*)?)?(?:-SNAPSHOT)?\s*", str(text or ""))
    if not m:
        return ((), -1, ())
    base = tuple(int(x) for x in m.group(1).split("."))
    stage = _DL4J_STAGES.get((m.group(2) or "").lower(), 3 if not m.group(2) else -1)
    number = tuple(int(x) for x in m.group(3).split(".")) if m.group(3) else ()
    return base, stage, number


def release3(text: Any) -> Optional[Version]:
    """A cuDNN release without its build number: 9.19.0.56 -> 9.19.0."""
    v = ver(text)
    return None if v is None else _release3(v)


@functools.lru_cache(maxsize=4096)
def _release3(v: Version) -> Optional[Version]:
    # The knowledge base cuts the same few hundred versions thousands of times a run (as _parse says).
    parts = list(v.release[:3]) + [0] * (3 - len(v.release[:3]))
    return _parse("%d.%d.%d" % tuple(parts))


def release3_of(text: Any) -> Version:
    """release3 of a text already known to be a version (a knowledge-table cell); a ValueError otherwise."""
    return version_of(release3(text))


def reaches(text: Any, floor: Any) -> bool:
    """Whether version ``text`` is cuDNN release ``floor`` (without its build number) or newer; False when either
    does not parse."""
    v, f = ver(text), release3(floor)
    return v is not None and f is not None and v >= f


def split_soname(name: str) -> Tuple[str, str]:
    """'libcudart.so.11.0' -> ('libcudart', '11.0'); 'libnvrtc.so' -> ('libnvrtc', '')."""
    stem, _, rest = name.partition(".so")
    return stem, rest.lstrip(".")


def soname_major(name: str) -> Optional[int]:
    """The major version a soname asks for: 'libcudnn_ops_infer.so.8' -> 8; None when unversioned."""
    first = split_soname(name)[1].split(".")[0]
    return int(first) if first.isdigit() else None
