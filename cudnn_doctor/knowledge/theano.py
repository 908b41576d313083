"""Theano releases, their GPU back-ends and the cuDNN each back-end accepts (compat/theano.toml)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..versions import release3, release3_of, ver, version_of
from .tables import Domain


def cudnn_code(version: Any) -> Optional[int]:
    """The number cudnnGetVersion() returns for a cuDNN release, which Theano compares against:
    M*1000 + m*100 + p before cuDNN 9 (5.0.5 -> 5005), M*10000 + m*100 + p from 9 on."""
    v = release3(version)
    if v is None:
        return None
    major, minor, patch = (list(v.release) + [0, 0])[:3]
    return major * (10000 if major >= 9 else 1000) + minor * 100 + patch


def _in(spec: str, version: Any) -> bool:
    v = ver(str(version).split("+")[0]) if version is not None else None
    if v is None:
        return False
    try:
        return v in SpecifierSet(spec)
    except InvalidSpecifier:
        return False


class TheanoKnowledge(Domain):
    """Which Theano release has which back-end, reads which flags, and accepts which cuDNN."""

    def _rows(self, name: str) -> List[Dict[str, Any]]:
        return self.sourced_rows("theano", name)

    def theano_release(self, version: Any) -> Optional[Dict[str, Any]]:
        """The release row for an installed Theano; a later patch of a known minor takes that minor's newest row."""
        v = ver(str(version).split("+")[0]) if version is not None else None
        if v is None:
            return None
        rows = self._rows("releases")
        for row in rows:
            if ver(row["theano"]) == v:
                return row
        same_minor = [r for r in rows if version_of(r["theano"]).release[:2] == v.release[:2]]
        return max(same_minor, key=lambda r: version_of(r["theano"])) if same_minor else None

    def theano_cudnn_check(self, version: Any, backend: str) -> Optional[Dict[str, Any]]:
        """The cuDNN version check of one back-end ("cuda" or "gpuarray") of a Theano release."""
        return next((r for r in self._rows("cudnn_checks")
                     if r["backend"] == backend and _in(r["theano"], version)), None)

    def theano_api_removed(self, version: Any, backend: str, cudnn: Any) -> List[Dict[str, Any]]:
        """The cuDNN functions this back-end calls that the given cuDNN release no longer has."""
        v = release3(cudnn)
        if v is None:
            return []
        return [r for r in self._rows("cudnn_api_removed")
                if r["backend"] == backend and _in(r["theano"], version) and v >= release3_of(r["cudnn_from"])]

    def theano_first_break(self, version: Any, backend: str) -> Optional[str]:
        """The first cuDNN release this back-end's C code no longer compiles with."""
        rows = [r for r in self._rows("cudnn_api_removed") if r["backend"] == backend and _in(r["theano"], version)]
        return min((str(r["cudnn_from"]) for r in rows), key=release3_of) if rows else None

    def theano_config(self) -> Dict[str, Any]:
        """How Theano reads .theanorc and THEANO_FLAGS, with the texts it prints."""
        return self.table("theano", "config")

    def theano_source(self, name: str) -> str:
        return str(self.table("theano", name).get("source", ""))
