"""compat's word on which cuDNN wheels carry which engine (cudnn_layout.toml [v9] linux_engines_since, and the
known_bad.toml [cudnn] rows about one wheel's build) against the real wheels' file lists on PyPI, read from each
wheel's zip central directory by HTTP range requests (a few hundred KB, not the 500 MB wheels). Skipped offline."""
from __future__ import annotations

import os
import struct
from typing import List, Optional
from urllib.parse import urljoin

import pytest

from cudnn_doctor.knowledge import load_compat

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


def _files(project: str, release: str) -> Optional[List[str]]:
    """The members of the release's manylinux x86_64 wheel, or None where PyPI cannot be asked."""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    import requests

    page = "https://pypi.org/simple/%s/" % project
    try:
        doc = requests.get(page, timeout=30, headers={"Accept": "application/vnd.pypi.simple.v1+json"}).json()
        [wheel] = [f for f in doc["files"] if f["filename"].startswith(
            "%s-%s-" % (project.replace("-", "_"), release)) and f["filename"].endswith("x86_64.whl")]
        url, size = urljoin(page, wheel["url"]), int(wheel["size"])
        tail = requests.get(url, headers={"Range": "bytes=%d-%d" % (size - 65536, size - 1)}, timeout=60).content
        end = tail.rfind(b"PK\x05\x06")
        cd_size, cd_offset = struct.unpack("<II", tail[end + 12:end + 20])
        directory = requests.get(url, headers={"Range": "bytes=%d-%d" % (cd_offset, cd_offset + cd_size - 1)},
                                 timeout=60).content
    except (requests.RequestException, ValueError, KeyError):
        return None
    names, at = [], 0
    while directory[at:at + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28:at + 34])
        names.append(directory[at + 46:at + 46 + name_len].decode())
        at += 46 + name_len + extra_len + comment_len
    return names


def _libraries(project: str, release: str) -> List[str]:
    files = _files(project, release)
    if files is None:
        pytest.skip("PyPI cannot be reached")
    return sorted(f.rsplit("/", 1)[1] for f in files if "/lib/" in f and ".so" in f)


@pytest.mark.parametrize("project, release", [
    ("nvidia-cudnn-cu12", "9.19.0.56"), ("nvidia-cudnn-cu12", "9.20.0.48"), ("nvidia-cudnn-cu12", "9.21.0.82"),
    ("nvidia-cudnn-cu12", "9.28.0.42"), ("nvidia-cudnn-cu13", "9.19.0.56"), ("nvidia-cudnn-cu13", "9.20.0.48"),
    ("nvidia-cudnn-cu13", "9.21.0.82"), ("nvidia-cudnn-cu13", "9.24.0.43")])
def test_the_engines_a_release_opens_by_name_are_in_its_wheels_but_for_the_known_broken_build(
        project, release):
    compat = load_compat()
    libraries = _libraries(project, release)
    fixed = compat.cudnn_layout(9)["linux_sublibraries"] + ["libcudnn.so.9"]
    assert set(fixed) <= set(libraries)
    later = compat.later_engines(9, release)
    bad = compat.bad_wheel(project, release)
    not_yet = set(compat.cudnn_layout(9)["linux_engines_since"]) - set(later)
    assert not not_yet & set(libraries)  # an engine is never shipped before the release compat names
    if bad is None:
        assert set(later) <= set(libraries)
    else:  # the row names the file its build lacks, and the release that has it again
        assert bad["lacks"] in later and bad["lacks"] not in libraries
        assert bad["lacks"] in _libraries(project, _first_fixed(project, bad["fixed_in"]))


def _first_fixed(project: str, fixed_in: str) -> str:
    """The wheel release (9.21.0.82) of the three-part release a row says fixed it (9.21.0)."""
    return {"9.21.0": "9.21.0.82"}[fixed_in]  # one build number for both CUDA majors
