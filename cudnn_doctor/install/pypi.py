"""NVIDIA's cuDNN wheels on PyPI (nvidia-cudnn-cuNN), where NVIDIA's download host cannot be reached: the same
libraries as the release's archive. The file comes from the list PyPI's simple API gives (PEP 691 JSON), chosen for the
target by wheel_pick; its sha256 is the one that list gives, every member's the one the wheel's own RECORD gives, so
nothing unchecked is installed."""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import sys
import zipfile
from typing import Mapping, Optional
from urllib.parse import urljoin

from ..remedies.install_archive import (drop_sha256_fix, manifest_retry_fix, pypi_release_fix, pypi_unreachable_fix,
                                        wheel_record_fix)
from .errors import Refusal
from .fetch import Progress, Source, download, fetch_index
from .wheel_pick import Glibc, pick_wheel, wheel_files

PYPI_BASE = "https://pypi.org/simple/"
PYPI_ENV = "CUDNN_DOCTOR_PYPI_URL"  # another simple-API base (a mirror, tests)
_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # PEP 691: the file list as JSON, hashes and sizes included


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


def planned_by_index(project: str, version: str, platform: str, glibc: Optional[Glibc]) -> Optional[str]:
    """The file the wheel index (compat/wheels.json, through knowledge/resolve.release_wheel) plans for the target:
    None where the index does not hold the project or the release, or no wheel of it fits."""
    # why: the wheel index and resolver (packaging's tags and markers), 50-85 ms, only for a PyPI install
    from ..knowledge.resolve import release_wheel
    from ..knowledge.wheel_index import Node, load_wheel_index

    machine = {"linux-x86_64": "x86_64", "linux-sbsa": "aarch64", "linux-aarch64": "aarch64",
               "windows-x86_64": "AMD64"}.get(platform)
    index = load_wheel_index()
    if machine is None or not index.has_project(project):
        return None
    # The cuDNN wheels are py3-none-<platform>: any Python 3 matches them; the processor and glibc decide.
    windows = machine == "AMD64"
    node = Node(python="%d.%d" % sys.version_info[:2], machine=machine,
                glibc="%d.%d" % glibc if glibc and not windows else "", platform="win32" if windows else "linux")
    _, names = release_wheel(index, project, version, node)
    return names[0] if names else None


def from_pypi(project: str, version: str, platform: str, sha256: Optional[str], allow_http: bool,
              env: Mapping[str, str], progress: Optional[Progress] = None, glibc: Optional[Glibc] = None) -> Source:
    """Downloads the wheel of cuDNN `version` for `platform` (and a target of glibc `glibc`, None: not known) from
    PyPI, checked against the sha256 PyPI lists and the wheel's RECORD."""
    base = env.get(PYPI_ENV) or PYPI_BASE
    url = urljoin(base if base.endswith("/") else base + "/", "%s/" % project)
    resp, want = fetch_index(url, sha256, allow_http, lambda error: Refusal(
        "neither NVIDIA's download host nor PyPI (%s) could be reached (%s)" % (url, error),
        "PyPI's wheel of the release is the other place it comes from", pypi_unreachable_fix()),
        headers={"Accept": _SIMPLE_JSON})
    if resp.status_code != 200:
        raise Refusal("PyPI answered HTTP %d for %s" % (resp.status_code, url), "it lists the project's wheels",
                      manifest_retry_fix())
    try:
        listed = (resp.json() or {}).get("files") or []
    except ValueError:
        raise Refusal("PyPI's answer for %s is not the JSON file list" % url, "it lists the project's wheels",
                      manifest_retry_fix())
    files = wheel_files(listed, resp.url or url)
    choice = pick_wheel(files, project, version, platform, glibc)
    planned = planned_by_index(project, version, platform, glibc)
    # The wheel index plans (knowledge/resolve.py, the resolver pick and the fixes use); PyPI's live list says the
    # file is still there and gives its URL and sha256. A release newer than the index is planned from the list.
    chosen = next((w for w in files if w.filename == planned and not w.yanked), None) or choice.wheel
    if chosen is None:
        raise Refusal(choice.why, "NVIDIA publishes each release there per CUDA major and platform",
                      pypi_release_fix(project))
    if want and want != chosen.sha256:
        raise Refusal("--sha256 %s is not the sha256 PyPI gives for %s (%s)" % (want, chosen.filename, chosen.sha256),
                      "one of them is not for this file", drop_sha256_fix(), code=2)
    source = download(chosen.url, chosen.sha256 or None, allow_http, progress, size=chosen.size, kind="pypi")
    try:
        checked = check_record(source.path)
    except BaseException:
        source.cleanup()
        raise
    source.manifest = {"project": project, "version": str(chosen.version), "wheel": chosen.filename, "url": url,
                       "sha256": chosen.sha256, "record_checked": checked,
                       "planned_by": "the wheel index" if chosen.filename == planned else "PyPI's file list"}
    if choice.glibc_note:
        source.manifest["glibc"] = choice.glibc_note
    return source
