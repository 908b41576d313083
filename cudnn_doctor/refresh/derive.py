"""Deriving the machine-derivable knowledge (compat/derived.json) from the gathered sources, deterministically."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from packaging.version import Version

from ..versions import release3
from .sources import cuda_manifest, cudnn_manifest, pinned, pypi_releases, requires

SCHEMA_VERSION = 1
PYPI_PAGE = "https://pypi.org/project/%s/%s/"
CUDNN_PROJECT = "nvidia-cudnn-cu%s"
# The CUDA runtime wheel per major (CUDA 13's has no suffix; nvidia-cuda-runtime-cu13 is a placeholder).
CUDART_PROJECTS = {"11": "nvidia-cuda-runtime-cu11", "12": "nvidia-cuda-runtime-cu12", "13": "nvidia-cuda-runtime"}
FRAMEWORK_NAMES = {"torch": "torch", "tensorflow": "tensorflow", "jax-cuda12-plugin": "jax",
                   "jax-cuda13-plugin": "jax"}


def derive(sources: Dict[str, Any], hand_builds: Set[Tuple[str, str]], hand_minors: Iterable[str],
           date: str, generated_by: str) -> Dict[str, Any]:
    """The derived knowledge. `hand_builds`: (release, variant) pairs compat/cudnn.toml transcribes by hand
    (those keep their edition's row); `hand_minors`: CUDA major.minor releases compat/cuda_driver.toml knows."""
    releases = _cudnn_releases(sources)
    minors = _cuda_minors(sources, hand_minors)
    return {
        "schema_version": SCHEMA_VERSION,
        "date": date,
        "generated_by": generated_by,
        "sources": _source_list(sources),
        "cudnn_releases": releases,
        "cudnn_builds": _builds(sources, releases, minors, hand_builds),
        "cuda_releases": [{"cuda": m, "runtime": r, "date": d} for m, (r, d) in sorted(
            minors.items(), key=lambda kv: Version(kv[0]))],
        "toolkit_driver": sorted((row for row in (cuda_manifest(m) for m in sources["manifests"]["cuda"]) if row),
                                 key=lambda r: Version(r["cuda"])),
        "frameworks": _frameworks(sources),
    }


def _cudnn_releases(sources: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Every cuDNN release (major.minor.patch): the wheel version per CUDA major, and its first date."""
    found: Dict[str, Dict[str, Any]] = {}
    for major in ("11", "12", "13"):
        project = sources["pypi"].get(CUDNN_PROJECT % major)
        for version, date in pypi_releases(project or {}):
            r = release3(version)
            if r is None or r.release[0] < 8:
                continue
            entry = found.setdefault(str(r), {"release": str(r), "cuda_majors": {}, "date": date})
            entry["cuda_majors"][major] = max(entry["cuda_majors"].get(major, version), version, key=Version)
            entry["date"] = min(entry["date"], date) if entry["date"] and date else (entry["date"] or date)
    for doc in sources["manifests"]["cudnn"]:
        m = cudnn_manifest(doc)
        if m is None:
            continue
        entry = found.setdefault(m["release"], {"release": m["release"], "cuda_majors": {}, "date": m["date"]})
        for major in m["cuda_majors"]:
            entry["cuda_majors"].setdefault(major, m["version"])
    out = sorted(found.values(), key=lambda e: Version(e["release"]))
    for e in out:
        e["cuda_majors"] = dict(sorted(e["cuda_majors"].items(), key=lambda kv: int(kv[0])))
    return out


def _cuda_minors(sources: Dict[str, Any], hand_minors: Iterable[str]) -> Dict[str, Tuple[str, str]]:
    """CUDA major.minor releases: those the runtime wheels exist for (newest wheel, date) and compat's own."""
    out: Dict[str, Tuple[str, str]] = {m: ("", "") for m in hand_minors}
    for major in ("11", "12", "13"):
        for version, date in pypi_releases(sources["pypi"].get(CUDART_PROJECTS[major]) or {}):
            v = Version(version)
            key = "%d.%d" % (v.major, v.minor)
            if v.major != int(major):
                continue
            old = out.get(key, ("", ""))
            if not old[0] or Version(old[0]) < v:
                out[key] = (version, old[1] or date)
    return out


def _builds(sources: Dict[str, Any], releases: List[Dict[str, Any]], minors: Dict[str, Tuple[str, str]],
            hand: Set[Tuple[str, str]]) -> List[Dict[str, Any]]:
    """One row per run of consecutive releases whose wheel reports the same CUDA it was built with: the matrix
    rows NVIDIA published list every minor of the major up to that one, so these rows do the same."""
    cudart = {(str(release3(r["version"])), r["project"][-2:]): r for r in sources["wheel_cudart"]
              if "built_with_cuda" in r}
    rows: List[Dict[str, Any]] = []
    for major in ("11", "12", "13"):
        run: Optional[Dict[str, Any]] = None
        for entry in releases:
            rel = entry["release"]
            record = cudart.get((rel, major))
            if (rel, "cuda" + major) in hand or record is None:
                run = None
                continue
            built = record["built_with_cuda"]
            # The minor the library was built with exists even where no other source names it yet.
            listed = sorted({m for m in minors if Version(m).major == int(major) and Version(m) <= Version(built)}
                            | {built}, key=Version)
            if run and run["built_with"] == built:
                run["to"] = rel
                run["wheels"].append(record["version"])
                continue
            run = {"from": rel, "to": rel, "variant": "cuda" + major, "cuda": listed, "built_with": built,
                   "wheels": [record["version"]], "status": "secondary"}
            rows.append(run)
    for row in rows:
        project = CUDNN_PROJECT % row["variant"][4:]
        row["source"] = ("cudnnGetCudartVersion() of libcudnn in %s (%s); NVIDIA lists every %s.x minor up to "
                         "the one a build was made with" % (
                             ", ".join(PYPI_PAGE % (project, w) for w in (row["wheels"][0], row["wheels"][-1])
                                       if w) if row["wheels"][0] != row["wheels"][-1]
                             else PYPI_PAGE % (project, row["wheels"][0]),
                             "CUDA %s" % row["built_with"], row["variant"][4:]))
        del row["wheels"]
    return sorted(rows, key=lambda r: (Version(r["from"]), r["variant"]))


def _frameworks(sources: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What each framework release's Linux wheel pins: the cuDNN wheel and the CUDA runtime it was built with."""
    from ..refresh.collect import FRAMEWORKS  # why: collect imports requests (170 ms); recorded sources need none

    out = []
    for project, releases in sorted(sources["requires"].items()):
        extras = FRAMEWORKS.get(project, ())
        for version, info in sorted(releases.items(), key=lambda kv: Version(kv[0])):
            pins = requires("\n".join("Requires-Dist: %s" % line for line in info["requires_dist"]), extras)
            for major in ("11", "12", "13"):
                cudnn = pins.get(CUDNN_PROJECT % major)
                if cudnn is None:
                    continue
                # torch 2.11+ pins the whole toolkit ("cuda-toolkit[cudart,...]==13.0.2") instead of the runtime.
                runtime = pins.get(CUDART_PROJECTS[major]) or pins.get("cuda-toolkit", "")
                exact = pinned(runtime) if runtime else None
                cuda = "%d.%d" % Version(exact).release[:2] if exact else ""
                out.append({"framework": FRAMEWORK_NAMES[project], "project": project, "version": version,
                            "cuda_major": major, "cuda": cuda, "cuda_runtime": runtime, "cudnn": cudnn,
                            "source": "Requires-Dist of %s (%s)" % (PYPI_PAGE % (project, version), info["wheel"])})
    return out


def _source_list(sources: Dict[str, Any]) -> List[str]:
    urls = [doc.get("_recorded", {}).get("url", "") for doc in sources["pypi"].values()]
    urls += [doc.get("_recorded", {}).get("url", "") for kind in ("cudnn", "cuda")
             for doc in sources["manifests"][kind]]
    if sources["wheel_cudart"]:
        urls.append("cudnnGetCudartVersion() of each https://pypi.org/project/nvidia-cudnn-cu<major>/ wheel")
    return sorted(u for u in set(urls) if u)
