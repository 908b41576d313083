"""PCI Express configuration space (sysfs ``config``): the Access Control Services controls of a bridge."""
from __future__ import annotations

from typing import List, Optional

_ACS_ID = 0x000D  # PCIe extended capability id of Access Control Services (PCIe base specification)
# The ACS control register's bits, by the names lspci prints after "ACSCtl:".
_ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")


def acs_control(config: bytes) -> Optional[List[str]]:
    """The ACS controls that are on, from a function's configuration space; None when the space is too short to
    hold extended capabilities (a user reads 64 bytes; root reads 4096) or the function has no ACS."""
    if len(config) < 0x104:
        return None
    offset, hops = 0x100, 0
    while offset and offset + 8 <= len(config) and hops < 64:
        header = int.from_bytes(config[offset:offset + 4], "little")
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == _ACS_ID:
            control = int.from_bytes(config[offset + 6:offset + 8], "little")
            return [name for bit, name in enumerate(_ACS_BITS) if control & (1 << bit)]
        offset, hops = (header >> 20) & 0xFFC, hops + 1
    return None
