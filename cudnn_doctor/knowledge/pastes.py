"""Real error texts users paste (compat/error_texts.toml) and the cuDNN releases the installer can fetch
(compat/cudnn_redist.toml)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..versions import major_of, release3, ver, version_of
from .tables import Domain


@dataclass(frozen=True)
class ErrorText:
    """One reported error text, where it was reported, and what explain must read from it."""

    id: str
    text: str
    source: str
    symptom: str
    sonames: List[str] = field(default_factory=list)
    versions: Dict[str, str] = field(default_factory=dict)


class PastesKnowledge(Domain):
    def error_texts(self) -> List[ErrorText]:
        return [ErrorText(id=r["id"], text=r["text"], source=r["source"], symptom=r["symptom"],
                          sonames=list(r.get("sonames", [])), versions=dict(r.get("versions", {})))
                for r in self.data.get("error_texts", {}).get("text", [])]

    def reports_of(self, symptom_ids: List[str], limit: int = 2) -> List[ErrorText]:
        """Reported texts of these symptoms (first rows first): where a user reads how others solved it."""
        return [t for t in self.error_texts() if t.symptom in symptom_ids][:limit]

    def installer_fetches(self, release: Optional[str]) -> bool:
        """Whether NVIDIA publishes the redist manifest `cudnn-doctor install --version` needs for this release."""
        table = self.data.get("cudnn_redist", {}).get("redist", {})
        three = release3(release)
        if three is None:
            return False
        if three.major >= int(table.get("every_release_from_major", 99)):
            return True
        return any(ver(r) == three for r in table.get("releases", []))

    def newest_fetchable(self, major: int, at_least: Optional[str] = None) -> Optional[str]:
        """The newest release of a cuDNN major (below 9) with a redist manifest, not older than `at_least`."""
        table = self.data.get("cudnn_redist", {}).get("redist", {})
        floor = release3(at_least)
        fits = [r for r in table.get("releases", []) if major_of(r) == major
                and (floor is None or version_of(r) >= floor)]
        return max(fits, key=version_of) if fits else None
