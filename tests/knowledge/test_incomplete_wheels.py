"""compat's word on which cuDNN wheels carry which engine (cudnn_layout.toml [v9] linux_engines_since, and the
known_bad.toml [cudnn] rows about one wheel's build) against the real wheels' file lists on PyPI, read from each
wheel's zip central directory by HTTP range requests (a few hundred KB, not the 500 MB wheels). Skipped offline."""
from __future__ import annotations

from typing import List

import pytest
from realdata import wheel_members

from cudnn_doctor.knowledge import load_compat

pytestmark = [pytest.mark.slow, pytest.mark.realdata]


def _libraries(project: str, release: str) -> List[str]:
    files = wheel_members(project, release, "x86_64.whl")
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
