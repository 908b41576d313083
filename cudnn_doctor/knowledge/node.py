"""The node's health knowledge (compat/node_health.toml): what an Xid asks of an operator, which clock events are
faults."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from .tables import Domain


class NodeKnowledge(Domain):
    def xid(self, code: int) -> Optional[Dict[str, Any]]:
        """The catalogue's row for an Xid code (name, action, source), None for a code the table does not hold."""
        return next((r for r in self.sourced_rows("node_health", "xid") if r.get("code") == code), None)

    def xid_source(self) -> str:
        return str(self.table("node_health", "xid").get("source", ""))

    def sxid_fatal_word(self) -> str:
        return str(self.table("node_health", "sxid").get("fatal_word", "Fatal"))

    def clock_event_faults(self) -> List[str]:
        """NVML clock event reasons that mean a fault of the node (heat, power delivery, hardware slowdown)."""
        return list(self.table("node_health", "clock_events").get("faults", []))

    def clock_events_source(self) -> str:
        return str(self.table("node_health", "clock_events").get("source", ""))
