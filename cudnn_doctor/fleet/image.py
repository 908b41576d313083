"""`fleet SOURCES --image REF`: one image judged on every node of a merged fleet, by the nodes' driver and GPUs.

Nodes that share a driver, driver CUDA and GPU models get the same answer, so each such node class is judged once
(the rules are pure): ten thousand nodes are a handful of judgements."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import diagnose
from ..image.node import node_from_fields
from ..model import Facts, Finding, Severity
from .hostlist import compress
from .load import Catalogue
from .merge import Fleet
from .render import fleet_json

VERDICTS = ("runs", "warnings", "fails", "refused")  # best to worst
VERDICT_STYLE = {"runs": "green", "warnings": "yellow", "fails": "bold red", "refused": "bold red"}
REFUSAL = "CD811"


@dataclass
class NodeClass:
    """Nodes the image meets the same way: one driver, driver CUDA and set of GPU models."""

    key: str
    fields: Dict[str, Any]
    hosts: List[str] = field(default_factory=list)
    verdict: str = "runs"
    condition: str = ""  # the runtime's refusal, or the first error/warning title (the node's own first)
    findings: List[Finding] = field(default_factory=list)  # errors and warnings the image alone does not have


@dataclass
class ImageFleet:
    classes: List[NodeClass]
    image_findings: List[Finding]  # the image's own errors and warnings: the same on every node


def _node_key(fields: Dict[str, Any]) -> str:
    return json.dumps([fields.get("driver"), fields.get("driver_cuda"), fields.get("kernel_module"),
                       fields.get("gpus")], sort_keys=True, default=str)


def _problems(findings: List[Finding]) -> List[Finding]:
    return [f for f in findings if f.severity != Severity.INFO]


def verdict_of(findings: List[Finding]) -> Tuple[str, str]:
    """(verdict, condition): refused by the runtime, starts but fails, runs with warnings, or runs; the first
    finding of the worst kind names the condition (callers put the node's own findings first)."""
    for f in findings:
        if f.id == REFUSAL and f.severity == Severity.ERROR:
            return "refused", f.title
    errors = [f for f in findings if f.severity == Severity.ERROR]
    if errors:
        return "fails", errors[0].title
    warnings = [f for f in findings if f.severity == Severity.WARNING]
    if warnings:
        return "warnings", warnings[0].title
    return "runs", ""


def judge_fleet(fleet: Fleet, catalogue: Catalogue, image_facts: Facts) -> ImageFleet:
    classes: Dict[str, NodeClass] = {}
    for node in fleet.nodes:
        fields = catalogue.fields.get(node.fingerprint, {})
        key = _node_key(fields)
        cls = classes.get(key)
        if cls is None:
            cls = classes[key] = NodeClass(key, fields)
        cls.hosts.append(node.host)
    own = _problems(diagnose.image_report(image_facts).findings)
    seen = {(f.id, f.title) for f in own}
    for cls in classes.values():
        view = node_from_fields(compress(cls.hosts), cls.fields)  # findings name the class's hosts
        found = _problems(diagnose.image_report(image_facts, view).findings)
        cls.findings = [f for f in found if (f.id, f.title) not in seen]
        cls.verdict, cls.condition = verdict_of(cls.findings + [f for f in found if (f.id, f.title) in seen])
    ordered = sorted(classes.values(), key=lambda c: (-VERDICTS.index(c.verdict), -len(c.hosts), c.key))
    return ImageFleet(ordered, own)


def collapsed(findings: List[Finding]) -> List[Tuple[Finding, int]]:
    """One line per check id (per-GPU repeats folded): (first finding, how many more like it)."""
    out: Dict[str, List[Finding]] = {}
    for f in findings:
        out.setdefault(f.id, []).append(f)
    return [(group[0], len(group) - 1) for group in out.values()]


def hosts_by_verdict(classes: List[NodeClass]) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {v: [] for v in VERDICTS}
    for cls in classes:
        out[cls.verdict] += cls.hosts
    return out


def _finding_json(f: Finding) -> Dict[str, Any]:
    return {"id": f.id, "severity": f.severity.value, "title": f.title, "fix": f.fix}


def image_fleet_json(fleet: Fleet, judged: ImageFleet, image_facts: Facts, exit_code: int) -> Dict[str, Any]:
    """`fleet --json` (same envelope, groups, findings and reports, so its readers keep working) plus the image's
    answer per node: image_verdicts, hosts_by_image_verdict, image_findings and node_classes."""
    classes = judged.classes
    by_verdict = hosts_by_verdict(classes)
    doc = fleet_json(fleet, exit_code)
    img = image_facts.image
    doc.update(
        image={"reference": img.reference, "digest": img.digest, "requirements": img.requirements,
               "disable_require": img.disable_require, "layers": len(img.layers),
               "compat_libcuda": img.compat_libcuda} if img else None,
        image_verdicts={v: len(by_verdict[v]) for v in VERDICTS},
        hosts_by_image_verdict={v: compress(by_verdict[v]) for v in VERDICTS},
        image_findings=[_finding_json(f) for f in judged.image_findings],
        node_classes=[{"verdict": c.verdict, "condition": c.condition, "count": len(c.hosts),
                       "hosts": compress(c.hosts), "driver": c.fields.get("driver"),
                       "driver_cuda": c.fields.get("driver_cuda"), "gpus": c.fields.get("gpus") or [],
                       "findings": [_finding_json(f) for f in c.findings]} for c in classes],
    )
    return doc


def _say(console: Console, f: Finding, more: int, indent: str) -> None:
    mark = {Severity.ERROR: "✗", Severity.WARNING: "!"}.get(f.severity, "·")
    style = "bold red" if f.severity == Severity.ERROR else "yellow"
    console.print(Text("%s%s %s  %s%s" % (indent, mark, f.id, f.title, " (and %d more like it)" % more if more else ""),
                       style=style))
    if f.fix:
        console.print(Text("%s    Fix: %s" % (indent, f.fix)))


def render_image_fleet(fleet: Fleet, judged: ImageFleet, image_facts: Facts, console: Console) -> None:
    classes = judged.classes
    by_verdict = hosts_by_verdict(classes)
    img = image_facts.image
    head = Text("%s on %d node%s: " % (img.reference if img else "image", len(fleet.nodes),
                                       "" if len(fleet.nodes) == 1 else "s"), style="bold")
    for i, v in enumerate(VERDICTS):
        head.append("%s%d %s" % (", " if i else "", len(by_verdict[v]), v), style=VERDICT_STYLE[v])
    console.print(head)
    table = Table(title="Node classes (same driver and GPUs)", title_justify="left", title_style="bold")
    for col in ("Verdict", "Nodes", "Driver (CUDA)", "GPUs", "Why"):
        table.add_column(col, overflow="fold")
    for c in classes:
        gpus = ", ".join("%sx %s (%s)" % (g.get("count"), g.get("name"), g.get("compute_capability"))
                         for g in c.fields.get("gpus") or [] if isinstance(g, dict)) or "none"
        table.add_row(Text(c.verdict, style=VERDICT_STYLE[c.verdict]),
                      Text("%d %s" % (len(c.hosts), compress(c.hosts))),
                      Text("%s (%s)" % (c.fields.get("driver") or "none", c.fields.get("driver_cuda") or "?")),
                      Text(gpus), Text(c.condition))
    console.print(table)
    if judged.image_findings:
        console.print()
        console.print(Text("The image itself (on every node)", style="bold"))
        for f, more in collapsed(judged.image_findings):
            _say(console, f, more, "  ")
    for c in classes:
        if c.findings:
            console.print()
            console.print(Text("%s (%s)" % (compress(c.hosts), c.verdict), style="bold"))
            for f, more in collapsed(c.findings):
                _say(console, f, more, "  ")
