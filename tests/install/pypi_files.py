"""PyPI's real file lists of NVIDIA's cuDNN wheels (tests/data/pypi_cudnn_files.json, written by
scripts/record_pypi_files.py), and a page in the simple API's JSON shape (PEP 691) for the tests' file server."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

import archive_factory as af

RECORDED = Path(__file__).resolve().parents[1] / "data" / "pypi_cudnn_files.json"
DOC = json.loads(RECORDED.read_text())


def files(project: str) -> List[dict]:
    return DOC["projects"][project]["files"]


def _final(label: str) -> Tuple[int, ...]:
    """(9, 28, 1, 4) for a final release label; () for development, pre- and post-releases."""
    parts = label.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else ()


def newest(project: str, arch_tail: str) -> Tuple[str, str]:
    """(release, file name) of the newest final release with a wheel whose name ends `arch_tail` ('x86_64.whl'),
    read from the names alone (not through the code under test)."""
    named = [(_final(f["filename"].split("-")[1]), f["filename"]) for f in files(project)
             if f["filename"].endswith(arch_tail) and not f.get("yanked")]
    label, name = max((v, n) for v, n in named if v)
    return ".".join(map(str, label)), name


NEWEST_CU12 = newest("nvidia-cudnn-cu12", "x86_64.whl")
NEWEST_CU13 = newest("nvidia-cudnn-cu13", "x86_64.whl")


def served_page(simple: Path, project: str, local: Dict[str, Path], base: str) -> Path:
    """simple/<project>/index.html holding the recorded list, each name in `local` pointing at that file under
    `base` with its own sha256 and size (the other files point at names the server does not have)."""
    listed = []
    for f in files(project):
        entry = dict(f, url=base + f["filename"])
        if f["filename"] in local:
            path = local[f["filename"]]
            entry.update(hashes={"sha256": af.sha256_file(path)}, size=path.stat().st_size)
        listed.append(entry)
    page = simple / project / "index.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": listed}))
    return page
