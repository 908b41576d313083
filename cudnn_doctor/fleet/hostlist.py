"""Slurm's compressed hostlist notation: gpu001..gpu004 and gpu007 become `gpu[001-004,007]`."""
from __future__ import annotations

import re
from collections import defaultdict
from typing import Dict, Iterable, List, Tuple

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def compress(names: Iterable[str]) -> str:
    """Names sharing a prefix and a padding width fold into one bracket; others stay as they are."""
    numbered: Dict[Tuple[str, int], set] = defaultdict(set)
    plain: set = set()
    for name in names:
        m = _TRAILING_NUMBER.match(name)
        if m and m.group(1) and not m.group(1).endswith(("[", ",")):
            digits = m.group(2)
            # Zero-padded numbers keep their width; unpadded ones (a9, a10) share one bracket as in Slurm.
            width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
            numbered[(m.group(1), width)].add(int(digits))
        else:
            plain.add(name)
    parts: List[Tuple[str, str]] = [(name, name) for name in plain]
    for (prefix, width), numbers in numbered.items():
        ranges = _ranges(sorted(numbers))
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
            parts.append((prefix, "%s%0*d" % (prefix, width, ranges[0][0])))
            continue
        body = ",".join("%0*d" % (width, a) if a == b else "%0*d-%0*d" % (width, a, width, b) for a, b in ranges)
        parts.append((prefix, "%s[%s]" % (prefix, body)))
    return ",".join(text for _, text in sorted(parts))


def expand(hostlist: str) -> List[str]:
    """The inverse of `compress` (for tests and scripts): `gpu[001-002],login` -> gpu001, gpu002, login."""
    out: List[str] = []
    for prefix, body, plain in re.findall(r"([^,\[]+)\[([^\]]*)\]|([^,\[\]]+)", hostlist):
        if plain:
            out.append(plain)
            continue
        for piece in body.split(","):
            a, _, b = piece.partition("-")
            width = len(a) if a.startswith("0") and len(a) > 1 else 0
            out += ["%s%0*d" % (prefix, width, n) for n in range(int(a), int(b or a) + 1)]
    return out


def _ranges(numbers: List[int]) -> List[Tuple[int, int]]:
    ranges: List[Tuple[int, int]] = []
    for n in numbers:
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], n)
        else:
            ranges.append((n, n))
    return ranges
