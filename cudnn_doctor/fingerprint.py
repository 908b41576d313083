"""Configuration fingerprint: a stable hash of what should be equal across a homogeneous pool of nodes."""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any, Dict, List

from .model import Facts

# Bump when the set or the meaning of the fields below changes: fingerprints of different versions never match.
FINGERPRINT_VERSION = 1


def fingerprint_fields(facts: Facts) -> Dict[str, Any]:
    """What two identically built nodes share: versions, models, builds and install paths.

    Left out on purpose, because they differ between identical nodes: host name, GPU UUIDs and PCI addresses,
    free memory and running processes, times and probe timings, the loader cache's mtime, CUDA_VISIBLE_DEVICES.
    """
    gpus = Counter((g.name, g.compute_capability, g.mig_mode) for g in facts.gpus)
    return {
        "arch": facts.host.machine,
        "kernel": facts.host.kernel_release,
        "driver": facts.driver.version,
        "driver_cuda": facts.driver.cuda_version,
        "kernel_module": facts.driver.kernel_module_version,
        "gpus": [{"name": name, "compute_capability": cc, "mig": mig, "count": n}
                 for (name, cc, mig), n in sorted(gpus.items(), key=lambda kv: tuple(str(x) for x in kv[0]))],
        "toolkits": _sorted_dicts({"path": t.path, "version": t.version} for t in facts.toolkits),
        "cudnn": _sorted_dicts({"path": c.path, "version": c.version, "cuda": c.cuda_version, "origin": c.origin,
                                "package": c.package} for c in facts.cudnn),
        "frameworks": _sorted_dicts({"name": f.name, "version": f.version, "cuda": f.cuda_version,
                                     "cudnn": f.cudnn_version} for f in facts.python.frameworks),
        "loads_cudnn": sorted(r.path for n, r in facts.loader.resolved.items()
                              if n.startswith("libcudnn.so.") and r.path),
    }


def fingerprint_id(fields: Dict[str, Any]) -> str:
    """The first 16 hex digits of SHA-256 over the canonical JSON of the fields (and the version)."""
    canonical = json.dumps([FINGERPRINT_VERSION, fields], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def fingerprint(facts: Facts) -> Dict[str, Any]:
    """The report's `fingerprint` object: id, version and the fields that were hashed."""
    fields = fingerprint_fields(facts)
    return {"id": fingerprint_id(fields), "version": FINGERPRINT_VERSION, "fields": fields}


def _sorted_dicts(items) -> List[Dict[str, Any]]:
    return sorted(items, key=lambda d: json.dumps(d, sort_keys=True, default=str))
