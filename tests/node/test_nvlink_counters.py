"""The NVLink error counters are read in one or two field-values calls per GPU, not one call per link and counter,
and sum to what the per-link calls (nvidia-smi nvlink -e's numbers) give, whatever the driver supports; the GPUs
and pairs read side by side give what one after another gives."""
from __future__ import annotations

import ctypes
from typing import Dict, List, Tuple

from hypothesis import given, settings, strategies as st

from cudnn_doctor.native import gpu_health

COUNTERS = [name for name, _, _ in gpu_health._NVLINK_COUNTERS]
NOT_SUPPORTED = 3


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__("Not Supported" if value == NOT_SUPPORTED else "Unknown Error")
        self.value = value


class FakeNvml:
    """pynvml over one node's NVLink counters; what the driver answers is drawn per counter (totals, per-link field
    ids, per-link calls), and every call is counted."""

    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, gpus: int, links: List[List[bool]], counts: Dict[Tuple[int, int, int], int],
                 totals: bool, calls: Dict[str, bool], fields: Dict[str, bool]) -> None:
        self.gpus, self.links, self.counts = gpus, links, counts
        self.totals, self.calls, self.fields = totals, calls, fields
        self.called: Dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.called[name] = self.called.get(name, 0) + 1

    def _sum(self, gpu: int, counter: int) -> int:
        return sum(self.counts.get((gpu, link, counter), 0) for link, up in enumerate(self.links[gpu]) if up)

    def nvmlDeviceGetCount(self) -> int:
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetNvLinkState(self, gpu: int, link: int) -> int:
        if link >= len(self.links[gpu]):
            raise NVMLError(NOT_SUPPORTED if not self.links[gpu] else 2)
        return int(self.links[gpu][link])

    def nvmlDeviceGetNvLinkErrorCounter(self, gpu: int, link: int, counter: int) -> int:
        self._count("nvmlDeviceGetNvLinkErrorCounter")
        if not self.calls[COUNTERS[counter]]:
            raise NVMLError(NOT_SUPPORTED)
        return self.counts.get((gpu, link, counter), 0)

    def nvmlDeviceGetFieldValues(self, gpu: int, fields) -> ctypes.Array:
        self._count("nvmlDeviceGetFieldValues")
        values = (FieldValue * len(fields))()
        for value, field in zip(values, fields):
            value.nvmlReturn, value.value.ullVal = self._field(gpu, field)
        return values

    def _field(self, gpu: int, field) -> Tuple[int, int]:
        totals = {total: counter for counter, (_, _, total) in enumerate(gpu_health._NVLINK_COUNTERS)}
        if isinstance(field, int) and field in totals:
            return (0, self._sum(gpu, totals[field])) if self.totals else (NOT_SUPPORTED, 0)
        for counter, name in enumerate(COUNTERS):
            for link in range(self.NVML_NVLINK_MAX_LINKS):
                if gpu_health._link_field(name, link) == field:
                    return (0, self.counts.get((gpu, link, counter), 0)) if self.fields[name] else (NOT_SUPPORTED, 0)
        return NOT_SUPPORTED, 0

    def __getattr__(self, name: str):  # every other health read: not supported by this driver
        if not name.startswith("nvml"):
            raise AttributeError(name)

        def refuse(*args):
            raise NVMLError(NOT_SUPPORTED)
        return refuse

    def __repr__(self) -> str:
        return "FakeNvml(links=%r, counts=%r, totals=%r, calls=%r, fields=%r)" % (
            self.links, self.counts, self.totals, self.calls, self.fields)


class _Value(ctypes.Union):
    _fields_ = [("ullVal", ctypes.c_ulonglong)]


class FieldValue(ctypes.Structure):
    _fields_ = [("nvmlReturn", ctypes.c_int), ("value", _Value)]


def per_link_reference(nvml: FakeNvml, gpu: int) -> Dict[str, int]:
    """What the old loop gave: every active link's nvmlDeviceGetNvLinkErrorCounter, summed per counter."""
    totals: Dict[str, int] = {}
    for link, up in enumerate(nvml.links[gpu]):
        for counter, name in enumerate(COUNTERS):
            if up and nvml.calls[name]:
                totals[name] = totals.get(name, 0) + nvml.counts.get((gpu, link, counter), 0)
    return totals


@st.composite
def nodes(draw) -> FakeNvml:
    gpus = draw(st.integers(1, 4))
    links = [draw(st.lists(st.booleans(), max_size=18)) for _ in range(gpus)]
    counts = draw(st.dictionaries(st.tuples(st.integers(0, gpus - 1), st.integers(0, 17), st.integers(0, 3)),
                                  st.integers(0, 2 ** 40), max_size=12))
    calls = {name: draw(st.booleans()) for name in COUNTERS}
    # A driver that answers a counter by field id also answers the per-link call; totals need every counter.
    fields = {name: calls[name] and draw(st.booleans()) for name in COUNTERS}
    totals = all(calls.values()) and draw(st.booleans())
    return FakeNvml(gpus, links, counts, totals, calls, fields)


@settings(max_examples=300, deadline=None)
@given(nodes())
def test_the_counters_equal_the_per_link_calls_in_at_most_two_batched_reads(nvml):
    for gpu in range(nvml.gpus):
        nvml.called.clear()
        links = gpu_health._nvlinks(nvml, gpu, nvml.NVML_NVLINK_MAX_LINKS, {})
        assert gpu_health.nvlink_errors(nvml, gpu, links) == per_link_reference(nvml, gpu)
        assert nvml.called.get("nvmlDeviceGetFieldValues", 0) <= (2 if any(nvml.links[gpu]) else 0)
        # Per-link calls only for what no field id answers: a refused counter costs one call, not one per link.
        up = [link for link, on in enumerate(nvml.links[gpu]) if on]
        unanswered = {n: [k for k in up if not nvml.fields[n] or gpu_health._link_field(n, k) is None]
                      for n in COUNTERS}
        most = sum(len(k) if nvml.calls[n] else min(1, len(k)) for n, k in unanswered.items())
        most = 0 if nvml.totals else most
        assert nvml.called.get("nvmlDeviceGetNvLinkErrorCounter", 0) <= most


def test_an_h100_with_the_scoped_fields_makes_no_per_link_call():
    links = [[True] * 18] * 2
    nvml = FakeNvml(2, links, {(1, 17, 0): 5, (0, 3, 2): 1}, totals=False,
                    calls={"replay": True, "recovery": True, "crc_flit": True, "crc_data": False},
                    fields={"replay": True, "recovery": True, "crc_flit": True, "crc_data": False})
    health = gpu_health.node_health(nvml)
    assert [g["nvlink_errors"] for g in health["gpus"]] == [{"replay": 0, "recovery": 0, "crc_flit": 1},
                                                            {"replay": 5, "recovery": 0, "crc_flit": 0}]
    assert nvml.called["nvmlDeviceGetFieldValues"] == 4  # totals, then the links' fields, per GPU
    assert nvml.called["nvmlDeviceGetNvLinkErrorCounter"] == 2  # the data CRC, refused once per GPU


@settings(max_examples=60, deadline=None)
@given(nodes())
def test_gpus_and_pairs_read_side_by_side_equal_one_after_another(nvml):
    assert gpu_health.node_health(nvml, workers=16) == gpu_health.node_health(nvml, workers=1)
