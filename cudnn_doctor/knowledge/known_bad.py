"""Known-bad releases, error-text symptoms and status codes (compat/known_bad, symptoms, status_codes .toml)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import canonical_name, release3, ver
from .status import StatusKnowledge
from .tables import Domain, Tables, row_source


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


class KnownBadKnowledge(Domain):
    """Known-bad releases, symptom patterns and status codes."""

    def __init__(self, tables: Tables, status: StatusKnowledge) -> None:
        super().__init__(tables)
        self.status = status

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

    def bad_wheel(self, project: str, version: Optional[str]) -> Optional[Dict[str, Any]]:
        """The [cudnn] row of a wheel release known to be broken as built (nvidia-cudnn-cu13 9.20.0.48 lacks an
        engine), or None: other builds of that release (its system packages) are not affected."""
        name = canonical_name(project)
        return next((r for r in self.known_bad("cudnn", version) if name in r.get("wheels", ())), None)

    def bad_wheels(self) -> List[Dict[str, Any]]:
        """Every [cudnn] row about one wheel's build, for a text that names no release."""
        return self.flagged("cudnn", "wheels")

    def flagged(self, component: str, flag: str) -> List[Dict[str, Any]]:
        """[component]'s rows that carry ``flag`` (TensorFlow's `no_gpu_with_wheels`), whatever their release: for a
        text that names none."""
        table = self.table("known_bad", component)
        return [dict(r, source=row_source(table, r)[1]) for r in table.get("rows", []) if r.get(flag)]

    def dropped_gpus(self, component: str) -> List[Dict[str, Any]]:
        """[component]'s rows that name GPUs its binaries dropped (`below_cc`), lowest floor first: the first row a
        GPU is below names the last release with kernels for it."""
        rows = [dict(r) for r in self.table("known_bad", component).get("rows", []) if r.get("below_cc")]
        return sorted(rows, key=lambda r: tuple(int(p) for p in str(r["below_cc"]).split(".")))

    def harmless_warnings(self, component: str) -> List[Dict[str, Any]]:
        """[component]'s rows that name a warning (explain says it is not the error), e.g. TensorRT's cuDNN minor."""
        return [dict(r) for r in self.table("known_bad", component).get("rows", []) if r.get("warning")]

    def symptoms(self) -> List[Symptom]:
        return [Symptom(id=s["id"], patterns=list(s["patterns"]), meaning=s["meaning"],
                        catalogue=list(s.get("catalogue", [])), rules=list(s.get("rules", [])))
                for s in (self.data.get("symptoms", {}).get("symptom", [])
                          + self.data.get("theano", {}).get("symptom", []))]  # Theano's texts: compat/theano.toml

    def status_codes(self) -> Dict[str, Any]:
        """compat/status_codes.toml as read: the diagnosis and fix smoke prints for each status name."""
        return self.data["status_codes"]

    def status_name(self, api: str, code: int, cudnn_version: Optional[int] = None) -> str:
        """'CUDNN_STATUS_NOT_INITIALIZED' for ("cudnn", 1001, 90100); an honest placeholder when unknown."""
        section = {"cudnn": _cudnn_numbering(cudnn_version), "cuda": "cuda_driver"}.get(api, api)
        found = self.status.status_by_number(section, code)
        if found is not None:
            return found.name
        label = {"cudnn": "cudnnStatus_t", "cuda": "CUresult", "cuda_runtime": "cudaError_t"}.get(api, api)
        return "%s %d" % (label, code)

    def status_entries(self) -> Dict[str, Dict[str, Any]]:
        """[diagnosis.NAME] entries (headline, diagnosis, fix, catalogue), without the table's source/status keys."""
        return {k: v for k, v in self.status_codes()["diagnosis"].items() if isinstance(v, dict)}

    def status_words(self, name: str, code: Optional[int] = None,
                     cudnn_version: Optional[int] = None) -> Dict[str, Any]:
        """The entry for a status name, following same_as; cuDNN 9 sub-codes fall back to their category, and an
        unknown name to SMOKE_CHILD_ERROR's words under its own headline."""
        entries = self.status_entries()
        key = name
        if key not in entries and code is not None and _cudnn_numbering(cudnn_version) == "cudnn_v9":
            key = self.status_name("cudnn", code // 1000 * 1000, cudnn_version)
        seen = set()
        while key in entries and "same_as" in entries[key] and key not in seen:
            seen.add(key)
            key = entries[key]["same_as"]
        entry = entries.get(key)
        if entry is None:
            entry = dict(entries["SMOKE_CHILD_ERROR"], headline="unexpected status %s" % name)
        return entry


def _cudnn_numbering(version: Optional[int]) -> str:
    """cuDNN 9 renumbered every status (1001, 2000, ...); 7.x and 8.x share the small numbers."""
    return "cudnn_v9" if version is not None and version >= 90000 else "cudnn_legacy"

