"""Node reports for fleet tests and benchmarks: real `check --json` documents from Facts variants, stamped per node."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, Iterator, List, Tuple

from facts_factory import gpu, real_machine

from cudnn_doctor.commands.check_run import exit_code_for
from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.render.envelope import dumps
from cudnn_doctor.render.json_report import report_json

T0 = datetime(2026, 11, 23, 6, 0, 0, tzinfo=timezone.utc)


def _gpus(n: int, **fields):
    return [gpu(i, uuid="GPU-00000000-0000-4000-8000-%012d" % i, **fields) for i in range(n)]


def _a100(f):
    f.gpus = _gpus(8, name="NVIDIA A100-SXM4-80GB", cc="8.0")


def _eight(f):
    f.gpus = _gpus(8)


def _seven(f):
    f.gpus = _gpus(7)  # one GPU fell off the bus


def _old_module(f):
    _eight(f)
    f.driver.kernel_module_version = "575.57.08"  # user space upgraded, the kernel module not reloaded


def _old_torch(f):
    _eight(f)
    f.python.frameworks[0].version = "2.10.0+cu130"


def _no_pip_cudnn(f):
    _eight(f)
    f.cudnn = f.cudnn[:1]


# (name, weight, change): most nodes are the pool's majority, a few are the outliers to find.
VARIANTS: List[Tuple[str, int, Callable]] = [
    ("h100x8", 80, _eight), ("h100x7", 3, _seven), ("old-module", 4, _old_module), ("old-torch", 5, _old_torch),
    ("no-pip-cudnn", 3, _no_pip_cudnn), ("a100x8", 30, _a100),
]


def variant_reports() -> Dict[str, Dict[str, Any]]:
    """Each variant judged by the real rules and rendered by the real `check --json` renderer."""
    out = {}
    for name, _, change in VARIANTS:
        facts = real_machine()
        change(facts)
        report = collect_report(facts=facts)
        doc = report_json(report, exit_code_for(report, False))
        doc.pop("started_at"), doc.pop("duration_s"), doc.pop("host")
        out[name] = doc
    return out


def stamp(template: Dict[str, Any], host: str, started: datetime, rng: random.Random) -> Dict[str, Any]:
    """One node's report: its own name, time, duration and GPU UUIDs (none of which enter the fingerprint)."""
    doc = dict(template)
    doc["host"] = host
    doc["started_at"] = started.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    doc["duration_s"] = round(rng.uniform(0.3, 2.5), 3)
    facts = dict(doc["facts"])
    facts["gpus"] = [dict(g, uuid="GPU-%08x" % rng.getrandbits(32)) for g in facts["gpus"]]
    doc["facts"] = facts
    return doc


def fleet_reports(n: int, seed: int = 1, prefix: str = "gpu") -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(host, report) for n nodes with the VARIANTS' weights; node names gpu00001, gpu00002, ..."""
    rng = random.Random(seed)
    templates = variant_reports()
    names = [name for name, _, _ in VARIANTS]
    weights = [w for _, w, _ in VARIANTS]
    for i in range(1, n + 1):
        name = rng.choices(names, weights)[0]
        host = "%s%05d" % (prefix, i)
        yield host, stamp(templates[name], host, T0 + timedelta(seconds=rng.uniform(0, 600)), rng)

