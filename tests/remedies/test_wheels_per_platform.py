"""A cuDNN release that exists for linux-x86_64 may have no wheel for aarch64 or Windows: the validator
(knowledge/exists.py, Compat.cudnn_build_exists_on) answers per platform from PyPI's files as compat holds them
(compat/cudnn_layout.toml [wheel_platforms], scripts/gen_cudnn_wheel_platforms.py), says "insufficient metadata"
where compat does not hold the answer (an archive for sbsa or Windows, a release newer than the list), and a
`pip install "nvidia-cudnn-cuNN==X.*"` fix for a platform pins only a release with a wheel there."""
from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings, strategies as st

from cudnn_doctor.knowledge.exists import INSUFFICIENT, platform_key
from cudnn_doctor.remedies.cudnn import cudnn_install_fix
from cudnn_doctor.versions import release3
from hermetic import shipped_compat

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

COMPAT = shipped_compat()
ROWS = COMPAT.table("cudnn_layout", "wheel_platforms")["rows"]
PLATFORMS = [("linux", "x86_64"), ("linux", "aarch64"), ("linux", "sbsa"), ("windows", "AMD64"), ("windows", "arm64")]


@pytest.mark.parametrize("release,cuda,platform,machine,exists", [
    ("9.18.0", "12", "windows", "AMD64", False),  # 9.18.0.77 shipped Linux wheels only
    ("9.18.1", "12", "windows", "AMD64", True),
    ("9.18.0", "12", "linux", "x86_64", True),
    ("8.9.7", "12", "linux", "aarch64", False),  # no cuDNN 8 wheel for aarch64
    ("9.5.0", "11", "linux", "sbsa", False),  # nvidia-cudnn-cu11 never had one
    ("9.28.1", "13", "windows", "arm64", True),
    ("9.26.0", "13", "windows", "arm64", False),
])
def test_the_wheels_nvidia_published(release, cuda, platform, machine, exists):
    assert COMPAT.cudnn_build_exists_on(release, cuda, platform, machine).exists is exists


def test_what_compat_does_not_hold_is_said_not_guessed():
    newer = COMPAT.cudnn_build_exists_on("9.99.0", "13", "linux", "x86_64")
    assert newer.exists is None and INSUFFICIENT in newer.why
    for platform, machine in PLATFORMS[1:]:
        archive = COMPAT.cudnn_build_exists_on("9.14.0", "13", platform, machine, channel="archive")
        assert archive.exists is None and INSUFFICIENT in archive.why, (platform, archive)
    assert COMPAT.cudnn_build_exists_on("9.14.0", "13", channel="archive").exists is True
    assert COMPAT.cudnn_build_exists_on("9.1.0", "13", "windows", "AMD64").exists is False  # no CUDA 13 build


@st.composite
def listed(draw):
    """A (project, platform, release) of the table, or a release of the project missing on that platform (a platform
    has a row per manylinux floor)."""
    row = draw(st.sampled_from(ROWS))
    here = {r for o in ROWS if (o["project"], o["platform"]) == (row["project"], row["platform"]) for r in o["releases"]}
    others = sorted({r for o in ROWS if o["project"] == row["project"] for r in o["releases"]} - here)
    present = draw(st.booleans()) or not others
    return row["project"], row["platform"], draw(st.sampled_from(row["releases"] if present else others)), present


@settings(max_examples=150, deadline=None)
@given(listed())
def test_every_listed_wheel_is_answered_as_listed(case):
    project, where, release, present = case
    platform, machine = where.split("-", 1)
    got = COMPAT.cudnn_build_exists_on(release, project.rsplit("cu", 1)[1], platform, machine)
    assert platform_key(platform, machine) == where
    assert got.exists is (present if got.exists is not None else None) and (got.exists is not None or not present)


def _pins(text):
    return re.findall(r"nvidia-cudnn-cu(\d+)==(\d+\.\d+\.\d+)\.\*", text)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([r for r in COMPAT.cudnn_releases() if r.startswith(("8.", "9."))]),
       st.sampled_from(["11", "11.8", "12", "12.4", "12.8", "13", "13.0"]), st.sampled_from(PLATFORMS),
       st.sampled_from(["pip", "system"]))
@example("9.18.0", "12", ("windows", "AMD64"), "pip")
@example("8.9.7", "12", ("linux", "aarch64"), "pip")
@example("8.9.7", "11.8", ("linux", "x86_64"), "system")
@example("8.0.0", "11", ("linux", "aarch64"), "pip")  # found by the draw: no nvidia-cudnn-cu11 wheel for aarch64
def test_a_pinned_wheel_exists_for_the_platform(release, cuda, where, origin):
    platform, machine = where
    fix = cudnn_install_fix(COMPAT, cuda, version=release, origin=origin, platform=platform, machine=machine)
    for major, pinned in _pins(fix.text):
        assert COMPAT.cudnn_build_exists_on(pinned, major, platform, machine).exists is not False, (fix.text, where)
    for major, cudnn_major in re.findall(r"nvidia-cudnn-cu(\d+)==(\d+)\.\*", fix.text):
        assert any(COMPAT.cudnn_build_exists_on(r, major, platform, machine).exists is not False
                   for r in COMPAT.cudnn_releases(int(cudnn_major))), (fix.text, where)
    assert release3(release) is not None
