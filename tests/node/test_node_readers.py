"""The pure readers behind the node checks: ACS control bits from PCI config space, Xid/SXid events from the
kernel log, drawn at random; and the live kernel log is read without blocking."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, settings, strategies as st

from cudnn_doctor.host import Host
from cudnn_doctor.probes.node import read_kmsg
from cudnn_doctor.readers.kernel_log import xid_events
from cudnn_doctor.readers.pci_config import acs_control

NAMES = ["SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans"]


def config_space(caps, control: int) -> bytes:
    """4096 bytes whose extended capability chain holds ``caps`` (ids) in order, ACS (0x0D) among them or not."""
    space = bytearray(4096)
    offsets = [0x100 + 0x40 * i for i in range(len(caps))]
    for i, (cap, offset) in enumerate(zip(caps, offsets)):
        following = offsets[i + 1] if i + 1 < len(offsets) else 0
        space[offset:offset + 4] = (cap | (1 << 16) | (following << 20)).to_bytes(4, "little")
        if cap == 0x0D:
            space[offset + 6:offset + 8] = control.to_bytes(2, "little")
    return bytes(space)


@given(st.lists(st.sampled_from([0x01, 0x02, 0x0B, 0x10, 0x19, 0x1E]), max_size=6), st.integers(0, 0x7F),
       st.integers(0, 6))
@settings(max_examples=200, deadline=None)
def test_acs_controls_are_found_wherever_acs_sits_in_the_chain(others, control, at):
    caps = others[:at] + [0x0D] + others[at:]
    assert acs_control(config_space(caps, control)) == [n for bit, n in enumerate(NAMES) if control & (1 << bit)]


@given(st.lists(st.sampled_from([0x01, 0x02, 0x0B, 0x10]), max_size=6))
def test_a_function_without_acs_or_with_a_short_space_has_none(caps):
    assert acs_control(config_space(caps, 0x7F)) is None
    assert acs_control(config_space([0x0D], 0x7F)[:64]) is None  # a user's read of sysfs config


@given(st.lists(st.tuples(st.sampled_from(["Xid", "SXid"]), st.integers(1, 200), st.integers(0, 255)), max_size=20))
def test_each_event_is_counted_once_per_device_and_code(events):
    text = "".join("4,%d,%d,-;%s%s (PCI:0000:%02x:00): %d, pid=1, some text\n" % (
        n, 1000 * n, "NVRM: " if kind == "Xid" else "nvidia-nvswitch0: ", kind, bus, code)
        for n, (kind, code, bus) in enumerate(events))
    found = xid_events(text + "6,999,1,-;unrelated line\n")
    expected = {}
    for kind, code, bus in events:
        key = (kind, "0000:%02x:00" % bus, code)
        expected[key] = expected.get(key, 0) + 1
    assert {(e["kind"], e["pci"], e["code"]): e["count"] for e in found} == expected


@pytest.mark.live
def test_the_live_kernel_log_is_read_without_blocking():
    started = time.monotonic()
    text = read_kmsg(Host())
    assert time.monotonic() - started < 2.0
    assert text is None or isinstance(text, str)
