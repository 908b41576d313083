"""Status-code names and their diagnosis and fix, read from compat/status_codes.toml."""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

FILE_NAME = "status_codes.toml"


@dataclass
class Explanation:
    name: str
    headline: str
    diagnosis: str
    fix: str
    catalogue: List[str] = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def table() -> Dict[str, Any]:
    """The parsed TOML: from the installed package, else from the source tree's compat/ folder."""
    try:
        from importlib.resources import files

        text = (files("cudnn_doctor._compat") / FILE_NAME).read_bytes()
    except (ImportError, ModuleNotFoundError, FileNotFoundError, TypeError):
        text = (Path(__file__).resolve().parents[2] / "compat" / FILE_NAME).read_bytes()
    return tomllib.loads(text.decode("utf-8"))


def cudnn_numbering(version: Optional[int]) -> str:
    """cuDNN 9 renumbered every status (1001, 2000, ...); 7.x and 8.x share the small numbers."""
    return "cudnn_v9" if version is not None and version >= 90000 else "cudnn_legacy"


def status_name(api: str, code: int, cudnn_version: Optional[int] = None) -> str:
    """'CUDNN_STATUS_NOT_INITIALIZED' for ("cudnn", 1001, 90100); an honest placeholder when unknown."""
    section = {"cudnn": cudnn_numbering(cudnn_version), "cuda": "cuda_driver"}.get(api, api)
    name = table().get(section, {}).get(str(code))
    if name:
        return name
    label = {"cudnn": "cudnnStatus_t", "cuda": "CUresult", "cuda_runtime": "cudaError_t"}.get(api, api)
    return "%s %d" % (label, code)


def explain(name: str, code: Optional[int] = None, cudnn_version: Optional[int] = None) -> Explanation:
    """The words for a status name, following same_as; cuDNN 9 sub-codes fall back to their category."""
    entries = table()["diagnosis"]
    key = name
    if key not in entries and code is not None and cudnn_numbering(cudnn_version) == "cudnn_v9":
        key = status_name("cudnn", code // 1000 * 1000, cudnn_version)
    seen = set()
    while key in entries and "same_as" in entries[key] and key not in seen:
        seen.add(key)
        key = entries[key]["same_as"]
    entry = entries.get(key)
    if entry is None:
        entry = dict(entries["SMOKE_CHILD_ERROR"], headline="unexpected status %s" % name)
    return Explanation(name=name, headline=entry["headline"], diagnosis=entry["diagnosis"], fix=entry["fix"],
                       catalogue=list(entry.get("catalogue", [])))
