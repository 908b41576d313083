"""Package records: wheel METADATA and *.dist-info names, conda-meta JSON, dpkg's status file."""
from __future__ import annotations

import ast
import json
import re
from typing import Any, Dict, List, Optional, Tuple

_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.dist-info$")


_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: 'Nvidia_CUDNN.cu12' -> 'nvidia-cudnn-cu12'."""
    return _SEPARATORS.sub("-", name).lower()


def dist_info_name(entry: str) -> Optional[Tuple[str, str]]:
    """(normalised name, version) of a '<name>-<version>.dist-info' folder name; None for anything else."""
    # A site-packages folder lists hundreds of names, most of them packages and their files.
    m = _DIST_INFO.match(entry) if entry.endswith(".dist-info") else None
    return (normalize_name(m.group("name")), m.group("version")) if m else None


def parse_metadata(text: str) -> Dict[str, List[str]]:
    """The header fields of a wheel's METADATA (each may repeat, e.g. Requires-Dist); the body is ignored."""
    fields: Dict[str, List[str]] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        if ":" in line and not line.startswith(" "):
            key, value = line.split(":", 1)
            fields.setdefault(key.strip(), []).append(value.strip())
    return fields


def parse_conda_record(text: str) -> Optional[Dict[str, str]]:
    """name, version, build and the cuDNN requirement of a conda-meta/*.json record; None when damaged."""
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    # A package's own cuDNN requirement lives in its depends list ("cudnn >=9.1.1.17,<10.0a0").
    depends: List[Any] = data["depends"] if isinstance(data.get("depends"), list) else []
    cudnn_deps = [d for d in depends if isinstance(d, str) and d.split()[:1] in (["cudnn"], ["libcudnn"])]
    return {"name": str(data.get("name", "")), "version": str(data.get("version", "")),
            "build": str(data.get("build", "")), "cudnn_depends": "; ".join(cudnn_deps)}


def dpkg_status_version(status_text: str, package: str) -> Optional[str]:
    """The Version of ``package`` in /var/lib/dpkg/status; None when it is not listed."""
    m = re.search(r"^Package: %s\n(?:[^\n]+\n)*?Version: ([^\n]+)" % re.escape(package), status_text, re.M)
    return m.group(1).strip() if m else None


def parse_tf_build_info(text: str) -> Dict[str, object]:
    """tensorflow/python/platform/build_info.py's `build_info` (what tf.sysconfig.get_build_info() returns), read
    without running it: a dict literal (`{'cuda_version': '12.2'}`) or OrderedDict([('cuda_version', '12.2'), ...])."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "build_info"
                                                     for t in node.targets)):
            continue
        value = node.value
        if isinstance(value, ast.Call) and value.args:  # collections.OrderedDict([...])
            value = value.args[0]
        try:
            found = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError):
            return {}
        try:
            return {str(k): v for k, v in dict(found).items()}
        except (TypeError, ValueError):
            return {}
    return {}
