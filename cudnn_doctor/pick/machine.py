"""The machine a pick is for: its driver and GPUs, from this machine's facts or a node's saved `check --json`."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..knowledge import Compat
from ..knowledge.wheel_index import Node
from ..model import Facts
from ..versions import mm_text, ver, version_key


HOME_KIND = "system"  # ToolkitFacts.kind of a CUDA toolkit installed as one (not a pip wheel folder, not conda)


class BadReport(ValueError):
    """A --against file that is not a `check --json` report."""


@dataclass
class Gpu:
    name: str
    cc: Optional[str]  # "8.9"; None where neither the driver nor the knowledge tells


@dataclass
class Machine:
    label: str  # "this machine" or the report's host and path
    driver: Optional[str]
    driver_cuda: Optional[str]  # the CUDA the driver reports (nvidia-smi's "CUDA Version")
    gpus: List[Gpu] = field(default_factory=list)
    toolkits: List[Tuple[str, str]] = field(default_factory=list)  # (CUDA release, path) found, newest first
    platform: str = "linux"
    remote: bool = False  # answered from a report: a conda solve here must be told the node's CUDA
    # The toolkits `cudnn-doctor install --cuda-home` can put cuDNN into, newest first: system installs only (pip's
    # nvidia/cuNN wheel folder and a conda environment are no CUDA toolkit home; their own channel installs cuDNN).
    homes: List[Tuple[str, str]] = field(default_factory=list)
    # The Python, processor and glibc the install will be for (empty fields: the report did not say; not judged).
    node: Node = field(default_factory=Node)
    python_source: str = ""  # where the node's Python was read (a pyvenv.cfg, a site folder)


def gpu_cc(compat: Compat, name: str, reported: Optional[str]) -> Optional[str]:
    """A GPU's compute capability: what the driver reported, else the knowledge's GPU list by name (the one place
    a name becomes a capability)."""
    if reported:
        return mm_text(reported) or reported
    by_name = getattr(compat, "gpu_by_name", None)  # the GPU-name table, where the knowledge has it
    if by_name is not None:
        found = by_name(name)
        if found is not None:
            return str(found.cc)
    return compat.cc_for_gpu(name)


def _newest_first(toolkits: Iterable[Tuple[Any, Any]]) -> List[Tuple[str, str]]:
    known = {(str(v), str(p or "")) for v, p in toolkits if v and ver(str(v)) is not None}
    return sorted(known, key=lambda t: version_key(t[0]), reverse=True)


def from_facts(facts: Facts, compat: Compat, label: str = "this machine") -> Machine:
    from .node import node_of

    gpus = [Gpu(g.name or "GPU %s" % g.index, gpu_cc(compat, g.name or "", g.compute_capability))
            for g in facts.gpus]
    node, source = node_of({"pythons": facts.python.pythons,
                            "frameworks": [{"location": f.location} for f in facts.python.frameworks]},
                           {"machine": facts.host.machine, "glibc": facts.host.glibc}, facts.host.platform or "linux")
    return Machine(label, facts.driver.version, facts.driver.cuda_version, gpus,
                   _newest_first((t.version, t.path) for t in facts.toolkits), facts.host.platform or "linux",
                   homes=_newest_first((t.version, t.path) for t in facts.toolkits if t.kind == HOME_KIND),
                   node=node, python_source=source)


def from_report(text: str, path: str, compat: Compat) -> Machine:
    """A node's machine from its `check --json` report (the facts part only)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise BadReport("%s is not JSON (%s): save it with `cudnn-doctor check --json > NODE.json`" % (path, exc))
    facts = doc.get("facts") if isinstance(doc, dict) else None
    if not isinstance(facts, dict) or doc.get("command") != "check":
        raise BadReport("%s is not a `cudnn-doctor check --json` report" % path)
    driver: Dict[str, Any] = facts.get("driver") or {}
    gpus = [Gpu(str(g.get("name") or "GPU %s" % g.get("index")), gpu_cc(compat, str(g.get("name") or ""),
                                                                        g.get("compute_capability")))
            for g in facts.get("gpus") or [] if isinstance(g, dict)]
    name = doc.get("host") if isinstance(doc.get("host"), str) else None
    toolkits = [t for t in facts.get("toolkits") or [] if isinstance(t, dict)]
    host: Dict[str, Any] = facts["host"] if isinstance(facts.get("host"), dict) else {}
    platform = str(host.get("platform") or "linux")
    from .node import node_of

    python: Dict[str, Any] = facts["python"] if isinstance(facts.get("python"), dict) else {}
    node, source = node_of(python, host, platform)
    return Machine("%s (%s)" % (name, path) if name else path, driver.get("version"), driver.get("cuda_version"),
                   gpus, _newest_first((t.get("version"), t.get("path")) for t in toolkits), platform, remote=True,
                   homes=_newest_first((t.get("version"), t.get("path")) for t in toolkits
                                       if t.get("kind", HOME_KIND) == HOME_KIND), node=node, python_source=source)
