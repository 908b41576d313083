"""NVIDIA_REQUIRE_* expressions judged the way nvidia-container-cli judges them before it starts a container.

The semantics follow libnvidia-container's src/cli/dsl.c and src/cli/configure.c
(https://github.com/NVIDIA/libnvidia-container/blob/main/src/cli/dsl.c): a predicate is split on single spaces into
alternatives (the first alternative whose comma-separated terms all hold satisfies it; empty pieces are skipped);
a term is NAME OP VALUE with NAME one of cuda, driver, arch, brand (any case) and OP the longest run of `<>=!`,
matched against = != < <= > >= by its first characters only (so a lone `!` means `!=`, and `==` is invalid);
versions hold only digits and dots and compare number by number, trailing `.0` parts ignored; brands compare
case-insensitively with = and != only. Evaluation stops at the first term that decides, so a malformed term after
a satisfied alternative is never seen. Every requirement is judged once per visible GPU, or once without a GPU.
"""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

OPERATORS = ("=", "!=", "<", "<=", ">", ">=")  # libnvidia-container's order: the first that matches wins
_OP_CHARS = "<>=!"
_UINTMAX = (1 << 64) - 1
RULES = ("cuda", "driver", "arch", "brand")


class Unknown(Exception):
    """A term needs a value the node report does not hold (the runtime would know it; cudnn-doctor cannot)."""


class NodeValues(NamedTuple):
    """What the runtime compares: the driver's CUDA and release, one GPU's compute capability and brand word.

    None means the caller does not know it; `gpu` False means the runtime sees no GPU (arch and brand hold)."""

    cuda: Optional[str] = None
    driver: Optional[str] = None
    arch: Optional[str] = None
    brand: Optional[str] = None
    gpu: bool = True


class Outcome(NamedTuple):
    """ok: the runtime starts the container; invalid: it refuses the expression itself; message: its words."""

    ok: bool
    invalid: bool = False
    message: str = ""
    requirement: str = ""


def _number(text: str, pos: int) -> Tuple[Optional[int], int]:
    end = pos
    while end < len(text) and text[end].isdigit():
        end += 1
    if end == pos:
        return None, pos
    value = int(text[pos:end])
    return (None if value >= _UINTMAX else value), end  # strtoumax saturates: the C code calls it an error


def _skip(text: str, pos: int, chars: str) -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def compare_version(v1: str, op: str, v2: str) -> Optional[bool]:
    """dsl_compare_version: None where the C code returns -1 (a character other than digits and dots)."""
    allowed = set("0123456789.")
    if not set(v1) <= allowed or not set(v2) <= allowed:
        return None
    i = j = 0
    while i < len(v1) and j < len(v2):
        n1, end1 = _number(v1, i)
        n2, end2 = _number(v2, j)
        if n1 is None or n2 is None:
            return None
        if n1 != n2:
            if op == "=":
                return False
            if op == "!=":
                return True
            return n1 < n2 if op in ("<", "<=") else n1 > n2
        i, j = _skip(v1, end1, "."), _skip(v2, end2, ".")
    rest1, rest2 = v1[_skip(v1, i, ".0"):], v2[_skip(v2, j, ".0"):]
    if op == "!=":
        return bool(rest1 or rest2)
    if op in ("=", "<=", ">=") and not rest1 and not rest2:
        return True
    if op == "=":
        return False
    if op in ("<", "<="):
        return not rest1 and bool(rest2)
    return bool(rest1) and not rest2


def compare_string(s1: str, op: str, s2: str) -> Optional[bool]:
    if op == "=":
        return s1.lower() == s2.lower()
    if op == "!=":
        return s1.lower() != s2.lower()
    return None


def parse_term(term: str) -> Optional[Tuple[str, str, str]]:
    """(name, operator, value) as evaluate_rule reads a term; None where it answers 'invalid expression'."""
    n = next((k for k, ch in enumerate(term) if ch in _OP_CHARS), len(term))
    if n == 0 or n == len(term):
        return None
    run_end = _skip(term, n, _OP_CHARS)
    run = term[n:run_end]
    op = next((o for o in OPERATORS if len(o) >= len(run) and o[:len(run)] == run), None)
    value = term[run_end:]
    if op is None or not value:
        return None
    name = term[:n].lower()
    return (name, op, value) if name in RULES else None


