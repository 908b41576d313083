"""Recording the wheel index (compat/wheels.json) from PyPI itself: every release's wheel files of the frameworks and
NVIDIA's `nvidia-*-cuNN` wheels, with their tags, Requires-Python and Requires-Dist.

File lists come from PyPI's simple API as JSON (PEP 691, `Accept: application/vnd.pypi.simple.v1+json`). Requires-Dist
comes from each release's wheel METADATA: the PEP 658 `.metadata` file where the index offers one (`core-metadata`),
else the METADATA member read out of the remote wheel by HTTP range requests (fetch.wheel_metadata, no download).
One wheel per release and processor is read (its Requires-Dist markers cover the Python versions); Windows and macOS
wheels are listed but their metadata is not read (their frameworks pin no NVIDIA wheels from PyPI)."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import requests
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from . import fetch

SIMPLE = "https://pypi.org/simple/%s/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
SCHEMA_VERSION = 1
# The frameworks whose releases `pick` and the installer choose among, and the projects their extras pull in.
FRAMEWORK_PROJECTS = ("torch", "triton", "tensorflow", "jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda13-plugin",
                      "jax-cuda12-pjrt", "jax-cuda13-pjrt", "onnxruntime-gpu", "cupy-cuda11x", "cupy-cuda12x",
                      "cupy-cuda13x", "paddlepaddle-gpu")
CUDNN_PROJECTS = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
# Compiled dependencies whose upper bounds decide whether an old framework release installs on a new Python: files
# only (their own dependencies are not followed).
FILES_ONLY = ("numpy", "ml-dtypes", "scipy", "h5py")
# Platform tags kept (macOS wheels carry no CUDA); metadata is read for Linux wheels only.
KEEP_PLATFORMS = ("manylinux", "linux_", "win_amd64", "any")
METADATA_MACHINES = ("x86_64", "aarch64", "any")
THREADS = 16
# Dependencies followed into the index: NVIDIA's wheels and the cuda-* metapackages that pull them in (torch 2.15 pins
# cuda-toolkit[cublas,...] and cuda-bindings).
FOLLOW = ("nvidia-", "cuda-")


def file_tags(filename: str) -> Optional[str]:
    """'torch-2.10.0-3-cp312-cp312-manylinux_2_28_x86_64.whl' -> '3-cp312-cp312-manylinux_2_28_x86_64' (the build
    tag kept, so that the file's name can be told again); None for a file that is not a wheel or names a platform the
    index does not keep."""
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return None
    stem = filename[:-4].split("-")
    text = "-".join(stem[2:])
    plats = {t.platform for t in tags}
    if not any(any(p.startswith(k) or p == k for k in KEEP_PLATFORMS) for p in plats):
        return None
    return text


def machine_of(tags: str) -> str:
    """The processor a wheel's tags are for: 'x86_64', 'aarch64', 'win_amd64', 'any' or '' (others)."""
    plat = tags.rsplit("-", 1)[-1]
    if plat == "any":
        return "any"
    for machine in ("x86_64", "aarch64", "win_amd64"):
        if plat.endswith(machine):
            return machine
    return ""


def simple_project(session: requests.Session, project: str, budget: fetch.Budget) -> Dict[str, Any]:
    got = session.get(SIMPLE % project, headers={"Accept": SIMPLE_JSON}, timeout=budget.timeout())
    got.raise_for_status()
    doc = got.json()
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), list):
        raise ValueError("%s did not answer the simple JSON API" % (SIMPLE % project))
    return doc


