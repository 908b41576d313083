"""The NVIDIA driver's Xid (GPU) and SXid (NVSwitch) events in the kernel log, as /dev/kmsg, dmesg or
journalctl -o short-monotonic write them."""
from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

# "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus."
# "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error"
_MONOTONIC = re.compile(r"^\[\s*(\d+\.\d+)\]")
_EVENT = re.compile(r"\b(S?Xid) \(PCI:([0-9A-Fa-f:.]+)\): (\d+)(?:,\s*(.*))?")


def xid_events(text: str) -> List[Dict[str, Any]]:
    """One entry per (kind, device, code): how often it came, the first message and when (seconds since boot)."""
    seen: Dict[Tuple[str, str, int], Dict[str, Any]] = {}
    if "Xid (PCI:" not in text:  # every event holds it: a long log without one is not searched line by line
        return []
    for line in text.splitlines():
        match = _EVENT.search(line) if "Xid (PCI:" in line else None
        if not match:
            continue
        kind, pci, code, rest = match.groups()
        key = (kind, pci.lower(), int(code))
        if key in seen:
            seen[key]["count"] += 1
            continue
        head = line.split(";", 1)[0].split(",")  # kmsg: "priority,sequence,microseconds,flags;message"
        stamp = _MONOTONIC.match(line)  # journalctl -o short-monotonic, dmesg: "[  123.456789] ..."
        when = (round(int(head[2]) / 1e6, 1) if ";" in line and len(head) > 2 and head[2].isdigit()
                else round(float(stamp.group(1)), 1) if stamp else None)
        seen[key] = {"kind": kind, "pci": pci.lower(), "code": int(code), "count": 1,
                     "text": (rest or "").strip()[:200], "seconds_after_boot": when}
    return list(seen.values())
