"""Reading a pasted error text: which symptoms it shows, which libraries it names, which cuDNN/CUDA versions it
states. Pure: no machine access."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..knowledge import Compat
from ..versions import decode_cudnn, soname_major, split_soname, ver  # noqa: F401  (re-exported)


@dataclass
class SymptomMatch:
    """One routing-table row (compat/symptoms.toml) that the pasted text matched."""

    id: str
    pattern: str  # the pattern that matched
    meaning: str
    catalogue: List[str]
    rules: List[str]


@dataclass
class PastedVersions:
    """Versions an error text states: the cuDNN that loaded, the one the program was built with, a CUDA demanded."""

    runtime: Optional[str] = None
    compiled: Optional[str] = None
    framework: str = ""  # who said it: "TensorFlow/XLA", "PyTorch", "JAX", "Theano"
    cuda_required: Optional[str] = None


def match_symptoms(text: str, compat: Compat) -> List[SymptomMatch]:
    """Every symptom row whose patterns occur in `text`, in table order."""
    out: List[SymptomMatch] = []
    for symptom in compat.symptoms():
        hit = symptom.matches(text or "")
        if hit:
            out.append(SymptomMatch(symptom.id, hit, symptom.meaning, symptom.catalogue, symptom.rules))
    return out


def routed_rules(matches: List[SymptomMatch]) -> List[str]:
    """The rule ids to run, each once, in the order the matches name them."""
    return list(dict.fromkeys(r for m in matches for r in m.rules))


SONAME_RE = re.compile(r"lib[\w.+-]+\.so(?:\.\d+)*")
DLL_RE = re.compile(r"\w+64_\d+\.dll", re.I)
_MAX_NAMES = 8


def extract_sonames(text: str) -> List[str]:
    """Library names in pasted text, in order, once each: 'libcudart.so.11.0', 'libcudnn.so', 'cudart64_110.dll'."""
    names: List[str] = []
    hits = sorted(list(SONAME_RE.finditer(text or "")) + list(DLL_RE.finditer(text or "")), key=lambda m: m.start())
    for m in hits:
        if m.group(0) not in names:
            names.append(m.group(0))
    return names[:_MAX_NAMES]


def _triple(parts: Tuple[str, ...]) -> str:
    return ".".join(str(int(p)) for p in parts)


def _encoded(number: str) -> Optional[str]:
    """cuDNN's integer version (8906, 91000) as a release; a dotted one as is."""
    return decode_cudnn(int(number)) if number.isdigit() else (number if ver(number) else None)


# Each framework's wording, with the groups in the order (runtime, compiled) after `order` says which comes first.
_VERSION_TEXTS = (
    ("TensorFlow/XLA", re.compile(r"Loaded runtime CuDNN library:\s*([\d.]+)(?:\s*\(compatibility version \d+\))?"
                                  r"\s*but source was compiled with:?\s*([\d.]+?)\.?(?:\s|$|\()", re.I), "rc"),
    ("PyTorch", re.compile(r"compiled\s+against\s+\((\d+),\s*(\d+),\s*(\d+)\)\s+but\s+(?:found runtime version|"
                           r"linked against)\s+\((\d+),\s*(\d+),\s*(\d+)\)"), "c3r3"),
    ("PyTorch", re.compile(r"PyTorch was compiled\s+against\s+(\d{4,6})\s+but\s+linked against\s+(\d{4,6})"), "cr"),
    ("JAX", re.compile(r"Found cuDNN version (\d+), but JAX was built against version (\d+)"), "rc"),
    ("JAX", re.compile(r"Minimum supported:\s*(\d+)\s*Installed version:\s*(\d+)"), "cr"),
    ("Theano", re.compile(r"header is version (\d+) while the library is version (\d+)"), "cr"),
)


def parse_versions(text: str) -> PastedVersions:
    """The cuDNN versions (and a demanded CUDA) an error text states, in the first wording that matches."""
    out = PastedVersions()
    for framework, pattern, order in _VERSION_TEXTS:
        m = pattern.search(text or "")
        if not m:
            continue
        g = m.groups()
        if order == "c3r3":
            out.compiled, out.runtime = _triple(g[:3]), _triple(g[3:])
        elif order == "rc":
            out.runtime, out.compiled = _encoded(g[0].rstrip(".")), _encoded(g[1].rstrip("."))
        else:
            out.compiled, out.runtime = _encoded(g[0]), _encoded(g[1])
        out.framework = framework
        break
    cuda = re.search(r"(?:unsatisfied condition: )?cuda>=\s*(\d+\.\d+)", text or "")
    if cuda:
        out.cuda_required = cuda.group(1)
    return out


def alternatives(text: str) -> List[List[str]]:
    """Lists of names a program tries in turn ("Unable to load any of {a, b, c}"): one of each list is enough."""
    return [[n.strip() for n in group.split(",") if n.strip()]
            for group in re.findall(r"Unable to load any of \{([^}]*)\}", text or "")]
