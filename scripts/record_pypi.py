"""Record PyPI's answers the knowledge is derived from into tests/data/knowledge (pypi/, requires/).

Release lists of nvidia-cudnn-cu*, nvidia-cuda-runtime-cu* and the frameworks (PyPI JSON API), and the
Requires-Dist lines of each framework release's manylinux x86_64 wheel (read by range requests, no download).
scripts/refresh_knowledge.py then derives compat/derived.json from these copies.

With --wheels it records the wheel index instead, compat/wheels.json (cudnn_doctor/refresh/wheels.py): every release's
wheel files of the frameworks and of the nvidia-* wheels they pin, with tags, Requires-Python and Requires-Dist. That
file is itself the recording (each project's simple-API URL is its source); tests/knowledge/test_wheel_index.py checks it.

    python scripts/record_pypi.py
    python scripts/record_pypi.py --wheels
"""
from __future__ import annotations

import datetime
import sys
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cudnn_doctor.refresh import collect, fetch  # noqa: E402

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "data" / "knowledge"


def record_wheels() -> int:
    import json

    from cudnn_doctor.refresh import wheels

    target = Path(__file__).resolve().parents[1] / "compat" / "wheels.json"
    projects = wheels.FRAMEWORK_PROJECTS + wheels.CUDNN_PROJECTS + wheels.FILES_ONLY
    got = wheels.collect(projects, fetch.Budget(3600, per_request=120), log=print)
    for line in got["errors"]:
        print("failed: " + line, file=sys.stderr)
    doc = wheels.compact(got, datetime.date.today().isoformat(), "scripts/record_pypi.py --wheels")
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=False) + "\n")
    tmp.replace(target)
    print("wrote %s (%d projects, %d bytes)" % (target, len(doc["projects"]), target.stat().st_size))
    return 0


def main() -> int:
    if "--wheels" in sys.argv[1:]:
        return record_wheels()
    old = collect.load_recorded(RECORDED)
    sources = collect.collect_live(requests.Session(), fetch.Budget(1800, per_request=60),
                                   collect.frameworks_known(old), manifests=False, log=print)
    for line in sources["errors"]:
        print("failed: " + line, file=sys.stderr)
    collect.save_recorded(RECORDED, sources, datetime.date.today().isoformat())
    return 0


if __name__ == "__main__":
    sys.exit(main())
