"""`cudnn-doctor update`: read the live sources, fold what they add into the current derived knowledge, validate it
against the schema and write it atomically to the user's cache. The shipped copy stays the offline fallback."""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import requests
from packaging.version import Version

from ..knowledge.load import compat_dir, updated_path
from ..knowledge.schema import problems
from ..render.machine import write_atomic
from . import collect, fetch, wheels
from .build import derived_doc


class UpdateFailed(Exception):
    """No source could be read, or what they said is not valid knowledge: nothing was written."""


def _known_frameworks(current: Dict[str, Any]) -> Dict[str, set]:
    out: Dict[str, set] = {}
    for row in current.get("frameworks", []):
        out.setdefault(row["project"], set()).add(row["version"])
    return out


def merge(current: Dict[str, Any], fresh: Dict[str, Any], date: str, errors: List[str]) -> Dict[str, Any]:
    """The current knowledge with what the fresh sources add: new releases, their builds' CUDA majors, CUDA
    minors, driver rows and framework pins. Rows the current copy has are kept (a source that forgot a release
    does not make the knowledge forget it)."""
    out = json.loads(json.dumps(current))
    out.pop("origin", None)
    releases = {e["release"]: e for e in out.get("cudnn_releases", [])}
    for e in fresh["cudnn_releases"]:
        old = releases.setdefault(e["release"], {"release": e["release"], "cuda_majors": {}, "date": e["date"]})
        old["cuda_majors"] = dict(sorted({**old["cuda_majors"], **e["cuda_majors"]}.items(), key=lambda kv: int(kv[0])))
    out["cudnn_releases"] = sorted(releases.values(), key=lambda e: Version(e["release"]))
    minors = {r["cuda"]: r for r in out.get("cuda_releases", [])}
    for r in fresh["cuda_releases"]:
        if r["runtime"] or r["cuda"] not in minors:
            minors[r["cuda"]] = r
    out["cuda_releases"] = sorted(minors.values(), key=lambda r: Version(r["cuda"]))
    drivers = {r["cuda"]: r for r in out.get("toolkit_driver", [])}
    drivers.update({r["cuda"]: r for r in fresh["toolkit_driver"]})
    out["toolkit_driver"] = sorted(drivers.values(), key=lambda r: Version(r["cuda"]))
    pins = {(r["project"], r["version"], r["cuda_major"]): r for r in out.get("frameworks", [])}
    pins.update({(r["project"], r["version"], r["cuda_major"]): r for r in fresh["frameworks"]})
    out["frameworks"] = sorted(pins.values(), key=lambda r: (r["project"], Version(r["version"]), r["cuda_major"]))
    out["sources"] = sorted(set(out.get("sources", [])) | set(fresh["sources"]))
    out.update(date=date, generated_by="cudnn-doctor update", errors=list(errors))
    return out


def write_atomically(path: Path, doc: Dict[str, Any]) -> None:
    """Write next to the target, flush to disk, then rename over it: a crash leaves the old copy or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # 0644 whatever the umask: the knowledge is not a secret.
    write_atomic(path, json.dumps(doc, indent=1) + "\n", prefix=".knowledge-", mode=0o644)


def run_update(current: Dict[str, Any], session: Optional[requests.Session] = None, seconds: float = 60.0,
               target: Optional[Path] = None, today: Optional[str] = None,
               log: Callable[[str], None] = lambda _: None, known_toolkits: Optional[List[str]] = None
               ) -> Dict[str, Any]:
    """Refresh the knowledge; returns the document written. Raises UpdateFailed (nothing written) when no
    source answered or the result does not validate."""
    live = session is None
    session = session or requests.Session()
    budget = fetch.Budget(seconds)
    known_cuda = {r["cuda"] for r in current.get("toolkit_driver", [])} | set(known_toolkits or ())
    sources = collect.collect_live(session, budget, _known_frameworks(current), log=log, known_cuda=known_cuda)
    if not any(name in sources["pypi"] for name in collect.CUDNN_PROJECTS):
        raise UpdateFailed("could not read PyPI (%s); the knowledge stays as it was (dated %s)" % (
            "; ".join(sources["errors"][:2]) or "no answer", current.get("date", "?")))
    date = today or datetime.date.today().isoformat()
    fresh = derived_doc(sources, compat_dir(), "cudnn-doctor update", date)
    doc = merge(current, fresh, date, sources["errors"])
    found = problems(doc)
    if found:
        raise UpdateFailed("the sources' answers do not make valid knowledge (%s); nothing was written" % found[0])
    write_atomically(target or updated_path(), doc)
    if live:  # the wheel index too, in what is left of the time (a fake session in tests answers no simple API)
        refresh_wheels(budget, date, log)
    return doc


def refresh_wheels(budget: fetch.Budget, date: str, log: Callable[[str], None] = lambda _: None,
                   target: Optional[Path] = None) -> bool:
    """Re-list every project of the wheel index and read the metadata of releases it does not hold yet; written
    next to the updated knowledge (wheels.json) only when every project answered (else the old copy stays)."""
    # why: the wheel index and packaging's tags, 17 ms, only where PyPI answers (a live update)
    from ..knowledge.wheel_index import load_wheel_index, updated_wheels_path

    current = load_wheel_index().doc
    roots = wheels.FRAMEWORK_PROJECTS + wheels.CUDNN_PROJECTS + wheels.FILES_ONLY
    try:
        got = wheels.collect(roots, budget, log=log, known=current)
    except requests.RequestException as exc:
        log("the wheel index was not refreshed: %s" % exc)
        return False
    if got["errors"] or not got["projects"]:
        log("the wheel index was not refreshed (%s)" % "; ".join(got["errors"][:2]))
        return False
    doc = wheels.compact(got, date, "cudnn-doctor update")
    path = target or updated_wheels_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(doc, separators=(",", ":")) + "\n", prefix=".wheels-", mode=0o644)
    log("wrote %s (%d projects)" % (path, len(doc["projects"])))
    return True
