"""Files that two installs' records share (the nvidia/__init__.py of CUDA 12's older wheels, which cuDNN's, the CUDA
runtime's and NVTX's each list): pip removes such a file with either distribution though the other still lists it,
so a fix that replaces one, or an undo that uninstalls one fix added, would leave the other's file gone. The journal
keeps a copy of each before pip runs; after the package steps (fix's, or undo's), each kept file that is missing
while an installed distribution still lists it is put back."""
from __future__ import annotations

import csv
import glob
import hashlib
import os
import shutil
from typing import Dict, List, Sequence

from ..install.journal import fsync_dir

BIGGEST = 1 << 20  # bytes: shared files are namespace __init__.py files and the like, never libraries


def sites(prefix: str) -> List[str]:
    """The site-packages folders of a venv or conda prefix."""
    return sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "python*", "site-packages")))


def listed(site_dirs: Sequence[str]) -> Dict[str, int]:
    """Every file the installed distributions' RECORDs list (absolute path) -> how many list it."""
    counts: Dict[str, int] = {}
    for site in site_dirs:
        for record in glob.glob(os.path.join(glob.escape(site), "*.dist-info", "RECORD")):
            try:
                with open(record, newline="", encoding="utf-8") as fh:
                    rows = [row[0] for row in csv.reader(fh) if row]
            except (OSError, UnicodeDecodeError, csv.Error):
                continue
            for rel in set(rows):
                path = os.path.normpath(os.path.join(site, rel))
                counts[path] = counts.get(path, 0) + 1
    return counts


def keep(folder: str, site_dirs: Sequence[str], name: str = "shared", earlier: Sequence[dict] = ()) -> List[dict]:
    """Copies every small regular file two or more distributions list into the transaction (``folder``/``name``/,
    one copy per path); ``earlier``: the records of an earlier attempt, kept (its copy may be the only one left)."""
    records = list(earlier)
    known = {r["path"] for r in records}
    for path, owners in sorted(listed(site_dirs).items()):
        if path in known or owners < 2 or os.path.islink(path) or not os.path.isfile(path) or \
                os.path.getsize(path) > BIGGEST:
            continue
        backup = "%s/%s" % (name, hashlib.sha1(path.encode()).hexdigest()[:16])
        target = os.path.join(folder, *backup.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(path, target)
        records.append({"path": path, "backup": backup})
    if len(records) > len(earlier):
        fsync_dir(os.path.join(folder, name))
    return records


def put_back(folder: str, records: Sequence[dict], site_dirs: Sequence[str]) -> List[str]:
    """Each kept file that is gone while a distribution installed now still lists it, copied back; their paths."""
    if not records:
        return []
    now = listed(site_dirs)
    out = []
    for r in records:
        path = r["path"]
        if now.get(path) and not os.path.lexists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy2(os.path.join(folder, *r["backup"].split("/")), path)
            out.append(path)
    return out
