"""A node as an image is judged against it: its driver and GPUs, from a saved `check --json` report (its facts) or
from the fingerprint fields a fleet merge keeps."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from ..model import DriverFacts, Facts, GpuFacts
from .errors import ImageError


@dataclass
class NodeView:
    host: str
    driver: DriverFacts
    gpus: List[GpuFacts] = field(default_factory=list)
    source: Optional[str] = None


def node_from_fields(host: str, fields: Dict[str, Any], source: Optional[str] = None) -> NodeView:
    """The driver and GPUs of a report's fingerprint fields (all a fleet merge keeps of a node)."""
    driver = DriverFacts(version=fields.get("driver"), cuda_version=fields.get("driver_cuda"),
                         kernel_module_version=fields.get("kernel_module"))
    gpus: List[GpuFacts] = []
    for entry in fields.get("gpus") or []:
        if not isinstance(entry, dict):
            continue
        for _ in range(int(entry.get("count") or 1)):
            gpus.append(GpuFacts(index=len(gpus), name=entry.get("name"),
                                 compute_capability=entry.get("compute_capability"), mig_mode=entry.get("mig")))
    return NodeView(host, driver, gpus, source)


def node_from_report(doc: Any, source: str) -> NodeView:
    """The node of a `check --json` report (read through its fingerprint, exactly as `fleet --image` reads it)."""
    if not isinstance(doc, dict) or doc.get("command") != "check":
        raise ImageError("--against %s: not a `cudnn-doctor check --json` report" % source)
    fields = (doc.get("fingerprint") or {}).get("fields")
    if not isinstance(fields, dict):
        raise ImageError("--against %s: the report has no fingerprint (written by an older cudnn-doctor: save it "
                         "again with `cudnn-doctor check --json -o FILE` on the node)" % source)
    return node_from_fields(str(doc.get("host") or source), fields, source)


def on_node(facts: Facts, node: NodeView) -> Facts:
    """The image's facts with the node's driver and GPUs: what a container of the image sees on that node."""
    image = dataclasses.replace(facts.image, node=node.host, node_source=node.source) if facts.image else None
    return dataclasses.replace(facts, driver=dataclasses.replace(node.driver), gpus=list(node.gpus), image=image)
