"""The NVLink error counters are nvidia-smi nvlink -e's three (replay, recovery, CRC), read in one field-values call
per GPU where the driver answers the per-link DL fields, summed over the active links as the per-link calls give
them, whatever the driver supports; without --ready they are not read at all."""
from __future__ import annotations

import ctypes
from typing import Dict, List, Tuple

from hypothesis import given, settings, strategies as st

from cudnn_doctor.native import gpu_health

COUNTERS = [name for name, _, _ in gpu_health._NVLINK_COUNTERS]
FIELDS = {field: counter for counter, (_, field, _) in enumerate(gpu_health._NVLINK_COUNTERS)}
NOT_SUPPORTED = 3


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__("Not Supported" if value == NOT_SUPPORTED else "Unknown Error")
        self.value = value


class FakeNvml:
    """pynvml over one node's NVLink counters; what the driver answers is drawn per counter (per-link field ids,
    per-link calls), and every call is counted."""

    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, gpus: int, links: List[List[bool]], counts: Dict[Tuple[int, int, int], int],
                 calls: Dict[str, bool], fields: Dict[str, bool]) -> None:
        self.gpus, self.links, self.counts = gpus, links, counts
        self.calls, self.fields = calls, fields
        self.called: Dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.called[name] = self.called.get(name, 0) + 1

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
        if isinstance(field, tuple) and field[0] in FIELDS and self.fields[COUNTERS[FIELDS[field[0]]]]:
            return 0, self.counts.get((gpu, field[1], FIELDS[field[0]]), 0)
        return NOT_SUPPORTED, 0

    def __getattr__(self, name: str):  # every other health read: not supported by this driver
        if not name.startswith("nvml"):
            raise AttributeError(name)

        def refuse(*args):
            raise NVMLError(NOT_SUPPORTED)
        return refuse

    def __repr__(self) -> str:
        return "FakeNvml(links=%r, counts=%r, calls=%r, fields=%r)" % (self.links, self.counts, self.calls, self.fields)


class _Value(ctypes.Union):
    _fields_ = [("ullVal", ctypes.c_ulonglong)]


class FieldValue(ctypes.Structure):
    _fields_ = [("nvmlReturn", ctypes.c_int), ("value", _Value)]


def per_link_reference(nvml: FakeNvml, gpu: int) -> Dict[str, int]:
    """Every active link's count of each counter the driver answers (by field or by call), summed per counter."""
    totals: Dict[str, int] = {}
    for link, up in enumerate(nvml.links[gpu]):
        for counter, name in enumerate(COUNTERS):
            if up and (nvml.calls[name] or nvml.fields[name]):
                totals[name] = totals.get(name, 0) + nvml.counts.get((gpu, link, counter), 0)
    return totals


@st.composite
def nodes(draw) -> FakeNvml:
    gpus = draw(st.integers(1, 4))
    links = [draw(st.lists(st.booleans(), max_size=18)) for _ in range(gpus)]
    counts = draw(st.dictionaries(st.tuples(st.integers(0, gpus - 1), st.integers(0, 17), st.integers(0, 2)),
                                  st.integers(0, 2 ** 40), max_size=12))
    calls = {name: draw(st.booleans()) for name in COUNTERS}
    fields = {name: draw(st.booleans()) for name in COUNTERS}
    return FakeNvml(gpus, links, counts, calls, fields)


@settings(max_examples=300, deadline=None)
@given(nodes())
def test_the_counters_equal_the_per_link_calls_in_one_batched_read(nvml):
    for gpu in range(nvml.gpus):
        nvml.called.clear()
        links = gpu_health._nvlinks(nvml, gpu, nvml.NVML_NVLINK_MAX_LINKS, {})
        assert gpu_health.nvlink_errors(nvml, gpu, links) == per_link_reference(nvml, gpu)
        up = [link for link, on in enumerate(nvml.links[gpu]) if on]
        assert nvml.called.get("nvmlDeviceGetFieldValues", 0) == (1 if up else 0)
        # Per-link calls only for a counter no field answers; a refused counter costs one call, not one per link.
        most = sum(len(up) if nvml.calls[n] else min(1, len(up)) for n in COUNTERS if not nvml.fields[n])
        assert nvml.called.get("nvmlDeviceGetNvLinkErrorCounter", 0) <= most


def test_an_h100_reads_nvidia_smis_three_counters_in_one_call_per_gpu():
    # The lent H100 answers the DL fields on every link; its per-link data CRC counter (3) counts where nvidia-smi
    # nvlink -e shows 0, and is never asked.
    links = [[True] * 18] * 2
    nvml = FakeNvml(2, links, {(1, 17, 0): 5, (0, 3, 2): 1}, calls=dict.fromkeys(COUNTERS, True),
                    fields=dict.fromkeys(COUNTERS, True))
    health = gpu_health.node_health(nvml, counters=True)
    assert [g["nvlink_errors"] for g in health["gpus"]] == [{"replay": 0, "recovery": 0, "crc": 1},
                                                            {"replay": 5, "recovery": 0, "crc": 0}]
    assert nvml.called == {"nvmlDeviceGetFieldValues": 2}


@settings(max_examples=60, deadline=None)
@given(nodes())
def test_without_ready_no_counter_is_read(nvml):
    health = gpu_health.node_health(nvml)
    assert all("nvlink_errors" not in g for g in health["gpus"]) and not nvml.called
