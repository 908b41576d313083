"""Record which CUDA each nvidia-cudnn-cu* wheel was built with, as the library itself reports it.

For every release on PyPI (or those named), reads only the small libcudnn.so.<major> out of the manylinux x86_64
wheel (HTTP range requests on the zip; no 600 MB download), then asks it cudnnGetVersion() and
cudnnGetCudartVersion() through ctypes in a child process (neither needs a GPU). Writes
tests/data/knowledge/wheel_cudart.json, which tests/knowledge/test_knowledge_sources.py checks compat/cudnn.toml against.

    python scripts/record_wheel_cudart.py                 # every release of cu11, cu12, cu13
    python scripts/record_wheel_cudart.py nvidia-cudnn-cu12==9.1.0.70
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple
from urllib.parse import urljoin

import requests

# Run as a script from anywhere: the package beside scripts/ is importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cudnn_doctor.refresh.fetch import Budget, RangeFile  # noqa: E402

PROJECTS = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "knowledge" / "wheel_cudart.json"
TIMEOUT = 30
# No deadline for the whole run, only TIMEOUT per request: the package's RangeFile reads through a Budget.
PER_REQUEST = Budget(float("inf"), per_request=TIMEOUT)
# Where each major's dispatcher finds cudnnGetVersion/cudnnGetCudartVersion.
SUBLIB = {"8": "libcudnn_ops_infer.so.8", "9": "libcudnn_graph.so.9"}

ASK = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
for name in ("cudnnGetVersion", "cudnnGetCudartVersion"):
    getattr(lib, name).restype = ctypes.c_size_t
print(lib.cudnnGetVersion(), lib.cudnnGetCudartVersion())
"""


_PROJECTS: Dict[str, dict] = {}


def project_json(session: requests.Session, project: str) -> dict:
    """PyPI's JSON API answer for a project (every release's files), fetched once."""
    if project not in _PROJECTS:
        got = session.get("https://pypi.org/pypi/%s/json" % project, timeout=TIMEOUT)
        got.raise_for_status()
        _PROJECTS[project] = dict(got.json(), _url=got.url)
    return _PROJECTS[project]


def wheel_url(session: requests.Session, project: str, version: str) -> Optional[str]:
    for f in project_json(session, project)["releases"].get(version, []):
        if f["filename"].endswith(".whl") and "manylinux" in f["filename"] and "x86_64" in f["filename"]:
            # Mirrors of PyPI answer with URLs relative to the JSON document.
            return urljoin(project_json(session, project)["_url"], f["url"])
    return None


def decode(number: int) -> str:
    """cudnnGetCudartVersion's number (major*1000 + minor*10) as 'major.minor'."""
    return "%d.%d" % (number // 1000, (number % 1000) // 10)


def ask(session: requests.Session, project: str, version: str) -> Optional[Dict[str, object]]:
    url = wheel_url(session, project, version)
    if url is None:
        return None
    major = version.split(".")[0]
    # The dispatcher libcudnn.so.<major> forwards both calls to one sub-library: fetch just those two.
    wanted = {"libcudnn.so.%s" % major, SUBLIB.get(major, "")}
    with zipfile.ZipFile(RangeFile(session, url, PER_REQUEST)) as zf, tempfile.TemporaryDirectory() as tmp:
        for name in zf.namelist():
            if name.rsplit("/", 1)[-1] in wanted:
                (Path(tmp) / name.rsplit("/", 1)[-1]).write_bytes(zf.read(name))
        path = Path(tmp) / ("libcudnn.so.%s" % major)
        if not path.is_file():
            return None
        # A native call runs in a child with a timeout: a library that hangs or crashes costs one row.
        proc = subprocess.run([sys.executable, "-c", ASK, str(path)], capture_output=True, text=True,
                              timeout=60, env=dict(os.environ, LD_LIBRARY_PATH=tmp))
    if proc.returncode != 0:
        return {"project": project, "version": version, "error": proc.stderr.strip().splitlines()[-1:]}
    cudnn, cudart = (int(x) for x in proc.stdout.split())
    return {"project": project, "version": version, "wheel": url.rsplit("/", 1)[-1],
            "cudnnGetVersion": cudnn, "cudnnGetCudartVersion": cudart, "built_with_cuda": decode(cudart)}


def releases(session: requests.Session, project: str) -> List[str]:
    from packaging.version import Version

    found = project_json(session, project)["releases"]
    return sorted((v for v, files in found.items() if files and not Version(v).is_prerelease), key=Version)


def main(argv: List[str]) -> int:
    session = requests.Session()
    wanted: List[Tuple[str, str]] = []
    if argv:
        wanted = [tuple(a.split("==", 1)) for a in argv]  # type: ignore[misc]
    else:
        for project in PROJECTS:
            wanted += [(project, v) for v in releases(session, project)]
    old = json.loads(OUT.read_text()) if OUT.is_file() else {"rows": []}
    rows = {(r["project"], r["version"]): r for r in old["rows"]}
    for project, version in wanted:
        try:
            row = ask(session, project, version)
        except (requests.RequestException, subprocess.TimeoutExpired, zipfile.BadZipFile, OSError) as exc:
            print("%s==%s: %s" % (project, version, exc), file=sys.stderr)
            continue
        if row:
            rows[(project, version)] = row
            print("%s==%s -> CUDA %s" % (project, version, row.get("built_with_cuda", row.get("error"))))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {"source": "cudnnGetCudartVersion() and cudnnGetVersion() of libcudnn.so.<major> in each wheel "
                     "https://pypi.org/project/<project>/<version>/ (manylinux x86_64), read by "
                     "scripts/record_wheel_cudart.py",
           "recorded": datetime.date.today().isoformat(),
           "rows": sorted(rows.values(), key=lambda r: (r["project"], [int(x) for x in r["version"].split(".")]))}
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
