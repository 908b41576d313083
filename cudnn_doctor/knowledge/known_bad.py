"""Known-bad releases, error-text symptoms and status codes (compat/known_bad, symptoms, status_codes .toml)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import release3, ver
from .tables import Tables, row_source


@dataclass
class Symptom:
    id: str
    patterns: List[str]
    meaning: str
    catalogue: List[str]
    rules: List[str]

    def matches(self, text: str) -> Optional[str]:
        """The pattern that matched, or None."""
        low = text.lower()
        for pattern in self.patterns:
            if pattern.startswith("re:"):
                if re.search(pattern[3:], text, re.I):
                    return pattern
            elif pattern.lower() in low:
                return pattern
        return None


class KnownBadKnowledge(Tables):
    """Known-bad releases, symptom patterns and status codes."""

    def known_bad(self, component: str, version: Optional[str]) -> List[Dict[str, Any]]:
        v = release3(version) if component == "cudnn" else ver(version)
        if v is None:
            return []
        table = self.table("known_bad", component)
        out = []
        for row in table.get("rows", []):
            try:
                spec = SpecifierSet(row["version"])
            except InvalidSpecifier:
                continue
            if v in spec:
                status, source = row_source(table, row)
                out.append(dict(row, status=status, source=source))
        return out

    def symptoms(self) -> List[Symptom]:
        return [Symptom(id=s["id"], patterns=list(s["patterns"]), meaning=s["meaning"],
                        catalogue=list(s.get("catalogue", [])), rules=list(s.get("rules", [])))
                for s in (self.data.get("symptoms", {}).get("symptom", [])
                          + self.data.get("theano", {}).get("symptom", []))]  # Theano's texts: compat/theano.toml

    def status_codes(self) -> Dict[str, Any]:
        """compat/status_codes.toml as read: CUDA/cuDNN status numbers by API and numbering, with their meaning."""
        return self.data["status_codes"]
