"""The GPUs section's lines about the node: how the GPUs are joined, their NVLinks, their health (verbose) and
check --ready's kernel run."""
from __future__ import annotations

from typing import Dict, List, Tuple

from ..model import Facts
from ..model_node import GpuHealth


def _health(g: GpuHealth) -> str:
    parts = ["persistence %s" % {True: "on", False: "off", None: "?"}[g.persistence_mode]]
    if g.ecc_enabled is not None:
        parts.append("ECC %s" % ("on, %s uncorrectable" % g.ecc_volatile_uncorrected if g.ecc_enabled else "off"))
    rows = g.remapped_rows
    if rows:
        parts.append("remapped rows %d/%d%s%s" % (rows["correctable"], rows["uncorrectable"],
                                                   ", pending" if rows["pending"] else "",
                                                   ", failed" if rows["failed"] else ""))
    link = g.pcie
    if link.get("width"):
        parts.append("PCIe gen%s x%s (max gen%s x%s)" % (link.get("gen"), link.get("width"), link.get("gen_max"),
                                                         link.get("width_max")))
    if g.clock_events:
        parts.append("clocks: %s" % ", ".join(g.clock_events))
    return "  GPU %d health: %s" % (g.index, " · ".join(parts))


def node_lines(facts: Facts, verbose: int) -> List[str]:
    node, lines = facts.node, []
    groups: Dict[Tuple[str, str], List[str]] = {}
    for p in node.pairs:
        groups.setdefault((p.link or "?", p.p2p_read or "?"), []).append("%d-%d" % tuple(p.gpus))
    if len(groups) == 1:
        (link, p2p), pairs = next(iter(groups.items()))
        lines.append("links: %s, P2P %s between %s" % (link, p2p, "both GPUs" if len(pairs) == 1 else
                                                      "all %d pairs" % len(pairs)))
    else:
        lines += ["links: %s, P2P %s: %s" % (link, p2p, " ".join(pairs)) for (link, p2p), pairs in sorted(groups.items())]
    with_links = [g for g in node.gpus if g.nvlinks]
    if with_links:
        up = {g.index: g.nvlinks - len(g.nvlinks_down) for g in with_links}
        total = {g.nvlinks for g in with_links}
        lines.append("NVLink: %s links up on every GPU" % ("%d of %d" % (min(up.values()), total.pop()))
                     if len(set(up.values())) == 1 and len(total) == 1 else
                     "NVLink up: " + ", ".join("GPU %d %d/%d" % (g.index, up[g.index], g.nvlinks) for g in with_links))
    if verbose:
        lines += [_health(g) for g in node.gpus if not g.lost]
    if node.ready is not None:
        good = [r for r in node.ready if r.ok]
        slowest = max((r.ms or 0 for r in node.ready), default=0)
        lines.append("ready: CUDA ran the test kernel on %d of %d GPUs (slowest %.0f ms)" % (
            len(good), len(node.ready), slowest))
    return lines
