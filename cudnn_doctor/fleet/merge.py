"""Merge node reports: newest per host, stale ones apart, verdict counts, configuration groups and their outliers."""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .load import Catalogue, NodeReport, Rejected

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}
# Table columns and the fingerprint fields shown in each (docs/fleet.md: the fields of the fingerprint).
COLUMNS: Dict[str, Tuple[str, ...]] = {
    "driver": ("driver", "driver_cuda", "kernel_module"),
    "gpu": ("gpus",),
    "cuda": ("toolkits",),
    "cudnn": ("cudnn", "loads_cudnn"),
    "frameworks": ("frameworks",),
    "kernel": ("kernel", "arch"),
}


@dataclass
class Group:
    """Nodes sharing one configuration fingerprint."""

    fingerprint: str
    hosts: List[str]
    fields: Dict[str, Any]
    gpu_class: str
    majority: bool = False
    differs: List[str] = field(default_factory=list)  # fingerprint fields unlike the majority of the GPU class

    @property
    def summary(self) -> Dict[str, str]:
        return summarise(self.fields)

    @property
    def columns_differing(self) -> List[str]:
        return [col for col, keys in COLUMNS.items() if any(k in self.differs for k in keys)]


@dataclass
class FleetFinding:
    id: str
    severity: str
    hosts: List[str]
    title: str
    fix: str


@dataclass
class Fleet:
    nodes: List[NodeReport]
    rejected: List[Rejected]
    duplicated: List[Tuple[NodeReport, NodeReport]]  # (dropped, kept)
    stale: List[NodeReport]
    groups: List[Group]
    findings: List[FleetFinding]
    max_age_s: Optional[float] = None
    now: float = 0.0

    @property
    def hosts_by_verdict(self) -> Dict[str, List[str]]:
        out: Dict[str, List[str]] = {"ok": [], "warning": [], "error": []}
        for n in self.nodes:
            out.setdefault(n.verdict, []).append(n.host)
        return out

    @property
    def tool_versions(self) -> Dict[str, int]:
        return dict(Counter(n.tool_version for n in self.nodes))


def merge(nodes: List[NodeReport], rejected: List[Rejected], catalogue: Catalogue,
          max_age_s: Optional[float] = None, now: Optional[float] = None) -> Fleet:
    now = time.time() if now is None else now
    newest: Dict[str, NodeReport] = {}
    duplicated: List[Tuple[NodeReport, NodeReport]] = []
    for node in nodes:
        kept = newest.get(node.host)
        if kept is None:
            newest[node.host] = node
            continue
        old, new = (kept, node) if (node.started_ts, node.source) > (kept.started_ts, kept.source) else (node, kept)
        newest[node.host] = new
        duplicated.append((old, new))
    stale: List[NodeReport] = []
    fresh: List[NodeReport] = []
    for node in newest.values():
        (stale if max_age_s is not None and now - node.started_ts > max_age_s else fresh).append(node)
    fresh.sort(key=lambda n: n.host)
    return Fleet(nodes=fresh, rejected=rejected, duplicated=duplicated, stale=sorted(stale, key=lambda n: n.host),
                 groups=_groups(fresh, catalogue), findings=_findings(fresh, catalogue), max_age_s=max_age_s, now=now)


def gpu_class(fields: Dict[str, Any]) -> str:
    """The GPU model(s) regardless of count: a node missing one GPU is an outlier of its class, not a new class."""
    names = sorted({str(g.get("name")) for g in fields.get("gpus") or [] if isinstance(g, dict)})
    return " + ".join(names) if names else "no GPU"


def _groups(nodes: List[NodeReport], catalogue: Catalogue) -> List[Group]:
    hosts: Dict[str, List[str]] = defaultdict(list)
    for n in nodes:
        hosts[n.fingerprint].append(n.host)
    groups = [Group(fp, h, catalogue.fields.get(fp, {}), gpu_class(catalogue.fields.get(fp, {})))
              for fp, h in hosts.items()]
    by_class: Dict[str, List[Group]] = defaultdict(list)
    for g in groups:
        by_class[g.gpu_class].append(g)
    for members in by_class.values():
        members.sort(key=lambda g: (-len(g.hosts), g.fingerprint))
        majority = members[0]
        majority.majority = True
        for g in members[1:]:
            keys = sorted(set(g.fields) | set(majority.fields))
            g.differs = [k for k in keys if g.fields.get(k) != majority.fields.get(k)]
    groups.sort(key=lambda g: (g.gpu_class, not g.majority, -len(g.hosts), g.fingerprint))
    return groups


def _findings(nodes: List[NodeReport], catalogue: Catalogue) -> List[FleetFinding]:
    hosts: Dict[str, List[str]] = defaultdict(list)
    worst: Dict[str, str] = {}
    for n in nodes:
        for fid, sev in dict.fromkeys(n.findings):  # one finding id counts a node once
            if not hosts[fid] or hosts[fid][-1] != n.host:
                hosts[fid].append(n.host)
            if SEVERITY_RANK.get(sev, 0) >= SEVERITY_RANK.get(worst.get(fid, "info"), 0):
                worst[fid] = sev
    out = [FleetFinding(fid, worst[fid], h, catalogue.examples.get(fid, {}).get("title", ""),
                        catalogue.examples.get(fid, {}).get("fix", "")) for fid, h in hosts.items()]
    out.sort(key=lambda f: (-SEVERITY_RANK.get(f.severity, 0), -len(f.hosts), f.id))
    return out


def summarise(fields: Dict[str, Any]) -> Dict[str, str]:
    """One short cell per table column."""
    def items(key: str) -> List[Dict[str, Any]]:
        return [x for x in fields.get(key) or [] if isinstance(x, dict)]

    driver = fields.get("driver") or "none"
    module = fields.get("kernel_module")
    if module and module != driver:
        driver += " (module %s)" % module
    gpus = ", ".join("%sx %s (%s)%s" % (g.get("count"), g.get("name"), g.get("compute_capability"),
                                        " MIG" if g.get("mig") else "") for g in items("gpus")) or "none"
    cuda = ", ".join(str(t.get("version")) for t in items("toolkits")) or "none"
    cudnn = ", ".join("%s (%s, CUDA %s)" % (c.get("version"), c.get("origin"), c.get("cuda"))
                      for c in items("cudnn")) or "none"
    frameworks = ", ".join("%s %s" % (f.get("name"), f.get("version")) for f in items("frameworks")) or "none"
    # A report made under --root has no running kernel of its own: say so rather than "? x86_64".
    kernel = fields.get("kernel") or "not recorded"
    if fields.get("arch"):
        kernel += " (%s)" % fields["arch"]
    return {"driver": driver, "gpu": gpus, "cuda": cuda, "cudnn": cudnn, "frameworks": frameworks,
            "kernel": kernel}
