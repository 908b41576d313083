"""The derived knowledge as written to disk: what the hand tables leave to the machine sources, as JSON text."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Set, Tuple

from ..knowledge.load import parse_toml
from ..versions import release3, release3_of
from .derive import _cudnn_releases, derive


def hand_facts(compat_dir: Path, releases: Optional[list] = None) -> Tuple[Set[Tuple[str, str]], Set[str]]:
    """(release, variant) pairs compat/cudnn.toml transcribes by hand, and the CUDA minors cuda_driver.toml knows."""
    cudnn = parse_toml((compat_dir / "cudnn.toml").read_text(encoding="utf-8"))
    driver = parse_toml((compat_dir / "cuda_driver.toml").read_text(encoding="utf-8"))
    pairs: Set[Tuple[str, str]] = set()
    for name in ("builds_v8", "builds_v9"):
        for row in cudnn.get(name, {}).get("rows", []):
            variant = str(row["variant"]).split(".")[0]  # per-minor builds ("cuda11.0") count for their major
            for rel in releases or []:
                r = release3(rel)
                if r is not None and release3_of(row["from"]) <= r <= release3_of(row["to"]):
                    pairs.add((rel, variant))
    minors = set()
    for row in driver.get("toolkit_driver", {}).get("rows", []):
        parts = str(row["cuda"]).split(".")
        if len(parts) >= 2 and int(parts[0]) >= 11:
            minors.add("%s.%s" % (parts[0], parts[1]))
    return pairs, minors


def derived_doc(sources: Dict[str, Any], compat_dir: Path, generated_by: str, date: str = "") -> Dict[str, Any]:
    releases = [e["release"] for e in _cudnn_releases(sources)]
    pairs, minors = hand_facts(compat_dir, releases)
    return derive(sources, pairs, minors, date or recorded_date(sources), generated_by)


def derived_text(sources: Dict[str, Any], compat_dir: Path, generated_by: str, date: str = "") -> str:
    return json.dumps(derived_doc(sources, compat_dir, generated_by, date), indent=1) + "\n"


def recorded_date(sources: Dict[str, Any]) -> str:
    """The date of the newest recorded source: the knowledge is as current as its sources."""
    dates = [doc.get("_recorded", {}).get("date", "") for doc in sources["pypi"].values()]
    return max([d for d in dates if d] or [""])
