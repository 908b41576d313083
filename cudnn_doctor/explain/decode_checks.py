"""Framework version checks in a pasted text ("Loaded runtime CuDNN library: X but source was compiled with: Y",
PyTorch's tuples, JAX, PaddlePaddle, TensorRT, ONNX Runtime), judged by that framework's own rule from
compat/frameworks.toml [version_checks]."""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from ..knowledge import Compat
from ..versions import decode_cudnn, ver
from .evidence import VersionCheck
from .parse import parse_versions
from .paste_facts import PasteFacts

# (framework, library, pattern, order): order "rc" = runtime first, "cr" = compiled first.
_MORE = (
    ("PaddlePaddle", "cuDNN", re.compile(r"compiled with CUDNN ([\d.]+), but CUDNN version in your machine is "
                                         r"([\d.]+)", re.I), "cr"),
    ("PaddlePaddle", "CUDA", re.compile(r"compiled with CUDA ([\d.]+), but CUDA runtime version in your machine "
                                        r"is ([\d.]+)", re.I), "cr"),
    # TensorRT's own words, and as users retell them ("tensorrt is linked to cuDNN 8.6.0 but cuDNN 8.5.0 is loaded")
    ("TensorRT", "cuDNN", re.compile(r"TensorRT (?:was|is) linked (?:against|to) cuDNN ([\d.]+),? but (?:loaded )?"
                                     r"cuDNN ([\d.]+)", re.I), "cr"),
    ("TensorRT", "TensorRT", re.compile(r"expecting library version ([\d.]+) got ([\d.]+)"), "rc"),
)
_ORT = re.compile(r"Require cuDNN (\d+)\.\* and CUDA (\d+)\.\*")
# Lua Torch7's cudnn.torch: the major its branch binds, and the loaded cuDNN's cudnnGetVersion() number
_TORCH7 = re.compile(r"These bindings are for CUDNN (\d{1,2})\.x\b[^\n]{0,60}?while the loaded CuDNN is version:?[ \t]*"
                     r"(\d{4,5})\b", re.I)


def _parts(release: str) -> Tuple[int, ...]:
    v = ver(release)
    return tuple(v.release) + (0, 0) if v is not None else (0, 0, 0)


def fits(rule: str, runtime: str, compiled: str) -> bool:
    """Whether `runtime` passes the check of a program built with `compiled` under `rule`."""
    r, c = _parts(runtime), _parts(compiled)
    if rule == "same-minor":
        return r[:2] == c[:2]
    if rule == "same-major-newer-minor":
        return r[0] == c[0] and r[1] >= c[1]
    if rule == "not-older":  # major.minor, as the checks compare them
        return r[:2] >= c[:2]
    if rule == "same-major":
        return r[0] == c[0]
    return ver(runtime) == ver(compiled)


def _check(compat: Compat, framework: str, library: str, runtime: str, compiled: str) -> Optional[VersionCheck]:
    row = compat.version_check_rule(framework, library)
    if row is None or not compiled:
        return None
    ok = bool(runtime) and fits(row["rule"], runtime, compiled)
    return VersionCheck(framework, library, runtime, compiled, row["rule"], ok, row["source"])


def _environment_cudnn(facts: PasteFacts, compat: Compat) -> str:
    """The cuDNN the paste's environment has: one it says was loaded, else the one its PyTorch build pins
    (torch 2.3.1+cu121: 8.9.2.26, compat [pytorch]); "" where it says neither."""
    if facts.cudnn_loaded is not None:
        return facts.cudnn_loaded.value
    torch = next((p for p in facts.programs if p.name == "PyTorch" and p.release), None)
    cuda = facts.build_cuda()
    rows = compat.torch_rows(torch.release) if torch is not None and torch.release else []
    return next((str(r["cudnn"]) for r in rows if cuda and str(r["cuda"]) == cuda), "")


# ONNX Runtime's CUDA provider failing, in its own words
_PROVIDER_FAILED = re.compile(r"onnxruntime_providers_cuda|Failed to create CUDAExecutionProvider|TryGetProviderInfo_CUDA")


def _onnxruntime_release(facts: PasteFacts, compat: Compat, text: str,
                         cudas: Sequence[str]) -> List[Optional[VersionCheck]]:
    """onnxruntime-gpu's release said beside the cuDNN its environment has, or the CUDA the paste states: PyPI's
    build of that release links one cuDNN and one CUDA major (compat framework_features [onnxruntime_gpu]), the check
    ONNX Runtime's provider makes by loading them."""
    ort = next((p for p in facts.programs if p.name == "ONNX Runtime" and p.release), None)
    if ort is None or not ort.release or not _PROVIDER_FAILED.search(text):  # a version list alone: nothing failed
        return []
    build = compat.framework_build("onnxruntime_gpu", ort.release)
    if build is None:
        return []
    runtime = _environment_cudnn(facts, compat)
    # the last CUDA the text states ("installed 11.8, then upgraded to 12.4"), not the driver's (nvidia-smi's)
    driver = facts.cuda_driver.value if facts.cuda_driver else None
    cuda = next((c for c in reversed(list(cudas)) if c != driver), "")
    return [_check(compat, "ONNX Runtime", "cuDNN", runtime, str(build["cudnn_major"])) if runtime else None,
            _check(compat, "ONNX Runtime", "CUDA", cuda, str(build["cuda"])) if cuda else None]


def decode_checks(text: str, compat: Compat, facts: Optional[PasteFacts] = None,
                  cudas: Sequence[str] = ()) -> List[VersionCheck]:
    """Every version check the text prints, judged by its framework's rule; with the paste's facts, the check a
    framework release it names makes against the cuDNN it says the environment has."""
    out: List[Optional[VersionCheck]] = _onnxruntime_release(facts, compat, text, cudas) if facts is not None else []
    pasted = parse_versions(text)
    if pasted.compiled:
        framework = "TensorFlow 1.x" if "compatibility version" in text else pasted.framework
        out.append(_check(compat, framework, "cuDNN", pasted.runtime or "", pasted.compiled))
    for framework, library, pattern, order in _MORE:
        for m in pattern.finditer(text):
            runtime, compiled = (m.group(1), m.group(2)) if order == "rc" else (m.group(2), m.group(1))
            out.append(_check(compat, framework, library, runtime, compiled))
    for m in _TORCH7.finditer(text):
        out.append(_check(compat, "Torch7 cudnn.torch", "cuDNN", decode_cudnn(int(m.group(2))) or "", m.group(1)))
    for m in _ORT.finditer(text):
        out += [_check(compat, "ONNX Runtime", "cuDNN", "", m.group(1)),
                _check(compat, "ONNX Runtime", "CUDA", "", m.group(2))]
    return [c for c in out if c is not None]
