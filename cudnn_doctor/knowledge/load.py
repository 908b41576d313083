"""Reading compat/*.toml once per process (package data, else the source tree), and the derived knowledge:
compat/derived.json as shipped, or the newer copy `cudnn-doctor update` wrote to the user's cache."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from ..parsed_cache import load
from .schema import problems

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

COMPAT_FILES = ("cuda_driver", "cudnn", "gpu_arch", "cudnn_layout", "frameworks", "known_bad", "symptoms",
                "status_codes", "status_tables", "sonames", "catalogue", "gpu_peaks", "windows", "packages", "containers",
                "theano", "error_texts", "cudnn_redist", "framework_features", "node_health", "framework_builds",
                "checks")
DERIVED = "derived"  # compat/derived.json: written by scripts/refresh_knowledge.py, never by hand
UPDATED_NAME = "knowledge.json"  # what `cudnn-doctor update` writes under the cache folder


def parse_toml(text: str) -> Dict[str, Any]:
    return tomllib.loads(text)


_parse_toml = parse_toml


def _source_tree_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "compat"


def compat_dir() -> Path:
    installed = Path(__file__).resolve().parents[1] / "_compat"
    return installed if (installed / "cudnn.toml").is_file() else _source_tree_dir()


def updated_path() -> Path:
    """Where `cudnn-doctor update` keeps the refreshed knowledge: $XDG_CACHE_HOME/cudnn-doctor/knowledge.json."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cudnn-doctor" / UPDATED_NAME


def read_all() -> Tuple[Dict[str, Dict[str, Any]], str]:
    """Installed package data first; a source tree's compat/ when running with PYTHONPATH=.

    Plain folders are read through a parse cache keyed on each file's identity (parsed_cache.py);
    importlib.resources (zip installs) only when there is no folder.
    """
    folder = compat_dir()
    if (folder / "cudnn.toml").is_file():
        paths = {name: folder / (name + ".toml") for name in COMPAT_FILES}
        data = load(paths, lambda raw: parse_toml(raw.decode("utf-8")), "compat")
        shipped = folder / (DERIVED + ".json")
        data[DERIVED] = json.loads(shipped.read_text(encoding="utf-8")) if shipped.is_file() else {}
        return _with_update(data), str(folder)
    from importlib.resources import files  # why: 11 ms or more, only for a zip install (no compat folder)

    base = files("cudnn_doctor._compat")
    data = {name: parse_toml(base.joinpath(name + ".toml").read_text(encoding="utf-8")) for name in COMPAT_FILES}
    data[DERIVED] = json.loads(base.joinpath(DERIVED + ".json").read_text(encoding="utf-8"))
    return _with_update(data), str(base)


def read_shipped(name: str) -> Dict[str, Any]:
    """One shipped compat file (compat/NAME.toml) alone, as read_all would read it: for what is declared before any
    knowledge is handed in (the checks compat/checks.toml registers as rules)."""
    folder = compat_dir()
    if (folder / (name + ".toml")).is_file():
        read: Dict[str, Any] = load({name: folder / (name + ".toml")}, lambda raw: parse_toml(raw.decode("utf-8")),
                                    "compat")[name]
        return read
    from importlib.resources import files  # why: only for a zip install (no compat folder)

    return parse_toml(files("cudnn_doctor._compat").joinpath(name + ".toml").read_text(encoding="utf-8"))


def _with_update(data: Dict[str, Any]) -> Dict[str, Any]:
    """The user's updated copy replaces the shipped derived knowledge when it is valid and not older."""
    updated = read_updated(updated_path())
    shipped = data.get(DERIVED) or {}
    if updated is not None and str(updated.get("date", "")) >= str(shipped.get("date", "")):
        data[DERIVED] = dict(updated, origin=str(updated_path()))
    elif shipped:
        data[DERIVED] = dict(shipped, origin="shipped")
    return data


def read_updated(path: Path) -> Optional[Dict[str, Any]]:
    """The updated knowledge at `path` if it is there and valid against the schema; else None (the shipped copy
    is used, so a damaged cache never breaks a run). Validation is remembered per file identity (parse cache)."""
    if not path.is_file():
        return None

    try:
        doc = load({"updated": path}, _validated, "knowledge-update")["updated"]
    except OSError:
        return None
    return doc or None


def _validated(raw: bytes) -> Dict[str, Any]:
    """The document when it is valid derived knowledge, else {} (so an invalid copy is remembered as such)."""
    try:
        doc = json.loads(raw.decode("utf-8"))
    except ValueError:
        return {}

    return doc if isinstance(doc, dict) and not problems(doc) else {}
