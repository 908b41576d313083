"""The newest cuDNN wheel a node installs, by its processor and glibc: compat's [wheel_platforms] (one row per
manylinux floor) against PyPI's own file list (tests/data/pypi_cudnn_files.json, recorded by
scripts/record_pypi_files.py) and packaging.tags' reading of each file's platform tags, as pip reads them."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from hermetic import shipped_compat

FILES = json.loads((Path(__file__).parents[1] / "data" / "pypi_cudnn_files.json").read_text())["projects"]
COMPAT = shipped_compat()
_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def _installs(platform_tag: str, machine: str, glibc: str) -> bool:
    """Whether pip on a glibc `glibc` node of `machine` takes a wheel of this platform tag (PEP 600's rule)."""
    if not platform_tag.endswith(machine):
        return False
    head = platform_tag.split("_")
    floor = _LEGACY.get(head[0]) or ((int(head[1]), int(head[2])) if head[0] == "manylinux" else None)
    return floor is not None and floor <= tuple(int(x) for x in glibc.split("."))


def _oracle(project: str, major: int, machine: str, glibc: str) -> Optional[str]:
    found = []
    for f in FILES[project]["files"]:
        if not f["filename"].endswith(".whl") or f.get("yanked"):
            continue
        _, version, _, tags = parse_wheel_filename(f["filename"])
        if version.is_prerelease or version.is_devrelease or version.major != major:
            continue
        if any(_installs(t.platform, machine, glibc) for t in tags):
            found.append(Version("%d.%d.%d" % version.release[:3]))
    return str(max(found)) if found else None


@pytest.mark.parametrize("project, major", [("nvidia-cudnn-cu12", 9), ("nvidia-cudnn-cu12", 8),
                                            ("nvidia-cudnn-cu11", 9), ("nvidia-cudnn-cu13", 9)])
@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("glibc", ["2.12", "2.17", "2.26", "2.27", "2.28", "2.35"])
def test_the_newest_wheel_a_node_installs_is_pypis(project, major, machine, glibc):
    got = COMPAT.exists.newest_cudnn_wheel(project, major, "linux", machine, glibc)
    assert got == _oracle(project, major, machine, glibc)


def test_a_glibc_2_17_node_is_not_sent_to_a_manylinux_2_27_wheel():
    """CentOS 7's glibc 2.17: the newest cuDNN 9 for CUDA 12 it installs is the last manylinux2014 release, not the
    newest release (manylinux_2_27); CUDA 13's wheels need 2.27."""
    old = COMPAT.exists.newest_cudnn_wheel("nvidia-cudnn-cu12", 9, "linux", "x86_64", "2.17")
    new = COMPAT.exists.newest_cudnn_wheel("nvidia-cudnn-cu12", 9, "linux", "x86_64", "2.35")
    assert old and new and Version(old) < Version(new)
    assert COMPAT.exists.newest_cudnn_wheel("nvidia-cudnn-cu13", 9, "linux", "x86_64", "2.17") is None
    assert COMPAT.exists.newest_cudnn_wheel("nvidia-cudnn-cu12", 9, "linux", "x86_64") == new  # glibc not known
