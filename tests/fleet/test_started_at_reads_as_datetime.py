"""runclock.iso_utc writes what datetime writes for the same instant (it exists to spare datetime's import)."""
import random
from datetime import datetime, timezone

from hypothesis import given, strategies as st

from cudnn_doctor.runclock import iso_utc


def _datetime(wall: float) -> str:
    return datetime.fromtimestamp(wall, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@given(st.floats(min_value=0, max_value=4102444800.0, allow_nan=False, allow_infinity=False))
def test_any_instant_reads_as_datetime_writes_it(wall):
    assert iso_utc(wall) == _datetime(wall)


def test_the_rounding_edges_read_as_datetime_writes_them():
    rng = random.Random(271130)
    walls = [0.0, 0.0000005, 0.0000015, 0.9999995, 0.9999994999, 1795771317.9999995, 1795771317.0000005]
    walls += [rng.randrange(0, 4102444800) + rng.randrange(0, 2000000) / 2e6 for _ in range(20000)]
    walls += [rng.uniform(0, 4102444800) for _ in range(20000)]
    assert [iso_utc(w) for w in walls] == [_datetime(w) for w in walls]
