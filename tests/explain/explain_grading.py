"""Grades `cudnn-doctor explain --no-check --json` on the real-text corpus (tests/data/explain_corpus): is the
text recognised, are the causes its thread settled on named, and does the fix do what that thread's fix did.

A case says what a right answer holds, never how the decoder should find it:
- `cause_keywords`: regular expressions (case-insensitive, "|" for alternatives) that must all occur in the
  answer: the JSON's string values, less those that only echo or locate the input (patterns, ids, report URLs).
- `fix_kind`: what a right fix does; FIX_KINDS maps each kind to what a fix of that kind says. The answer's fix
  is every string under a key named fix, fixes, remedy, remedies, commands or steps; a payload that names its
  own kind (`fix_kind`, a string or a list) is taken at its word.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

CORPUS = Path(__file__).resolve().parents[1] / "data" / "explain_corpus"
SPLITS = ("dev", "heldout")
PLATFORMS = ("linux", "windows", "wsl", "container", "macos")
FIELDS = ("id", "url", "platform", "framework", "family", "cause_keywords", "fix_kind", "text", "resolution")

# Keys whose values only echo or locate the input, so a keyword found there proves nothing about the answer.
NOT_ANSWER = frozenset({"pattern", "reports", "tool", "command", "schema_version", "rules", "catalogue", "id",
                        "exit_code", "text", "paste", "input", "excerpt", "source", "sources", "url", "urls"})
FIX_KEYS = frozenset({"fix", "fixes", "remedy", "remedies", "commands", "steps"})

_CUDNN = r"(install|upgrade|update|copy|reinstall|downgrade)\b.{0,80}cudnn|nvidia-cudnn|libcudnn\d|cudnn[\w.-]*=="
_RUNTIME = (r"(install|add)\b.{0,80}(cuda|cudart|cublas|nvrtc|runtime|toolkit)|"
            r"nvidia-(cuda-runtime|cublas|cuda-nvrtc|cuda-nvcc)|cuda-(runtime|libraries|toolkit)-\d")
_FRAMEWORK = (r"\b(pip|pip3|conda|uv) (install|uninstall)\b|reinstall|--force-reinstall|torch==|jax\[cuda|"
              r"onnxruntime-gpu|ctranslate2|paddlepaddle-gpu|mxnet-cu|tensorflow\[and-cuda\]")
_SEARCH_PATH = r"LD_LIBRARY_PATH|ldconfig|ld\.so\.conf"

# What a fix of each kind says. A fix counts as the expected kind when its text matches that kind's pattern.
FIX_KINDS: Dict[str, str] = {
    "upgrade-driver": (r"(install|upgrade|update)\b.{0,80}driver|driver.{0,80}(newer|at least|>=|or later|"
                       r"upgrade|update)|nvidia-driver-\d+|cuda-drivers"),
    "match-driver-userspace": (r"(libcuda|user[- ]?(mode|space)|libnvidia-compute|compat(ibility)? "
                               r"(lib|package)).{0,120}(kernel|module|match)|(kernel|module).{0,120}"
                               r"(libcuda|user[- ]?(mode|space))|reboot"),
    "reload-driver": (r"reboot|restart (the )?(machine|computer|host|system)|rmmod|modprobe|"
                      r"reload.{0,30}(module|driver)|nvidia_uvm"),
    "install-container-toolkit": r"nvidia-container-toolkit|container toolkit|nvidia-ctk",
    "fix-container-device-access": r"cgroup|--device|/dev/nvidia|daemon-reload|\bCDI\b|create-dev-char-symlinks",
    "install-cuda-runtime": _RUNTIME,
    "install-matching-cuda": _RUNTIME + "|" + _FRAMEWORK,
    "install-cudnn": _CUDNN,
    "install-cudnn-for-cuda-X": _CUDNN,
    "install-matching-cudnn": _CUDNN,
    "upgrade-cudnn": _CUDNN,
    "reinstall-cudnn": _CUDNN,
    "install-cudnn-dependency": _CUDNN + r"|zlib",
    "fix-LD_LIBRARY_PATH": _SEARCH_PATH,
    "fix-dll-path": r"\bPATH\b|add_dll_directory",
    "remove-shadowing-copy": (r"(remove|drop|unset|delete|uninstall|rename)\b.{0,80}"
                              r"(LD_LIBRARY_PATH|PATH|copy|/usr/local/cuda|shadow|lib)|LD_LIBRARY_PATH"),
    "increase-paging-file": r"paging file|page ?file|virtual memory",
    "rebuild-for-arch": (r"(re)?(build|compile).{0,80}(sm_\d+|compute[ _]capability|arch)|-gencode|"
                         r"CMAKE_CUDA_ARCHITECTURES|TORCH_CUDA_ARCH_LIST"),
    "install-framework-with-arch": (r"(install|upgrade)\b.{0,80}(torch|pytorch|build|wheel).{0,80}"
                                    r"(cu1[23]\d|CUDA 1[23]|sm_\d+)|download\.pytorch\.org/whl/cu"),
    "install-framework-for-cuda": _FRAMEWORK,
    "install-matching-framework": _FRAMEWORK,
    "reinstall-framework": _FRAMEWORK,
    "rebuild-against-installed-cuda": r"(re)?(build|compile)\b|" + _FRAMEWORK,
    "reduce-memory": (r"(GPU|device|CUDA|video) memory|less memory|batch size|allow_growth|memory_growth|"
                      r"PYTORCH_CUDA_ALLOC_CONF"),
    "rebuild-engine": r"(re)?(build|create|generate)\b.{0,40}engine|trtexec|engine.{0,40}(rebuild|re-?create)",
    "ignore": r"harmless|ignore|no action|nothing to (do|fix)|safe to",
    "upgrade-ptxas": r"ptxas|nvidia-cuda-nvcc|cuda-nvcc",
    "set-xla-cuda-dir": r"xla_gpu_cuda_data_dir|XLA_FLAGS|nvidia-cuda-nvcc|libdevice",
    "upgrade-libstdcxx": r"libstdc\+\+|libstdcxx|GLIBCXX|\bgcc\b",
    "debug-nccl": r"NCCL_DEBUG",
    "increase-shm": r"--ipc=host|shm-size|/dev/shm|shared memory",
    "fix-cuda-environment": r"(install|reinstall|check|load)\b.{0,60}(driver|cuda)",
    "clear-cache": r"~/\.nv|ComputeCache|CUDA_CACHE",
}


def load_split(split: str) -> Dict[str, Any]:
    """One split's file as stored: {"meta": ..., "cases": [...]}."""
    with open(CORPUS / ("%s.json" % split), encoding="utf-8") as fh:
        return json.load(fh)


