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
# dev/heldout: issue 30's corpus; dev2/frozen: the cases issue 44 added, frozen drawn before any work on them; fresh,
# fresh2 to fresh14: samples of threads no split held, each scored before any work on it (pastes nobody here had seen).
SPLITS = ("dev", "heldout", "dev2", "frozen", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7",
          "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14")
ISSUE30_SPLITS = ("dev", "heldout")
ISSUE44_SPLITS = ("dev2", "frozen")
HIDDEN_SPLITS = ("heldout", "frozen")  # their misses are never shown while tuning
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
    # Kinds added with issue 44's corpus, each with what a fix of that kind does.
    # Upgrade libnvidia-container / the toolkit whose bug broke the mount.
    "upgrade-container-toolkit": (r"(upgrade|update|install|reinstall)\b.{0,80}(libnvidia-container|"
                                  r"nvidia-container-toolkit|nvidia-docker2|container toolkit)"),
    # The image carries driver files the runtime mounts from the host ("file exists"): take them out of the image.
    "rebuild-image-without-driver": (r"(remove|uninstall|purge|delete|drop)\b.{0,80}(driver|nvidia-smi|libnvidia|"
                                     r"libcuda).{0,80}(image|container|Dockerfile)|(image|container|Dockerfile)"
                                     r".{0,80}(must not|should not|without).{0,80}"
                                     r"(driver|libnvidia|nvidia-smi|libcuda)"),
    # Secure Boot refused the unsigned module: enrol a key (MOK) and sign it, or turn Secure Boot off.
    "sign-module-or-disable-secure-boot": r"secure ?boot|mokutil|\bMOK\b|sign.{0,40}module|kmodsign",
    # No module built for the running kernel: build it (DKMS, headers).
    "rebuild-kernel-module": (r"\bdkms\b|linux-headers|(re)?(build|install)\b.{0,60}(kernel module|nvidia-dkms|"
                              r"linux-modules-nvidia)"),
    # Two wheels ship the same library (nvidia-nccl-cu12 and -cu13): uninstall the one that does not belong.
    "remove-duplicate-wheel": (r"(pip|pip3|uv pip) uninstall\b.{0,80}nvidia-|uninstall\b.{0,80}"
                               r"(nvidia-[\w-]+-cu1\d|duplicate|conflicting|second)"),
    # The file exists under another name (a hashed soname, WSL's copies): link the expected name to it.
    "create-symlink": r"\bln -s|symlink|symbolic link|mklink",
    # TensorRT itself is missing.
    "install-tensorrt": r"(install|upgrade)\b.{0,80}(tensorrt|libnvinfer)",
    # cuDNN cannot run this layer or GPU: use the framework's own engine (Caffe's engine: CAFFE) or build without it.
    "switch-engine": r"engine: ?CAFFE|cudnn\.enabled ?= ?False|disable cuDNN|without cuDNN|USE_CUDNN",
    # The GPU is below what the library supports at all: only another GPU helps.
    "use-supported-gpu": (r"(newer|different|supported|another) GPU|compute capability \d\.\d or (higher|newer|above)|"
                          r"GPU is (too old|not supported)"),
    # A Windows DLL's own dependency, the Visual C++ runtime, is missing.
    "install-vc-redist": r"vc_?redist|Visual C\+\+ (Redistributable|runtime)|MSVC (runtime|redistributable)|msvcp140",
    # TensorRT has no creator for the op: implement, build or load the plugin (not an install problem).
    "register-trt-plugin": (r"plugin.{0,80}(implement|register|load|init|build|compile)|(implement|register|load|"
                            r"initLibNvInferPlugins|init_libnvinfer_plugins|compile).{0,80}plugin"),
    # CUDA_VISIBLE_DEVICES hides every GPU or names one that does not exist.
    "fix-visible-devices": r"CUDA_VISIBLE_DEVICES",
    # No wheel exists for this Python: use a Python the release was built for.
    "use-supported-python": (r"Python 3\.\d+.{0,80}(environment|venv|install|supported|instead)|"
                             r"(downgrade|upgrade|use|install|create)\b.{0,60}Python 3\.\d+|"
                             r"no (wheel|build)s? for Python"),
    # NVSwitch systems answer 802 until the branch-matched Fabric Manager runs.
    "install-fabricmanager": r"fabric ?manager|nvidia-fabricmanager|\bDCGM\b|nvlsm",
    # Lua Torch7's cudnn.torch bindings are per cuDNN major (R5, R6, R7 branches): install the matching branch.
    "install-matching-bindings": (r"(R[5-9]\b|branch).{0,80}(cudnn\.torch|bindings)|(cudnn\.torch|bindings).{0,80}"
                                  r"(R[5-9]\b|branch)|luarocks"),
    # The container was started without GPU access: start it with the GPUs.
    "start-container-with-gpus": (r"--gpus|--runtime[= ]nvidia|NVIDIA_VISIBLE_DEVICES|--device[= ]nvidia\.com/gpu|"
                                  r"nvidia\.com/gpu"),
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


