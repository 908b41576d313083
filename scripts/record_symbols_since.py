"""Record which release of an NVIDIA library first defines each function, from the libraries in NVIDIA's own wheels
on PyPI, into compat/symbols_since.json: explain reads "undefined symbol: nvrtcGetLTOIR" as "the libnvrtc loaded is
older than CUDA 12.0, the first to have it". For each library the first release of every minor is read (its .dynsym,
from the wheel's member alone by HTTP range requests: tests/realdata.wheel_elf_symbols); a function is dated by the
first of those that defines it. Functions the oldest release read already has are left out: how much older they are
the wheels cannot say (compat/sonames.toml [symbols_since_documented] dates some from NVIDIA's documents).

    python scripts/record_symbols_since.py          # about 6 GB read from PyPI (NCCL's wheels are 150-350 MB each)
"""
from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import requests
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from realdata import wheel_elf_symbols  # noqa: E402

OUT = ROOT / "compat" / "symbols_since.json"
SIMPLE = "https://pypi.org/simple/%s/"
# library stem -> (product, how its releases are named, [(project, member file name)] oldest major first)
LIBRARIES = {
    "libcudart": ("the CUDA runtime", "CUDA", [("nvidia-cuda-runtime-cu11", "libcudart.so.11.0"),
                                               ("nvidia-cuda-runtime-cu12", "libcudart.so.12"),
                                               ("nvidia-cuda-runtime", "libcudart.so.13")]),
    "libnvrtc": ("NVRTC", "CUDA", [("nvidia-cuda-nvrtc-cu11", "libnvrtc.so.11.2"), ("nvidia-cuda-nvrtc-cu12",
                                                                                      "libnvrtc.so.12"),
                                   ("nvidia-cuda-nvrtc", "libnvrtc.so.13")]),
    "libnccl": ("NCCL", "NCCL", [("nvidia-nccl-cu11", "libnccl.so.2"), ("nvidia-nccl-cu12", "libnccl.so.2"),
                                 ("nvidia-nccl-cu13", "libnccl.so.2")]),
}


def releases(project: str) -> List[Version]:
    """The first final release of each major.minor PyPI holds a Linux x86_64 wheel of."""
    doc = requests.get(SIMPLE % project, timeout=60, headers={"Accept": "application/vnd.pypi.simple.v1+json"}).json()
    have = {f["filename"].split("-")[1] for f in doc.get("files", []) if f["filename"].endswith("x86_64.whl")}
    firsts: Dict[Tuple[int, int], Version] = {}
    for v in sorted(Version(r) for r in have):
        if not (v.is_prerelease or v.is_postrelease or v.is_devrelease):
            firsts.setdefault(v.release[:2], v)
    return sorted(firsts.values())


def record(stem: str) -> Dict[str, object]:
    product, named, sources = LIBRARIES[stem]
    seen: Dict[Tuple[int, int], Tuple[str, str, set]] = {}  # minor -> (project, release, symbols)
    for project, member in sources:
        for v in releases(project):
            if v.release[:2] in seen:
                continue  # the same release under two projects (a CUDA 12 and 13 build of one NCCL)
            symbols = wheel_elf_symbols(project, str(v), member)
            if not symbols:  # a release skipped would date its new functions to the next one read
                raise SystemExit("cannot read %s from %s %s: nothing is written" % (member, project, v))
            seen[v.release[:2]] = (project, str(v), symbols)
            print("%s %s: %d symbols" % (project, v, len(symbols)), file=sys.stderr)
    ordered = [seen[k] for k in sorted(seen)]
    oldest = ordered[0]
    since: Dict[str, Dict[str, str]] = {}
    for project, release, symbols in ordered[1:]:
        for symbol in sorted(symbols - oldest[2]):
            since.setdefault(symbol, {"release": ".".join(release.split(".")[:2]), "wheel": "%s==%s" % (
                project, release)})
    return {"product": product, "named": named, "oldest_read": "%s==%s" % oldest[:2],
            "read": ["%s==%s" % (p, r) for p, r, _ in ordered], "since": since}


def main() -> int:
    doc = {"_recorded": {"date": datetime.date.today().isoformat(), "by": "scripts/record_symbols_since.py",
                         "source": "the .dynsym of the libraries in NVIDIA's wheels on PyPI: " + ", ".join(
                             "https://pypi.org/project/%s/#history" % p for _, _, srcs in LIBRARIES.values()
                             for p, _ in srcs)},
           "libraries": {stem: record(stem) for stem in LIBRARIES}}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    for stem, row in doc["libraries"].items():
        print("%s: %d functions dated (oldest read %s)" % (stem, len(row["since"]), row["oldest_read"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
