"""Record PyPI's answers the knowledge is derived from into tests/data/knowledge (pypi/, requires/).

Release lists of nvidia-cudnn-cu*, nvidia-cuda-runtime-cu* and the frameworks (PyPI JSON API), and the
Requires-Dist lines of each framework release's manylinux x86_64 wheel (read by range requests, no download).
scripts/refresh_knowledge.py then derives compat/derived.json from these copies.

    python scripts/record_pypi.py
"""
from __future__ import annotations

import datetime
import sys
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cudnn_doctor.refresh import collect, fetch  # noqa: E402

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "data" / "knowledge"


def main() -> int:
    old = collect.load_recorded(RECORDED)
    sources = collect.collect_live(requests.Session(), fetch.Budget(1800, per_request=60),
                                   collect.frameworks_known(old), manifests=False, log=print)
    for line in sources["errors"]:
        print("failed: " + line, file=sys.stderr)
    collect.save_recorded(RECORDED, sources, datetime.date.today().isoformat())
    return 0


if __name__ == "__main__":
    sys.exit(main())