def releases_of(project: str, doc: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """{version: {requires_python, files: [tags], _urls: {machine: (url, pep658)}}} of every final release with a
    wheel that is not yanked."""
    out: Dict[str, Dict[str, Any]] = {}
    for f in doc["files"]:
        name = str(f.get("filename") or "")
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        try:
            _, version, _, _ = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        tags = file_tags(name)
        if tags is None or version.is_prerelease or version.is_devrelease:
            continue
        entry = out.setdefault(str(version), {"requires_python": "", "files": [], "_urls": {}})
        if tags not in entry["files"]:
            entry["files"].append(tags)
        machine = machine_of(tags)
        if machine in METADATA_MACHINES:
            entry["requires_python"] = entry["requires_python"] or str(f.get("requires-python") or "")
            # The newest Python tag's wheel stands for the release (sorted below; its markers cover the rest).
            pep658 = bool(f.get("core-metadata") or f.get("data-dist-info-metadata"))
            entry["_urls"].setdefault(machine, []).append((name, str(f.get("url") or ""), pep658))
    for entry in out.values():
        entry["files"].sort()
    return out


def _metadata(session: requests.Session, url: str, pep658: bool, budget: fetch.Budget) -> Optional[str]:
    if pep658:
        got = session.get(url.split("#", 1)[0] + ".metadata", timeout=budget.timeout())
        if got.ok:
            return got.text
    return fetch.wheel_metadata(session, url, budget)


def requires_dist(text: str) -> List[str]:
    """The Requires-Dist lines of a METADATA file that packaging can read, normalised (str(Requirement))."""
    from email.parser import Parser  # why: 7 ms, only for a release's METADATA read from PyPI

    out = []
    for line in Parser().parsestr(text, headersonly=True).get_all("Requires-Dist") or []:
        try:
            out.append(str(Requirement(line)))
        except InvalidRequirement:
            continue
    return out


def collect(projects: Iterable[str], budget: fetch.Budget, log: Callable[[str], None] = lambda _: None,
            known: Optional[Dict[str, Any]] = None, follow_nvidia: bool = True) -> Dict[str, Any]:
    """Read the index for these projects (and, with follow_nvidia, every nvidia-* project their Requires-Dist
    names); releases `known` (a previous index) already holds keep their recorded metadata and are not read again.
    Returns {projects: {name: {source, releases}}, errors: [...]}."""
    local = threading.local()

    def session() -> requests.Session:
        if not hasattr(local, "s"):
            local.s = requests.Session()
        return local.s

    old = _expand(known) if known else {}
    out: Dict[str, Any] = {"projects": {}, "errors": []}
    queue = list(dict.fromkeys(canonicalize_name(p) for p in projects))
    seen = set(queue)
    # What the followed projects are asked for: only releases some recorded pin allows are kept (cuda-toolkit has
    # dozens of releases with hundreds of extras lines; torch pins one).
    asked: Dict[str, List[Any]] = {}
    while queue:
        batch, queue = queue, []
        with ThreadPoolExecutor(THREADS) as pool:
            docs = list(pool.map(lambda p: _project(session, p, budget, out["errors"]), batch))
        jobs: List[Tuple[str, str, str, str, bool]] = []
        for project, doc in zip(batch, docs):
            if doc is None:
                continue
            rels = releases_of(project, doc)
            pins = [spec for spec in asked.get(project, []) if str(spec)]
            if pins:  # an unpinned ask is met by any release kept for the pinned ones
                rels = {v: e for v, e in rels.items() if any(spec.contains(v, prereleases=True) for spec in pins)}
            out["projects"][project] = {"source": SIMPLE % project, "releases": rels}
            for version, entry in rels.items():
                prior = old.get(project, {}).get(version)
                if prior is not None and "requires" in prior:
                    entry["requires"] = prior["requires"]
                    continue
                entry["requires"] = {}
                if project in FILES_ONLY:
                    continue
                for machine, urls in entry["_urls"].items():
                    name, url, pep658 = sorted(urls, key=lambda u: _py_key(u[0]))[-1]
                    jobs.append((project, version, machine, url, pep658))
            log("listed %s (%d releases)" % (project, len(rels)))
        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(lambda j: _read(session, j, budget, out["errors"]), jobs))
        for (name, version, machine, _, _), lines in zip(jobs, results):
            if lines is not None:
                out["projects"][name]["releases"][version]["requires"][machine] = lines
        log("read %d metadata files" % len(jobs))
        if follow_nvidia:
            for project in list(out["projects"]):
                for entry in out["projects"][project]["releases"].values():
                    for lines in entry["requires"].values():
                        for line in lines:
                            req = Requirement(line)
                            name = canonicalize_name(req.name)
                            if name.startswith(FOLLOW) and name not in out["projects"]:
                                asked.setdefault(name, []).append(req.specifier)
                                if name not in seen:
                                    seen.add(name)
                                    queue.append(name)
    for doc in out["projects"].values():
        for entry in doc["releases"].values():
            entry.pop("_urls", None)
    return out


def _py_key(name: str) -> Tuple[int, int]:
    """Prefer a plain CPython wheel of the newest Python (cp313 over cp39; cp313t, free-threaded, last)."""
    tags = name[:-4].split("-")[-3:]
    digits = "".join(c for c in tags[0] if c.isdigit())
    return (0 if tags[1].endswith("t") else 1, int(digits) if digits else 0)


def _project(session, project: str, budget: fetch.Budget, errors: List[str]) -> Optional[Dict[str, Any]]:
    try:
        return simple_project(session(), project, budget)
    except (requests.RequestException, ValueError) as exc:
        errors.append("%s: %s" % (SIMPLE % project, str(exc).splitlines()[0][:160] if str(exc) else exc))
        return None


def _read(session, job, budget: fetch.Budget, errors: List[str]) -> Optional[List[str]]:
    project, version, machine, url, pep658 = job
    try:
        text = _metadata(session(), url, pep658, budget)
    except (requests.RequestException, ValueError, OSError, KeyError) as exc:
        errors.append("%s: %s" % (url, str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__))
        return None
    return requires_dist(text) if text is not None else []


# --- the compact document (compat/wheels.json) ----------------------------------------------------------------


def compact(collected: Dict[str, Any], date: str, generated_by: str) -> Dict[str, Any]:
    """The shipped form: Requires-Dist lines and tag strings interned in two tables, each release pointing at them
    by number, so that the index stays small and loads fast."""
    lines: Dict[str, int] = {}
    tags: Dict[str, int] = {}
    projects: Dict[str, Any] = {}
    for project in sorted(collected["projects"]):
        doc = collected["projects"][project]
        rels = {}
        for version in sorted(doc["releases"], key=Version):
            entry = doc["releases"][version]
            row: Dict[str, Any] = {"f": [tags.setdefault(t, len(tags)) for t in entry["files"]]}
            if entry.get("requires_python"):
                row["p"] = entry["requires_python"]
            reqs = {m: [lines.setdefault(x, len(lines)) for x in v] for m, v in sorted(entry["requires"].items())}
            if reqs:
                row["r"] = reqs
            rels[version] = row
        projects[project] = {"source": doc["source"], "releases": rels}
    return {"schema_version": SCHEMA_VERSION, "date": date, "generated_by": generated_by,
            "source": "https://pypi.org/simple/<project>/ (PEP 691 JSON; Requires-Dist from each release's wheel "
                      "METADATA, PEP 658 or the wheel's own METADATA by range request)",
            "errors": sorted(collected.get("errors", [])), "tags": list(tags), "requires": list(lines),
            "projects": projects}


def _expand(doc: Dict[str, Any]) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """A compact index back to {project: {version: {requires: {machine: [lines]}}}} (what `known` needs)."""
    lines = doc.get("requires", [])
    return {p: {v: {"requires": {m: [lines[i] for i in ix] for m, ix in row.get("r", {}).items()}}
                for v, row in d.get("releases", {}).items()}
            for p, d in doc.get("projects", {}).items()}
