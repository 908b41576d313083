"""A cuDNN release's lowest compute capability comes from the era of that release, never from the first release of a
build row that spans eras (derived rows run from one wheel release to another across NVIDIA's editions)."""
from __future__ import annotations

from packaging.version import Version

from hermetic import shipped_compat

COMPAT = shipped_compat()


def _era(release: str):
    rows = COMPAT.table("cudnn", "min_cc_eras")["rows"]
    return next(r for r in rows if Version(r["from"]) <= Version(release) <= Version(r["to"]))


def test_every_build_lies_inside_one_era_and_carries_its_floor():
    for build in COMPAT.cudnn_builds():
        era_first, era_last = _era(build.first), _era(build.last)
        if build.built_with:  # derived rows are cut at era boundaries
            assert era_first is era_last, (build.first, build.last, build.variant)
            if build.min_cc is not None and "min_cc" in era_first:
                assert build.min_cc.low == era_first["min_cc"]
                assert build.min_cc.source == era_first["source"]


def test_a_release_after_the_last_edition_read_says_so():
    """9.19 (the GPU lab's wheel) is newer than every edition read: its floor is secondary and names that edition."""
    floor = COMPAT.cudnn_min_cc("9.19.0")
    assert floor.low == "7.5" and floor.status == "secondary"
    assert "https://docs.nvidia.com/" in floor.source and "9.17.0 edition" in floor.source
    verdict = COMPAT.pair_lookup("12.8", "9.19.0", cc="7.0")
    gpu = [r for r in verdict["reasons"] if r["check"] == "gpu"]
    assert gpu and gpu[0]["ok"] is False and gpu[0]["source"] == floor.source


def test_the_release_an_edition_was_read_for_stays_confirmed():
    assert COMPAT.cudnn_min_cc("9.17.0").status == "confirmed"
    assert COMPAT.cudnn_min_cc("9.10.2").low == "5.0" and COMPAT.cudnn_min_cc("9.10.2").status == "confirmed"


def test_every_era_names_a_url():
    for row in COMPAT.table("cudnn", "min_cc_eras")["rows"]:
        assert "https://" in row["source"], row