def _term(term: str, node: NodeValues) -> Optional[bool]:
    parsed = parse_term(term)
    if parsed is None:
        return None
    name, op, value = parsed
    if name in ("arch", "brand") and not node.gpu:
        return True  # "No device is visible, assume the arch is ok" (configure.c)
    have = getattr(node, name)
    if have is None:
        raise Unknown(name)
    return compare_string(have, op, value) if name == "brand" else compare_version(have, op, value)


def evaluate(predicate: str, node: NodeValues) -> Outcome:
    """One NVIDIA_REQUIRE_* value on one GPU (or none), as dsl_evaluate does; raises Unknown when undecidable."""
    ret: Optional[bool] = True
    for alternative in predicate.split(" "):
        if not alternative:
            continue
        finished = True
        for term in alternative.split(","):
            if not term:
                continue
            ret = _term(term, node)
            if ret is None:
                return Outcome(False, True, "requirement error: invalid expression", predicate)
            if not ret:
                finished = False
                break
        if finished:
            break
    if ret:
        return Outcome(True, requirement=predicate)
    first = predicate.split(" ")[0]
    if first.startswith("cuda>="):
        text = ("requirement error: unsatisfied condition: %s, please update your driver to a newer version, or use "
                "an earlier cuda container" % first)
    else:
        text = "requirement error: unsatisfied condition: %s" % first
    return Outcome(False, False, text, predicate)


def judge(requirements: Sequence[str], gpus: Sequence[NodeValues], without_gpu: NodeValues) -> Outcome:
    """Every requirement on every visible GPU in order (configure_command), or once without one; first refusal."""
    for node in (list(gpus) or [without_gpu]):
        for requirement in requirements:
            outcome = evaluate(requirement, node)
            if not outcome.ok:
                return outcome
    return Outcome(True)


class Verdict(NamedTuple):
    """The runtime's answer over every brand word a GPU of unknown brand could carry."""

    outcome: Optional[Outcome]  # None: it depends on the brand (or a value the report lacks)
    refused_brands: Tuple[str, ...] = ()  # the brand words under which it is refused, when it depends on them
    unknown: str = ""  # the value the report lacks, when that is why it cannot be told


def judge_brands(requirements: Sequence[str], gpus: Sequence[NodeValues], without_gpu: NodeValues,
                 brands: Iterable[str]) -> Verdict:
    """`judge` where a GPU's brand may be unknown: tried under every brand word the runtime can see."""
    words = list(brands)
    unsure = [g for g in gpus if g.brand is None]
    try:
        if not unsure:
            return Verdict(judge(requirements, gpus, without_gpu))
        outcomes: List[Tuple[str, Outcome]] = []
        for word in words:  # the GPUs of one node share a model, and so a brand
            fixed = [NodeValues(g.cuda, g.driver, g.arch, g.brand or word, g.gpu) for g in gpus]
            outcomes.append((word, judge(requirements, fixed, without_gpu)))
    except Unknown as exc:
        return Verdict(None, unknown=str(exc))
    if all(o.ok for _, o in outcomes) or not any(o.ok for _, o in outcomes):
        return Verdict(outcomes[0][1])
    return Verdict(None, refused_brands=tuple(w for w, o in outcomes if not o.ok))


# --- what the NVIDIA Container Toolkit hands nvidia-container-cli (internal/config/image/cuda_image.go) ---------

_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool, the toolkit's reading of the flag
_LEGACY = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.\d+)?(?:[-+].*)?$")


def disables_require(env: Dict[str, str]) -> bool:
    return env.get("NVIDIA_DISABLE_REQUIRE") in _TRUE


def requirements_from_env(env: Dict[str, str]) -> Tuple[List[str], Optional[str]]:
    """(requirements, error): every NVIDIA_REQUIRE_* value but NVIDIA_REQUIRE_JETPACK*, and for a legacy image
    (CUDA_VERSION without NVIDIA_REQUIRE_CUDA) `cuda>=MAJOR.MINOR`; none when NVIDIA_DISABLE_REQUIRE is true.
    The toolkit walks a Go map (no fixed order); they are sorted by name here so a report is stable."""
    if disables_require(env):
        return [], None
    found = [env[name] for name in sorted(env)
             if name.startswith("NVIDIA_REQUIRE_") and not name.startswith("NVIDIA_REQUIRE_JETPACK")]
    if env.get("CUDA_VERSION") and not env.get("NVIDIA_REQUIRE_CUDA"):
        m = _LEGACY.match(env["CUDA_VERSION"])
        if not m:
            return found, "failed to get version: invalid CUDA_VERSION %r" % env["CUDA_VERSION"]
        found.append("cuda>=%s.%s" % (m.group(1), m.group(2) or "0"))
    return found, None
