"""--require and --for expressions: parsing them, and the compat rows a --for target names (rules: require.py,
target.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..knowledge import Compat
from ..versions import ver, version_of
from ..require_keys import REQUIRE_KEYS

_KEY_ALIASES = {"compute_capability": "cc", "sm": "cc", "nvidia-driver": "driver", "cuda-toolkit": "toolkit"}

_FRAMEWORKS = {"torch": "torch", "pytorch": "torch", "tensorflow": "tensorflow", "tf": "tensorflow",
               "tensorflow-gpu": "tensorflow", "jax": "jax", "jaxlib": "jax", "dl4j": "dl4j",
               "deeplearning4j": "dl4j", "nd4j": "dl4j"}



@dataclass
class Requirement:
    key: str
    spec: SpecifierSet
    text: str


@dataclass
class Target:
    framework: str  # torch, tensorflow, jax, dl4j
    version: Optional[str]
    text: str


def parse_requirement(expr: str) -> Requirement:
    """'cudnn>=8.9,<10' -> Requirement; a one-line ValueError for anything else."""
    m = re.fullmatch(r"\s*([A-Za-z][A-Za-z_-]*)\s*(.*?)\s*", expr or "")
    if not m:
        raise ValueError("expected KEY followed by a version comparison, e.g. 'cudnn>=8.9' (keys: %s)" %
                         ", ".join(REQUIRE_KEYS))
    key = _KEY_ALIASES.get(m.group(1).lower(), m.group(1).lower())
    if key not in REQUIRE_KEYS:
        raise ValueError("unknown key %r; use one of: %s" % (m.group(1), ", ".join(REQUIRE_KEYS)))
    rest = m.group(2)
    if not rest or not re.match(r"(===|==|!=|~=|<=|>=|<|>)", rest):
        raise ValueError("%r needs a version comparison such as %s>=%s" % (
            expr, key, {"driver": "535", "cc": "7.0", "cudnn": "8.9"}.get(key, "11.8")))
    try:
        spec = SpecifierSet(rest.replace(" ", ""))
    except InvalidSpecifier:
        raise ValueError("%r is not a valid version comparison (write e.g. >=8.9,<10)" % rest) from None
    if not len(spec):
        raise ValueError("%r has no version comparison" % expr)
    return Requirement(key, spec, expr.strip())


def parse_target(text: str, compat: Compat) -> Target:
    """'dl4j==1.0.0-beta6' -> Target; a one-line ValueError when the framework or version is unknown.

    Rules pass RuleContext.compat; the CLI's up-front validation passes the knowledge base it loaded."""
    m = re.fullmatch(r"\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?:==\s*(\S+))?\s*", text or "")
    if not m:
        raise ValueError("expected FRAMEWORK or FRAMEWORK==VERSION (frameworks: torch, tensorflow, jax, dl4j)")
    name = _FRAMEWORKS.get(m.group(1).lower())
    if name is None:
        raise ValueError("unknown framework %r; use torch, tensorflow, jax or dl4j" % m.group(1))
    version = m.group(2)
    if version:
        if name == "dl4j":
            known = compat.dl4j_releases()
            match = next((k for k in known if k.lower() == version.lower()), None)
            if match is None:
                raise ValueError("no compat data for DL4J %s; known releases: %s" % (version, ", ".join(known)))
            version = match
        elif name == "tensorflow" and tf_row(compat, version, "linux") is None:
            raise ValueError("no compat data for TensorFlow %s (known: 1.0-%s)" % (
                version, compat.framework_rows("tensorflow_linux")[0]["tensorflow"]))
        elif name == "torch" and not torch_rows(compat, version):
            raise ValueError("no compat data for PyTorch %s (known: %s)" % (
                version, ", ".join(sorted({r["torch"] for r in compat.framework_rows("pytorch")}, key=version_of))))
        elif ver(version.split("+")[0]) is None:
            raise ValueError("%r is not a version" % version)
    return Target(name, version, text.strip())


def tf_row(compat: Compat, version: str, platform: str) -> Optional[Dict[str, Any]]:
    return compat.tensorflow_row(version, platform)


def torch_rows(compat: Compat, version: str) -> List[Dict[str, Any]]:
    return compat.torch_rows(version)


def cuda_of(text: str) -> str:
    """TensorFlow's table writes '9' and '10' for 9.0 and 10.0."""
    return text if "." in text else text + ".0"