def cases(split: str) -> List[Dict[str, Any]]:
    return load_split(split)["cases"]


def _strings(node: Any, skip: frozenset, keep_under: Optional[frozenset] = None, kept: bool = False) -> Iterable[str]:
    """Every string leaf of a JSON value, skipping keys in `skip`; with `keep_under`, only leaves under such keys."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in skip:
                continue
            yield from _strings(value, skip, keep_under, kept or (keep_under is not None and key in keep_under))
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value, skip, keep_under, kept)
    elif isinstance(node, str) and (keep_under is None or kept):
        yield node


def answer_text(payload: Dict[str, Any]) -> str:
    return "\n".join(_strings(payload, NOT_ANSWER))


def fix_text(payload: Dict[str, Any]) -> str:
    return "\n".join(_strings(payload, NOT_ANSWER, FIX_KEYS))


def recognised(payload: Dict[str, Any]) -> bool:
    """explain understood the text: it says so, or it matched a pattern, named a library or read a version."""
    if "understood" in payload:
        return bool(payload["understood"])
    versions = payload.get("versions") or {}
    return bool(payload.get("matches") or payload.get("libraries_named")
                or any(v for k, v in versions.items() if k != "framework"))


def fix_kinds_said(payload: Dict[str, Any]) -> List[str]:
    """The fix kinds the answer's fix is of: its own word, else every kind whose pattern its fix text matches."""
    own = payload.get("fix_kind")
    if own:
        return [own] if isinstance(own, str) else list(own)
    text = fix_text(payload)
    return [kind for kind, pattern in FIX_KINDS.items() if text and re.search(pattern, text, re.I | re.S)]


@dataclass
class Grade:
    case_id: str
    family: str
    recognised: bool
    cause: bool
    fix: bool
    missing: List[str] = field(default_factory=list)  # cause keywords not found in the answer
    kinds: List[str] = field(default_factory=list)  # fix kinds the answer's fix is of

    @property
    def right(self) -> bool:
        return self.recognised and self.cause and self.fix


def grade(case: Dict[str, Any], payload: Dict[str, Any]) -> Grade:
    text = answer_text(payload)
    missing = [kw for kw in case["cause_keywords"] if not re.search(kw, text, re.I)]
    kinds = fix_kinds_said(payload)
    return Grade(case["id"], case["family"], recognised(payload), not missing, case["fix_kind"] in kinds,
                 missing, kinds)


def run_explain(text: str) -> Dict[str, Any]:
    """`cudnn-doctor explain --no-check --json -` in this process, the text on stdin; its JSON payload."""
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    result = CliRunner().invoke(app, ["explain", "--no-check", "--json", "-"], input=text)
    return json.loads(result.stdout)


def grade_split(split: str) -> List[Grade]:
    return [grade(case, run_explain(case["text"])) for case in cases(split)]


def tally(grades: List[Grade]) -> Dict[str, int]:
    return {"cases": len(grades), "recognised": sum(g.recognised for g in grades),
            "cause": sum(g.cause for g in grades), "fix": sum(g.fix for g in grades),
            "right": sum(g.right for g in grades)}


def floors() -> Dict[str, Dict[str, int]]:
    """The recorded least tally per split (tests/data/explain_corpus/floors.json); the lead raises them."""
    with open(CORPUS / "floors.json", encoding="utf-8") as fh:
        return json.load(fh)["floors"]


def format_tally(split: str, counts: Dict[str, int]) -> str:
    n = counts["cases"] or 1
    parts = ["%s %d/%d (%.0f%%)" % (key, counts[key], counts["cases"], 100.0 * counts[key] / n)
             for key in ("recognised", "cause", "fix", "right")]
    return "%s: %d cases; %s" % (split, counts["cases"], "; ".join(parts))


def format_miss(g: Grade) -> str:
    lacks = []
    if not g.recognised:
        lacks.append("not recognised")
    if not g.cause:
        lacks.append("cause lacks " + ", ".join(repr(k) for k in g.missing))
    if not g.fix:
        lacks.append("fix is %s" % ("/".join(g.kinds) if g.kinds else "none"))
    return "%s [%s]: %s" % (g.case_id, g.family, "; ".join(lacks))
