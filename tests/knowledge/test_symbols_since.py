"""compat/symbols_since.json (scripts/record_symbols_since.py) against the real libraries: a seeded draw of its
dated functions, each defined by the wheel it names and not by the release read before it (their .dynsym, read from
PyPI by range requests). NCCL's wheels (150-350 MB) are left to the script; the CUDA runtime's and NVRTC's are
drawn. Skipped offline."""
from __future__ import annotations

import json
import random

import pytest
from realdata import wheel_elf_symbols

from cudnn_doctor.knowledge.load import compat_dir

pytestmark = [pytest.mark.slow, pytest.mark.realdata]

RECORDED = json.loads((compat_dir() / "symbols_since.json").read_text())
MEMBERS = {"nvidia-cuda-runtime-cu11": "libcudart.so.11.0", "nvidia-cuda-runtime-cu12": "libcudart.so.12",
           "nvidia-cuda-runtime": "libcudart.so.13", "nvidia-cuda-nvrtc-cu11": "libnvrtc.so.11.2",
           "nvidia-cuda-nvrtc-cu12": "libnvrtc.so.12", "nvidia-cuda-nvrtc": "libnvrtc.so.13"}


def _draws(seed: int = 20261202, per_library: int = 3):
    rng = random.Random(seed)
    for stem in ("libcudart", "libnvrtc"):
        library = RECORDED["libraries"][stem]
        for symbol in rng.sample(sorted(library["since"]), per_library):
            yield stem, symbol


def _symbols(wheel: str):
    project, release = wheel.split("==")
    return wheel_elf_symbols(project, release, MEMBERS[project])


@pytest.mark.parametrize("stem, symbol", list(_draws()))
def test_a_dated_function_is_in_its_wheel_and_not_in_the_release_before(stem, symbol):
    library = RECORDED["libraries"][stem]
    wheel = library["since"][symbol]["wheel"]
    before = library["read"][library["read"].index(wheel) - 1]
    have, had = _symbols(wheel), _symbols(before)
    if have is None or had is None:
        pytest.skip("PyPI cannot be reached")
    assert symbol in have and symbol not in had, (symbol, wheel, before)


def test_every_library_was_read_from_its_oldest_wheel_on():
    for stem, library in RECORDED["libraries"].items():
        assert library["read"][0] == library["oldest_read"] and library["since"], stem
        assert all(row["wheel"] in library["read"][1:] for row in library["since"].values()), stem
