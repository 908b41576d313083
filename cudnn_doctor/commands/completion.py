"""The values TAB offers for options (`check --format <TAB>`): typer asks these at completion time, through the
same shim in every shell (completions/), so bash, zsh, fish and PowerShell all see them."""
from __future__ import annotations

from typing import List, Tuple

FORMATS = (("human", "the doctor's report"), ("json", "one JSON object"),
           ("github", "::error/::warning annotations"), ("prometheus", "node_exporter textfile metrics"))
DTYPES = (("fp32", "float32"), ("tf32", "float32 with TF32 tensor cores"), ("fp16", "float16"),
          ("bf16", "bfloat16"))


def _starting(items, incomplete: str) -> List[Tuple[str, str]]:
    return [(value, help_) for value, help_ in items if value.startswith(incomplete or "")]


def formats(incomplete: str) -> List[Tuple[str, str]]:
    return _starting(FORMATS, incomplete)


def dtypes(incomplete: str) -> List[Tuple[str, str]]:
    return _starting(DTYPES, incomplete)


def checks(incomplete: str) -> List[Tuple[str, str]]:
    """Check ids and aliases, for --skip."""
    from ..diagnose import known_checks

    items = [(rid, title) for rid, _, title in known_checks()] + [(alias, rid) for rid, alias, _ in known_checks()
                                                                  if alias]
    return _starting(items, incomplete)


def targets(incomplete: str) -> List[Tuple[str, str]]:
    return _starting((("torch", "PyTorch"), ("tensorflow", "TensorFlow"), ("jax", "JAX"),
                      ("dl4j", "Deeplearning4j")), incomplete)


def cudnn_versions(incomplete: str) -> List[Tuple[str, str]]:
    """The cuDNN releases `install --version` can fetch (NVIDIA publishes their manifests), newest first."""
    from ..knowledge import load_compat
    from ..versions import version_of

    compat = load_compat()
    fetchable = [r for r in compat.cudnn_releases() if compat.installer_fetches(r)]
    return _starting([(r, "cuDNN %s" % r) for r in sorted(set(fetchable), key=version_of, reverse=True)], incomplete)


def cuda_majors(incomplete: str) -> List[Tuple[str, str]]:
    """CUDA majors NVIDIA builds cuDNN for, one release per major (what `install --cuda` takes)."""
    from ..knowledge import load_compat
    from ..versions import mm_of

    compat = load_compat()
    majors = sorted({mm_of(c)[0] for c in compat.cuda_releases() if compat.has_minor_compat(mm_of(c)[0])
                     and compat.newest_cudnn_build(str(mm_of(c)[0]))}, reverse=True)
    return _starting([(str(m), "CUDA %d.x" % m) for m in majors], incomplete)
