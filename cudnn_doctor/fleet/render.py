"""Render a merged fleet: the terminal summary (rich tables) and the `fleet --json` document (a contract)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..render.envelope import envelope
from .hostlist import compress
from .merge import Fleet
from .result import REJECTED_KINDS, fleet_result

VERDICT_STYLE = {"ok": "green", "warning": "yellow", "error": "bold red"}
OUTLIER_STYLE = "bold red"


def fleet_json(fleet: Fleet, exit_code: int) -> Dict[str, Any]:
    """The `fleet --json` document: the envelope around the FleetResult."""
    return envelope("fleet", exit_code, **fleet_result(fleet).to_dict())


def render_fleet(fleet: Fleet, console: Console, verbose: int = 0) -> None:
    by_verdict = fleet.hosts_by_verdict
    head = Text("%d node%s: " % (len(fleet.nodes), "" if len(fleet.nodes) == 1 else "s"), style="bold")
    for i, v in enumerate(("ok", "warning", "error")):
        head.append("%s%d %s" % (", " if i else "", len(by_verdict.get(v, [])), v), style=VERDICT_STYLE[v])
    console.print(head)
    for v in ("error", "warning"):
        if by_verdict.get(v):
            console.print(Text("  %s: %s" % (v, compress(by_verdict[v])), style=VERDICT_STYLE[v]))
    _render_report_problems(fleet, console)
    if fleet.groups:
        _render_groups(fleet, console, verbose)
    if fleet.findings:
        _render_findings(fleet, console)


def _render_report_problems(fleet: Fleet, console: Console) -> None:
    lines: List[str] = []
    for kind in REJECTED_KINDS:
        items = [r for r in fleet.rejected if r.kind == kind]
        if items:
            lines.append("%d %s: %s" % (len(items), kind, "; ".join("%s (%s)" % (r.source, r.reason)
                                                                    for r in items[:5])
                                        + ("; ..." if len(items) > 5 else "")))
    if fleet.duplicated:
        lines.append("%d duplicated (the newest report of a host wins): %s" % (
            len(fleet.duplicated), compress({old.host for old, _ in fleet.duplicated})))
    if fleet.stale:
        lines.append("%d stale (older than --max-age, left out): %s" % (
            len(fleet.stale), compress(n.host for n in fleet.stale)))
    if lines:
        console.print()
        console.print(Text("Reports", style="bold"))
        for line in lines:
            console.print("  " + line, markup=False, highlight=False)


def _render_groups(fleet: Fleet, console: Console, verbose: int) -> None:
    console.print()
    table = Table(title="Configuration groups (* differs from the majority of its GPU class)",
                  title_justify="left", title_style="bold")
    # Kernel and fingerprint columns only where they help: -v, or a group whose kernel differs.
    columns = ["driver", "gpu", "cuda", "cudnn", "frameworks"]
    if verbose or any("kernel" in g.columns_differing for g in fleet.groups):
        columns.append("kernel")
    table.add_column("Nodes", overflow="fold")
    for col in columns:
        table.add_column({"gpu": "GPU", "cuda": "CUDA", "cudnn": "cuDNN"}.get(col, col.capitalize()), overflow="fold")
    if verbose:
        table.add_column("Fingerprint", no_wrap=True)
    for g in fleet.groups:
        summary = g.summary
        outliers = set(g.columns_differing)
        hosts = compress(g.hosts)
        cells = [Text("%d %s" % (len(g.hosts), hosts if verbose or len(hosts) <= 40 else hosts[:37] + "..."))]
        cells += [Text("* " + summary[col], style=OUTLIER_STYLE) if col in outliers else Text(summary[col])
                  for col in columns]
        if verbose:
            cells.append(Text(g.fingerprint))
        table.add_row(*cells)
    console.print(table)


def _render_findings(fleet: Fleet, console: Console) -> None:
    console.print()
    table = Table(title="Findings across the fleet", title_justify="left", title_style="bold")
    for col in ("ID", "Severity", "Nodes", "Hosts", "Example", "Fix"):
        table.add_column(col, overflow="fold")
    for f in fleet.findings:
        table.add_row(f.id, Text(f.severity, style=VERDICT_STYLE.get(f.severity, "")), str(len(f.hosts)),
                      compress(f.hosts), Text(f.title), Text(f.fix))  # Text: a fix's `[gpu]` is not markup
    console.print(table)


def utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
