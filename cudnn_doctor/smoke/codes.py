"""Status-code names and their diagnosis and fix, read from compat/status_codes.toml."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..knowledge import load_compat


@dataclass
class Explanation:
    name: str
    headline: str
    diagnosis: str
    fix: str
    catalogue: List[str] = field(default_factory=list)


def table() -> Dict[str, Any]:
    """compat/status_codes.toml, read once with the rest of the knowledge base."""
    return load_compat().status_codes()


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


def diagnosis_entries() -> Dict[str, Dict[str, Any]]:
    """[diagnosis.NAME] entries, without the table's own source/status keys."""
    return {k: v for k, v in table()["diagnosis"].items() if isinstance(v, dict)}


def explain(name: str, code: Optional[int] = None, cudnn_version: Optional[int] = None) -> Explanation:
    """The words for a status name, following same_as; cuDNN 9 sub-codes fall back to their category."""
    entries = diagnosis_entries()
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
