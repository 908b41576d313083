"""Render a merged fleet: the terminal summary (rich tables) and the `fleet --json` document (a contract)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Dict, List

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..render.envelope import envelope
from .hostlist import compress
from .merge import COLUMNS, Fleet
from .result import REJECTED_KINDS, fleet_result

VERDICT_STYLE = {"ok": "green", "warning": "yellow", "error": "bold red"}
OUTLIER_STYLE = "bold red"


def fleet_json(fleet: Fleet, exit_code: int) -> Dict[str, Any]:
    """The `fleet --json` document: the envelope around the FleetResult."""
    return envelope("fleet", exit_code, **fleet_result(fleet).to_dict())


def render_fleet(fleet: Fleet, console: Console, verbose: int = 0, wide: bool = False) -> None:
    """The summary; `wide`: every cell on one line, the tables as wide as their content (--wide)."""
    if wide:
        console.width = max(console.width, 100000)  # rich lays a table out within this; rows carry no padding
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


def _cells_against_majority(fleet: Fleet, columns: List[str]) -> Dict[str, Dict[str, Text]]:
    """Each group's cells; a cell is marked only where its text differs from the majority's of its GPU class (a
    differing field the summary does not show is named in the cell, so the mark is never on equal text)."""
    majority = {g.gpu_class: g for g in fleet.groups if g.majority}
    out: Dict[str, Dict[str, Text]] = {}
    for g in fleet.groups:
        summary, base = g.summary, majority.get(g.gpu_class)
        cells: Dict[str, Text] = {}
        for col in columns:
            text = summary[col]
            if base is not None and base is not g and col in g.columns_differing:
                if text == base.summary[col]:
                    keys = [k for k in COLUMNS[col] if k in g.differs]
                    text += " (%s: %s)" % (", ".join(keys), "; ".join(_short(g.fields.get(k)) for k in keys))
                cells[col] = Text("* " + text, style=OUTLIER_STYLE)
            else:
                cells[col] = Text(text)
        out[g.fingerprint] = cells
    return out


def _short(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_short(v) for v in value) or "none"
    if isinstance(value, dict):
        return " ".join(str(v) for v in value.values() if v not in (None, ""))
    return "none" if value in (None, "") else str(value)


def _render_groups(fleet: Fleet, console: Console, verbose: int) -> None:
    console.print()
    table = Table(title="Configuration groups (* differs from the majority of its GPU class)",
                  title_justify="left", title_style="bold")
    # Kernel and fingerprint columns only where they help: -v, or a group whose kernel differs.
    columns = ["driver", "gpu", "cuda", "cudnn", "frameworks"]
    if verbose or any("kernel" in g.columns_differing for g in fleet.groups):
        columns.append("kernel")
    # Cells wrap between words only: a host list, version or path is never cut in two.
    table.add_column("Nodes", overflow="ellipsis")
    for col in columns:
        table.add_column({"gpu": "GPU", "cuda": "CUDA", "cudnn": "cuDNN"}.get(col, col.capitalize()),
                         overflow="ellipsis")
    if verbose:
        table.add_column("Fingerprint", no_wrap=True)
    cells = _cells_against_majority(fleet, columns)
    for g in fleet.groups:
        hosts = compress(g.hosts)
        row = [Text("%d %s" % (len(g.hosts), hosts if verbose or len(hosts) <= 40 else hosts[:37] + "..."))]
        row += [cells[g.fingerprint][col] for col in columns]
        if verbose:
            row.append(Text(g.fingerprint))
        table.add_row(*row)
    console.print(table)


def _render_findings(fleet: Fleet, console: Console) -> None:
    console.print()
    table = Table(title="Findings across the fleet (fixes in full below)", title_justify="left", title_style="bold")
    for col in ("ID", "Severity", "Nodes", "Hosts", "Example"):
        table.add_column(col, overflow="ellipsis")
    for f in fleet.findings:
        table.add_row(f.id, Text(f.severity, style=VERDICT_STYLE.get(f.severity, "")), str(len(f.hosts)),
                      compress(f.hosts), Text(f.title))
    console.print(table)
    # Commands and URLs are printed whole, one line each (the terminal may fold them, but copying gets them
    # intact); Text: a fix's `[gpu]` is not markup.
    console.print(Text("Fixes", style="bold"))
    for f in fleet.findings:
        if f.fix:
            console.print(Text("  %s: %s" % (f.id, f.fix)), soft_wrap=True)


def utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
