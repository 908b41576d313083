"""Reading the sources over HTTP: PyPI's JSON API, wheel metadata by range requests, NVIDIA redistrib manifests."""
from __future__ import annotations

import io
import re
import time
import zipfile
from typing import Any, Dict, Optional
from urllib.parse import urljoin

import requests
from packaging.version import InvalidVersion, Version

PYPI_JSON = "https://pypi.org/pypi/%s/json"
CUDNN_INDEX = "https://developer.download.nvidia.com/compute/cudnn/redist/"
CUDA_INDEX = "https://developer.download.nvidia.com/compute/cuda/redist/"
CUDNN_MANIFEST = CUDNN_INDEX + "redistrib_%s.json"
CUDA_MANIFEST = CUDA_INDEX + "redistrib_%s.json"


class Budget:
    """One deadline for a whole refresh: every request gets what is left of it, capped per request."""

    def __init__(self, seconds: float, per_request: float = 20.0) -> None:
        self.end = time.monotonic() + seconds
        self.per_request = per_request

    def timeout(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise requests.Timeout("the time allowed for the refresh ran out")
        return min(left, self.per_request)


def get_json(session: requests.Session, url: str, budget: Budget) -> Dict[str, Any]:
    got = session.get(url, timeout=budget.timeout())
    got.raise_for_status()
    doc = got.json()
    if not isinstance(doc, dict):
        raise ValueError("%s did not answer a JSON object" % url)
    doc["_url"] = got.url
    return doc


def manifest_labels(session: requests.Session, index_url: str, budget: Budget) -> list:
    """The release labels an NVIDIA redist index page lists (its redistrib_<label>.json links), oldest first."""
    got = session.get(index_url, timeout=budget.timeout())
    got.raise_for_status()
    labels = set(re.findall(r"redistrib_([0-9]+(?:\.[0-9]+)+)\.json", got.text))
    out = []
    for label in labels:
        try:
            out.append((Version(label), label))
        except InvalidVersion:
            continue
    return [label for _, label in sorted(out)]


def pypi_project(session: requests.Session, project: str, budget: Budget) -> Dict[str, Any]:
    """PyPI's JSON API answer for a project, trimmed to what the refresh reads: each release's files."""
    doc = get_json(session, PYPI_JSON % project, budget)
    releases = {}
    for version, files in (doc.get("releases") or {}).items():
        releases[version] = [{"filename": f.get("filename"), "upload_time": f.get("upload_time"),
                              "yanked": bool(f.get("yanked")),
                              # Mirrors of PyPI answer with URLs relative to the document.
                              "url": urljoin(doc["_url"], f.get("url") or "")}
                             for f in files or []]
    return {"_recorded": {"url": PYPI_JSON % project}, "name": project, "releases": releases}


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file through HTTP range requests (what zipfile needs)."""

    def __init__(self, session: requests.Session, url: str, budget: Budget) -> None:
        self.session, self.url, self.budget, self.pos = session, url, budget, 0
        head = session.head(url, allow_redirects=True, timeout=budget.timeout())
        head.raise_for_status()
        self.url = head.url
        self.size = int(head.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        got = self.session.get(self.url, headers={"Range": "bytes=%d-%d" % (self.pos, end - 1)},
                               timeout=self.budget.timeout())
        got.raise_for_status()
        self.pos += len(got.content)
        return got.content


def wheel_metadata(session: requests.Session, url: str, budget: Budget) -> Optional[str]:
    """The METADATA file of a remote wheel, read without downloading the wheel (a few range requests)."""
    with zipfile.ZipFile(RangeFile(session, url, budget)) as zf:
        for name in zf.namelist():
            if name.endswith(".dist-info/METADATA") and name.count("/") == 1:
                return zf.read(name).decode("utf-8", "replace")
    return None
