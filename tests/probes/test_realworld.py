"""The real-world corpus (tests/realworld_cases.py): for every case cudnn-doctor's facts and findings agree with the
real glibc loader, and every error's fix, applied to a copy of the stack, makes the framework load a cuDNN it accepts.

Wheels come through `pip download` into the shared test cache; CUDNN_DOCTOR_NO_DOWNLOAD=1 skips what is not cached."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from realworld_cases import CASES
from realworld_run import WORK, run_case
from realworld_stacks import missing_wheels

# live: the real loader resolves absolute paths, so the doctor reads this machine too (with each case's environment
# and its own ld.so.conf/ld.so.cache standing in for /etc's).
pytestmark = [pytest.mark.realworld, pytest.mark.live]


def _why_not():
    for tool in ("gcc", "readelf", "ldconfig", "cp"):
        if shutil.which(tool) is None:
            return "%s is not installed" % tool
    if not Path("/lib64/ld-linux-x86-64.so.2").exists():
        return "not an x86_64 glibc machine"
    return None


# Disagreements found by the last full run and not yet fixed: strict, so a case that starts agreeing fails until it
# leaves this list.
KNOWN_DISAGREEMENTS: set = set()


def cases(part: int, parts: int) -> list:
    """Every `parts`-th case from `part`: the corpus is split over files (test_realworld_b.py holds the other half) so
    that the full run's `--dist loadfile` spreads it over the workers."""
    return [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="known disagreement"))
            if c.name in KNOWN_DISAGREEMENTS else c for c in CASES[part::parts]]


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
@pytest.mark.parametrize("case", cases(0, 2), ids=lambda c: c.name)
def test_doctor_agrees_with_the_real_loader_and_its_fix_works(case):
    agrees_and_its_fix_works(case)


def agrees_and_its_fix_works(case) -> None:
    missing = missing_wheels(case)
    if missing:
        pytest.skip("wheels not available here: %s" % missing)
    work = WORK / ("pytest-%d" % os.getpid())  # under the cache: hard links need one filesystem
    try:
        row = run_case(case, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert row.agree, "%s\n  oracle: %s\n  doctor: %s\n  %s" % (case.name, row.oracle, row.prediction,
                                                              "\n  ".join(row.problems))
    if row.fix not in ("-", "proven"):
        # The harness re-judges every library of every framework after a fix (issue 34); a fix it cannot prove (one
        # it does not run here, or PaddlePaddle's own environment without its libcudnn.so link) is an expected
        # failure that prints what is missing.
        pytest.xfail("%s: the fix %s: %s" % (case.name, row.commands, row.fix))


def test_the_corpus_is_wide_enough():
    """>= 30 cases over >= 6 framework releases and >= 5 cuDNN releases; the issue's three failures each covered."""
    frameworks = {c.framework for c in CASES}
    cudnn = {w for c in CASES for w in [*c.site, *[f.wheel for f in c.folders],
                                        *[f.wheel for f in (c.system, c.conda) if f]] if "cudnn" in w[0]}
    assert len(CASES) >= 30 and len(frameworks) >= 6 and len(cudnn) >= 5
    assert {c.was_wrong for c in CASES if c.was_wrong} >= {
        "pinned major read from a mangled requirement", "CPU-only jaxlib", "mixed copy through a sub-library load"}
    assert len({c.name for c in CASES}) == len(CASES)