def outcome(g: Grade) -> str:
    """right (recognised, cause and fix), partial (one of cause and fix), wrong (neither), unrecognised."""
    if not g.recognised:
        return "unrecognised"
    if g.cause and g.fix:
        return "right"
    return "partial" if (g.cause or g.fix) else "wrong"


OUTCOMES = ("right", "partial", "wrong", "unrecognised")


def outcome_counts(grades: List[Grade]) -> Dict[str, int]:
    counts = {name: 0 for name in OUTCOMES}
    for g in grades:
        counts[outcome(g)] += 1
    return counts


def format_outcomes(split: str, grades: List[Grade]) -> str:
    counts = outcome_counts(grades)
    return "%s: %d cases; %s" % (split, len(grades), ", ".join("%s %d" % (k, counts[k]) for k in OUTCOMES))


def hardest(grades: List[Grade], n: int = 10) -> List[Grade]:
    """The misses furthest from right: unrecognised, then wrong, then partial; more missing causes first."""
    rank = {"unrecognised": 0, "wrong": 1, "partial": 2}
    misses = [g for g in grades if not g.right]
    return sorted(misses, key=lambda g: (rank[outcome(g)], -len(g.missing), g.case_id))[:n]


def canonical(case: Dict[str, Any]) -> bytes:
    """A case as the bytes its recorded SHA-256 is taken of: keys sorted, no spaces, UTF-8."""
    return json.dumps(case, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def case_digest(case: Dict[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(canonical(case)).hexdigest()


def draw_frozen(ids: Iterable[str], seed: int, share: float = 0.3) -> List[str]:
    """Issue 44's draw: the new ids sorted, shuffled by random.Random(seed), the first round(share * n) frozen."""
    import random

    pool = sorted(ids)
    random.Random(seed).shuffle(pool)
    return sorted(pool[:round(share * len(pool))])


def frozen_hashes() -> Dict[str, str]:
    """tests/data/explain_corpus/frozen.sha256: one `<sha256>  <id>` line per frozen case."""
    digests = {}
    for line in (CORPUS / "frozen.sha256").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            digest, case_id = line.split()
            digests[case_id] = digest
    return digests


def assert_answer(text: str, cause: List[str], fix: List[str], not_in_fix: List[str]) -> None:
    """explain --no-check answers `text`, its cause saying each of `cause`, its fix each of `fix` and none of
    `not_in_fix` (the family tests' one check)."""
    from cudnn_doctor.explain import explain

    ex = explain(text, check=False).explanation
    assert ex.answer is not None, text
    assert [c for c in cause if c not in ex.answer.cause] == [], ex.answer.cause
    assert [f for f in fix if f not in ex.fix.text] == [], ex.fix.text
    assert [f for f in not_in_fix if f in ex.fix.text] == [], ex.fix.text
