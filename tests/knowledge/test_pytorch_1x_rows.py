"""The torch 1.0-1.11 rows of compat/frameworks.toml against PyPI's own record of those wheels (compat/wheels.json,
written by scripts/record_pypi.py): each row's Python range admits exactly the CPython versions its release minor
published wheels for, and each minor names one stable build (the one PyPI serves)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.tags import parse_tag
from packaging.version import Version

from cudnn_doctor.knowledge import load_compat

ROOT = Path(__file__).resolve().parents[2]
# Every CPython a torch 1.x wheel could name: 2.7 and 3.0-3.12.
PYTHONS = ["2.7"] + ["3.%d" % m for m in range(13)]


def _old_rows():
    rows = load_compat().framework_rows("pytorch")
    return [r for r in rows if Version(r["torch"]) < Version("1.12")]


def _cpython_of_wheels(minor: str) -> set:
    """The CPython versions the PyPI wheels of every release of `minor` are tagged for."""
    doc = json.loads((ROOT / "compat" / "wheels.json").read_text(encoding="utf-8"))
    releases = doc["projects"]["torch"]["releases"]
    found = set()
    for version, info in releases.items():
        if ".".join(version.split(".")[:2]) != minor:
            continue
        for i in info["f"]:
            text = doc["tags"][i]
            text = text.split("-", 1)[1] if text.split("-", 1)[0].isdigit() else text  # a build number first
            for tag in parse_tag(text):
                if tag.interpreter.startswith("cp"):
                    digits = tag.interpreter[2:]
                    found.add("%s.%s" % (digits[0], digits[1:]))
    return found


def test_the_old_rows_cover_torch_1_0_to_1_11():
    assert {r["torch"] for r in _old_rows()} == {"1.%d" % m for m in range(12)}


@pytest.mark.parametrize("minor", ["1.%d" % m for m in range(12)])
def test_python_range_is_the_cpython_tags_of_the_wheels(minor):
    wheels = _cpython_of_wheels(minor)
    assert wheels, minor
    for row in (r for r in _old_rows() if r["torch"] == minor):
        admitted = {p for p in PYTHONS if Version(p) in SpecifierSet(row["python"])}
        assert admitted == wheels, (minor, row["cuda"], row["python"], sorted(wheels, key=Version))


@pytest.mark.parametrize("minor", ["1.%d" % m for m in range(12)])
def test_one_stable_build_per_release_and_each_row_sourced(minor):
    rows = [r for r in _old_rows() if r["torch"] == minor]
    assert [r["channel"] for r in rows].count("stable") == 1
    for row in rows:
        assert row["cudnn"] in row["source"] and row["source"].startswith("https://")
