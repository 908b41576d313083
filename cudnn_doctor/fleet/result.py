"""A merged fleet as a FleetResult: node counts by verdict, rejected and stale reports, groups, findings."""
from __future__ import annotations

from typing import Any, Dict, List

from ..run_results import FleetResult
from .hostlist import compress
from .merge import Fleet

REJECTED_KINDS = ("unreadable", "truncated", "other-schema", "old-tool", "not-a-report")


def fleet_result(fleet: Fleet) -> FleetResult:
    """What the merge found, as the typed result `fleet --json` writes."""
    by_verdict = fleet.hosts_by_verdict
    rejected: Dict[str, List[Dict[str, Any]]] = {k: [] for k in REJECTED_KINDS}
    for r in fleet.rejected:
        rejected.setdefault(r.kind, []).append({"source": r.source, "reason": r.reason, "host": r.host})
    return FleetResult(
        nodes=len(fleet.nodes),
        verdicts={v: len(by_verdict.get(v, [])) for v in ("ok", "warning", "error")},
        hosts_by_verdict={v: compress(by_verdict.get(v, [])) for v in ("ok", "warning", "error")},
        reports={
            "used": len(fleet.nodes),
            "rejected": rejected,
            "duplicated": [{"host": old.host, "source": old.source, "started_at": old.started_at,
                            "kept": new.source} for old, new in fleet.duplicated],
            "stale": [{"host": n.host, "source": n.source, "started_at": n.started_at,
                       "age_s": round(fleet.now - n.started_ts, 1)} for n in fleet.stale],
            "max_age_s": fleet.max_age_s,
        },
        tool_versions=fleet.tool_versions,
        groups=[{"fingerprint": g.fingerprint, "count": len(g.hosts), "hosts": compress(g.hosts),
                 "gpu_class": g.gpu_class, "majority": g.majority, "differs": g.differs,
                 "summary": g.summary, "fields": g.fields} for g in fleet.groups],
        findings=[{"id": f.id, "severity": f.severity, "count": len(f.hosts), "hosts": compress(f.hosts),
                   "title": f.title, "fix": f.fix} for f in fleet.findings],
    )
