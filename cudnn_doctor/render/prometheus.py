"""`check --format prometheus`: node_exporter textfile-collector metrics (one sample per finding id and severity)."""
from __future__ import annotations

from collections import Counter
from typing import Dict, Iterable, List

from .. import __version__
from ..model import Severity
from ..queries import loaded_cudnn
from ..results import Report

PREFIX = "cudnn_doctor"


def _escape(value: object) -> str:
    # Label values escape backslash, double quote and newline (Prometheus text exposition format).
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Dict[str, object]) -> str:
    if not labels:
        return ""
    return "{" + ",".join('%s="%s"' % (k, _escape(v)) for k, v in labels.items()) + "}"


def _family(name: str, help_text: str, samples: Iterable[tuple], kind: str = "gauge") -> List[str]:
    lines = ["# HELP %s_%s %s" % (PREFIX, name, help_text), "# TYPE %s_%s %s" % (PREFIX, name, kind)]
    lines += ["%s_%s%s %s" % (PREFIX, name, _labels(labels), _number(value)) for labels, value in samples]
    return lines


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) and not float(value).is_integer() else "%d" % value


def _versions(report: Report) -> Dict[str, str]:
    facts = report.facts
    res = loaded_cudnn(facts)
    loaded = res.path if res is not None else None
    cudnn = next((c for c in facts.cudnn if c.path == loaded), facts.cudnn[0] if facts.cudnn else None)
    toolkit = facts.toolkits[0] if facts.toolkits else None
    return {
        "driver": facts.driver.version or "",
        "driver_cuda": facts.driver.cuda_version or "",
        "cuda": (toolkit.version if toolkit else None) or "",
        "cudnn": (cudnn.version if cudnn else None) or "",
        "cudnn_cuda": (cudnn.cuda_version if cudnn else None) or "",
        "gpu": facts.gpus[0].name if facts.gpus and facts.gpus[0].name else "",
        "version": __version__,
    }


def _node_families(report: Report) -> List[str]:
    """Each GPU's health and readiness, one sample per GPU (label gpu: NVML's index), so alerts can name the GPU."""
    node, lines = report.facts.node, []
    per_gpu = (
        ("gpu_lost", "1 when NVML says the GPU fell off the bus.", lambda g: int(g.lost)),
        ("gpu_row_remap_pending", "1 when a row remap (or page retirement) waits for a GPU reset.",
         lambda g: int(bool((g.remapped_rows or {}).get("pending") or g.retired_pages_pending))),
        ("gpu_row_remap_failed", "1 when row remapping failed.", lambda g: int(bool((g.remapped_rows or {}).get(
            "failed")))),
        ("gpu_ecc_uncorrected_volatile", "Uncorrectable ECC errors since the driver loaded.",
         lambda g: g.ecc_volatile_uncorrected),
        ("gpu_pcie_link_width", "Lanes of the GPU's PCIe link now.", lambda g: g.pcie.get("width")),
        ("gpu_pcie_link_width_max", "Lanes the GPU's PCIe link can have.", lambda g: g.pcie.get("width_max")),
        ("gpu_nvlinks_down", "NVLinks of the GPU that are not up.", lambda g: len(g.nvlinks_down)),
    )
    for name, help_text, value in per_gpu:
        samples = [(dict(gpu=g.index), value(g)) for g in node.gpus if not (g.lost and name != "gpu_lost")]
        samples = [(labels, v) for labels, v in samples if v is not None]
        if samples:
            lines += _family(name, help_text, samples)
    if node.xid_events:
        lines += _family("xid_events", "Xid and SXid events in the kernel log since boot, by code.",
                         ((dict(kind=e["kind"], code=e["code"], pci=e["pci"]), e["count"]) for e in node.xid_events))
    if node.ready is not None:
        lines += _family("gpu_ready", "1 when check --ready ran the test kernel on the GPU and its result was right.",
                         ((dict(gpu=r.index), int(r.ok)) for r in node.ready))
    return lines


def render_prometheus(report: Report, exit_code: int) -> str:
    """Names follow Prometheus practice: one application prefix, base units (seconds), `_info` for metadata."""
    from ..fingerprint import fingerprint

    run = report.run
    by_severity = Counter(f.severity.value for f in report.findings)
    by_id = Counter((f.id, f.severity.value) for f in report.findings)
    verdict = report.verdict
    info = dict(_versions(report), fingerprint=fingerprint(report.facts)["id"])
    lines: List[str] = []
    lines += _family("findings", "Findings of the last check by severity.",
                     ((dict(severity=s.value), by_severity.get(s.value, 0)) for s in Severity))
    lines += _family("finding", "Findings of the last check by id (value: how many).",
                     ((dict(id=i, severity=s), n) for (i, s), n in sorted(by_id.items())))
    lines += _family("verdict", "1 for the verdict of the last check (ok, warning or error), 0 for the others.",
                     ((dict(verdict=v), int(v == verdict)) for v in ("ok", "warning", "error")))
    lines += _family("exit_code", "Exit code of the last check (0 ok, 1 problems, 4 incomplete).",
                     [({}, exit_code)])
    lines += _family("build_info", "Versions found by the last check (value always 1).", [(info, 1)])
    lines += _family("gpus", "GPUs seen by the last check.", [({}, len(report.facts.gpus))])
    lines += _node_families(report)
    if run is not None:
        lines += _family("check_duration_seconds", "How long the last check took.", [({}, float(run.duration_s))])
        lines += _family("last_run_timestamp_seconds", "When the last check finished (Unix time).",
                         [({}, float(run.finished_unix))])
    return "\n".join(lines) + "\n"
