"""Record the file lists PyPI's simple API gives for NVIDIA's cuDNN wheels (nvidia-cudnn-cu11/12/13, and the
nvidia-cudnn name that never held a cuDNN 7 wheel) into tests/data/pypi_cudnn_files.json, in the shape
`cudnn-doctor install --version V --cuda N` reads live (PEP 691 JSON: files with filename, hashes, size,
requires-python, yanked; the download URLs are left out, the tests serve their own). tests/install/test_install_pypi_
wheels.py plans installs from this copy; run this again to refresh it.

    python scripts/record_pypi_files.py
"""
from __future__ import annotations

import datetime
import json
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "pypi_cudnn_files.json"
SIMPLE = "https://pypi.org/simple/%s/"
PROJECTS = ("nvidia-cudnn", "nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
KEEP = ("filename", "hashes", "size", "requires-python", "yanked", "upload-time")


def project_files(name: str) -> dict:
    request = urllib.request.Request(SIMPLE % name, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        doc = json.load(resp)
    files = [{k: f[k] for k in KEEP if k in f} for f in doc.get("files", [])]
    return {"name": doc.get("name", name), "url": SIMPLE % name, "versions": doc.get("versions", []),
            "files": sorted(files, key=lambda f: f["filename"])}


def main() -> int:
    projects = {name: project_files(name) for name in PROJECTS}
    doc = {"_recorded": {"date": datetime.date.today().isoformat(),
                         "source": "PyPI's simple API (PEP 691 JSON), " + ", ".join(SIMPLE % p for p in PROJECTS),
                         "by": "scripts/record_pypi_files.py"},
           "projects": projects}
    OUT.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    print("%s: %s" % (OUT.relative_to(ROOT), ", ".join("%s %d files" % (n, len(p["files"]))
                                                     for n, p in projects.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
