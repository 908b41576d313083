"""Status-code names and their diagnosis, read from compat/status_codes.toml (the fix is built by
remedies.doctor.smoke_result_fix from the same row)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from ..knowledge import load_compat


@dataclass
class Explanation:
    name: str
    headline: str
    diagnosis: str
    catalogue: List[str] = field(default_factory=list)


def status_name(api: str, code: int, cudnn_version: Optional[int] = None) -> str:
    """'CUDNN_STATUS_NOT_INITIALIZED' for ("cudnn", 1001, 90100); an honest placeholder when unknown."""
    return load_compat().status_name(api, code, cudnn_version)


def explain(name: str, code: Optional[int] = None, cudnn_version: Optional[int] = None) -> Explanation:
    """The words for a status name, following same_as; cuDNN 9 sub-codes fall back to their category."""
    entry = load_compat().status_words(name, code, cudnn_version)
    return Explanation(name=name, headline=entry["headline"], diagnosis=entry["diagnosis"],
                       catalogue=list(entry.get("catalogue", [])))
