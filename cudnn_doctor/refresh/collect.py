"""Gathering the sources the knowledge is derived from, live (update) or into recorded files (refresh script)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, List, Optional, Set

import requests
from packaging.version import Version

from . import fetch
from .sources import linux_wheel, pypi_releases

# The pip projects whose release lists say which cuDNN and CUDA releases exist, per CUDA major.
CUDNN_PROJECTS = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
CUDART_PROJECTS = ("nvidia-cuda-runtime-cu11", "nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime")
# Frameworks whose wheels pin cuDNN and the CUDA runtime in Requires-Dist (with the extra that pulls them).
FRAMEWORKS = {"torch": (), "tensorflow": ("and-cuda",), "jax-cuda12-plugin": ("with-cuda",),
              "jax-cuda13-plugin": ("with-cuda",)}
PYTHON_TAGS = ("cp311", "cp310", "cp39", "cp312", "cp313")
# Releases older than these pinned no NVIDIA wheels (torch 1.13 was the first with nvidia-cudnn-cu11).
FIRST_PINNING = {"torch": "1.13.0", "tensorflow": "2.14.0", "jax-cuda12-plugin": "0.4.0", "jax-cuda13-plugin": "0.0"}

MAX_NEW_RELEASES = 12  # framework releases one update reads metadata for (the newest ones)
MAX_MANIFESTS = 3  # newest NVIDIA manifests per product one update reads

Sources = Dict[str, Any]


def empty() -> Sources:
    return {"pypi": {}, "requires": {}, "manifests": {"cudnn": [], "cuda": []}, "wheel_cudart": [], "errors": []}


def collect_live(session: requests.Session, budget: fetch.Budget, known_requires: Dict[str, Set[str]],
                 manifests: bool = True, log: Callable[[str], None] = lambda _: None,
                 known_cuda: AbstractSet[str] = frozenset()) -> Sources:
    """Everything the sources answer now; a source that fails is named in `errors`, the rest still count."""
    out = empty()
    for project in CUDNN_PROJECTS + CUDART_PROJECTS + tuple(FRAMEWORKS):
        try:
            out["pypi"][project] = fetch.pypi_project(session, project, budget)
            log("read %s" % (fetch.PYPI_JSON % project))
        except (requests.RequestException, ValueError) as exc:
            out["errors"].append("%s: %s" % (fetch.PYPI_JSON % project, _short(exc)))
    for project, extras in FRAMEWORKS.items():
        if project in out["pypi"]:
            _requires(session, budget, out, project, known_requires.get(project, set()), log)
    if manifests:
        _manifests(session, budget, out, log, known_cuda)
    return out


def _requires(session, budget, out: Sources, project: str, known: Set[str], log) -> None:
    table = out["requires"].setdefault(project, {})
    newest_known = max((Version(v) for v in known), default=None)
    candidates = [v for v, _ in pypi_releases(out["pypi"][project])
                  if v not in known and Version(v) >= Version(FIRST_PINNING[project])
                  and (newest_known is None or Version(v) > newest_known)]
    # Bounded: releases newer than the knowledge's newest (all of them when recording from scratch).
    for version in candidates[-MAX_NEW_RELEASES:] if known else candidates:
        wheel = next((w for tag in PYTHON_TAGS for w in [linux_wheel(out["pypi"][project], version, tag)] if w),
                     None)
        if wheel is None or not wheel.get("url"):
            continue
        try:
            text = fetch.wheel_metadata(session, wheel["url"], budget)
        except (requests.RequestException, ValueError, OSError) as exc:
            out["errors"].append("%s: %s" % (wheel["url"], _short(exc)))
            if isinstance(exc, requests.Timeout):
                return
            continue
        if text is not None:
            lines = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
            table[version] = {"wheel": wheel["filename"], "requires_dist": lines}
            log("read %s %s metadata" % (project, version))


def _manifests(session, budget, out: Sources, log, known_cuda: AbstractSet[str] = frozenset()) -> None:
    """NVIDIA's newest manifests, found through their index pages: cuDNN (which CUDA majors each release was built
    for) and CUDA (the driver packaged with each toolkit release). The host being unreachable is one error line."""
    for kind, index, pattern in (("cudnn", fetch.CUDNN_INDEX, fetch.CUDNN_MANIFEST),
                                 ("cuda", fetch.CUDA_INDEX, fetch.CUDA_MANIFEST)):
        try:
            labels = fetch.manifest_labels(session, index, budget)
        except (requests.RequestException, ValueError) as exc:
            out["errors"].append("%s: %s" % (index, _short(exc)))
            if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
                return  # the host is not reachable: one line says so
            continue
        if kind == "cuda":
            newest = max((Version(c) for c in known_cuda), default=None)
            labels = [label for label in labels if newest is None or Version(label) > newest]
        for label in labels[-MAX_MANIFESTS:]:
            url = pattern % label
            try:
                doc = fetch.get_json(session, url, budget)
            except (requests.RequestException, ValueError) as exc:
                out["errors"].append("%s: %s" % (url, _short(exc)))
                continue
            doc["_recorded"] = {"url": url}
            out["manifests"][kind].append(doc)
            log("read %s" % url)


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]


# --- recorded copies (tests/data/knowledge) ------------------------------------------------------------------


def load_recorded(folder: Path) -> Sources:
    out = empty()
    for path in sorted((folder / "pypi").glob("*.json")):
        doc = json.loads(path.read_text())
        out["pypi"][doc["name"]] = doc
    for path in sorted((folder / "requires").glob("*.json")):
        out["requires"][path.stem] = json.loads(path.read_text())["releases"]
    for path in sorted((folder / "redistrib").glob("*.json")):
        doc = json.loads(path.read_text())
        out["manifests"][doc.get("release_product", "cudnn")].append(doc)
    cudart = folder / "wheel_cudart.json"
    if cudart.is_file():
        out["wheel_cudart"] = json.loads(cudart.read_text())["rows"]
    return out


def save_recorded(folder: Path, sources: Sources, date: str) -> None:
    (folder / "pypi").mkdir(parents=True, exist_ok=True)
    (folder / "requires").mkdir(parents=True, exist_ok=True)
    for name, doc in sources["pypi"].items():
        slim = {"_recorded": dict(doc.get("_recorded", {}), date=date), "name": name,
                "releases": {v: [{k: f[k] for k in ("filename", "upload_time", "yanked")} for f in files]
                             for v, files in doc["releases"].items()}}
        _write(folder / "pypi" / (name + ".json"), slim)
    for name, releases in sources["requires"].items():
        path = folder / "requires" / (name + ".json")
        old = json.loads(path.read_text())["releases"] if path.is_file() else {}
        old.update(releases)
        _write(path, {"_recorded": {"url": "Requires-Dist of each release's manylinux x86_64 wheel METADATA, "
                                           "https://pypi.org/project/%s/#files" % name, "date": date},
                      "releases": dict(sorted(old.items(), key=lambda kv: _vkey(kv[0])))})


def _vkey(text: str):
    return Version(text)


def _write(path: Path, doc: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    tmp.replace(path)


def frameworks_known(sources: Optional[Sources]) -> Dict[str, Set[str]]:
    return {p: set(r) for p, r in (sources or empty())["requires"].items()}
