"""NVIDIA's cuDNN wheels on PyPI (nvidia-cudnn-cuNN), where NVIDIA's download host cannot be reached: the same
libraries as the release's archive. The wheel's sha256 comes from PyPI's JSON API, every file's from the wheel's own
RECORD, so nothing unchecked is installed."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import zipfile
from typing import Mapping, Optional
from urllib.parse import urljoin

from packaging.version import InvalidVersion, Version

from ..remedies.install_archive import (drop_sha256_fix, manifest_retry_fix, pypi_release_fix, pypi_unreachable_fix,
                                        wheel_record_fix)
from .errors import Refusal
from .fetch import Progress, Source, download, fetch_index

PYPI_BASE = "https://pypi.org/pypi/"
PYPI_ENV = "CUDNN_DOCTOR_PYPI_URL"  # another JSON API base (a mirror, tests)

# The tail of the wheel file name for each of NVIDIA's manifest platforms.
_WHEEL_TAIL = {"linux-x86_64": "manylinux2014_x86_64.whl", "linux-sbsa": "manylinux2014_aarch64.whl",
               "windows-x86_64": "win_amd64.whl"}


def _release(releases: Mapping[str, list], version: str) -> Optional[str]:
    """The PyPI release of cuDNN `version` ('9.1.0' is 9.1.0.70; a four-part label must match exactly)."""
    def parsed(label: str) -> Optional[Version]:
        try:
            return Version(label)
        except InvalidVersion:
            return None
    found = [k for k in releases if (k == version or k.startswith(version + ".")) and parsed(k) and releases[k]]
    return max(found, key=lambda k: parsed(k) or Version("0")) if found else None


def _wheel(files: list, platform: str) -> Optional[dict]:
    tail = _WHEEL_TAIL.get(platform)
    return next((f for f in files if tail and str(f.get("filename", "")).endswith(tail)
                 and f.get("packagetype") == "bdist_wheel"), None)


def check_record(wheel: str) -> int:
    """Every member of the wheel has the size and sha256 its RECORD gives (PEP 376/427); returns how many were
    checked. A member missing from RECORD, or a RECORD that lists nothing, is refused: it cannot be checked."""
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if not n.endswith("/")]
        record = next((n for n in names if n.count("/") == 1 and n.endswith(".dist-info/RECORD")), None)
        rows = list(csv.reader(io.TextIOWrapper(zf.open(record), "utf-8"))) if record else []
        listed = {row[0]: row for row in rows if row and row[0]}
        unchecked = [n for n in names if n != record and not (listed.get(n) or ["", ""])[1]]
        if not listed or unchecked:
            raise Refusal("%s lists no checksum for %s" % (wheel.rsplit("/", 1)[-1], ", ".join(unchecked[:3]) or
                                                            "any file"),
                          "its RECORD is what proves each file is the one NVIDIA built", wheel_record_fix())
        for name in names:
            if name == record:
                continue
            algo, want = listed[name][1].split("=", 1)
            digest, size = hashlib.new(algo), 0
            with zf.open(name) as member:
                for chunk in iter(lambda: member.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
            got = base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
            if got != want or (listed[name][2] and int(listed[name][2]) != size):
                raise Refusal("%s in %s does not match its RECORD" % (name, wheel.rsplit("/", 1)[-1]),
                              "a damaged or altered wheel", wheel_record_fix())
    return len(names) - 1


def from_pypi(project: str, version: str, platform: str, sha256: Optional[str], allow_http: bool,
              env: Mapping[str, str], progress: Optional[Progress] = None) -> Source:
    """Downloads the wheel of cuDNN `version` for `platform` from PyPI, checked against PyPI's sha256 and its RECORD."""
    base = env.get(PYPI_ENV) or PYPI_BASE
    url = urljoin(base if base.endswith("/") else base + "/", "%s/json" % project)
    resp, want = fetch_index(url, sha256, allow_http, lambda error: Refusal(
        "neither NVIDIA's download host nor PyPI (%s) could be reached (%s)" % (url, error),
        "PyPI's wheel of the release is the other place it comes from", pypi_unreachable_fix()))
    if resp.status_code != 200:
        raise Refusal("PyPI answered HTTP %d for %s" % (resp.status_code, url), "it lists the project's wheels",
                      manifest_retry_fix())
    releases = (resp.json() or {}).get("releases") or {}
    label = _release(releases, version)
    chosen = _wheel(releases.get(label) or [], platform) if label else None
    if chosen is None:
        raise Refusal("PyPI has no %s wheel of cuDNN %s for %s" % (project, version, platform),
                      "the release is published there per CUDA major and platform", pypi_release_fix(project))
    sha = str((chosen.get("digests") or {}).get("sha256", "")).lower()
    if want and want != sha:
        raise Refusal("--sha256 %s is not the sha256 PyPI gives for %s (%s)" % (want, chosen["filename"], sha),
                      "one of them is not for this file", drop_sha256_fix(), code=2)
    size = chosen.get("size") if isinstance(chosen.get("size"), int) else None
    source = download(urljoin(resp.url or url, str(chosen["url"])), sha, allow_http, progress, size=size, kind="pypi")
    try:
        checked = check_record(source.path)
    except BaseException:
        source.cleanup()
        raise
    source.manifest = {"project": project, "version": label, "wheel": chosen["filename"], "url": url,
                       "sha256": sha, "record_checked": checked}
    return source
