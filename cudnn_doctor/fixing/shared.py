"""Files that two installs' records share (the nvidia/__init__.py of CUDA 12's older wheels, which cuDNN's, the CUDA
runtime's and NVTX's each list): pip removes such a file with either distribution though the other still lists it,
so a fix that replaces one, or an undo that uninstalls one fix added, would leave the other's file gone. The journal
keeps a copy of each before pip runs; after the package steps (fix's, or undo's), each kept file that is missing
while an installed distribution still lists it is put back."""
from __future__ import annotations

import base64
import csv
import glob
import hashlib
import os
import shutil
from typing import Dict, List, Sequence, Tuple

from ..install.journal import fsync_dir

BIGGEST = 1 << 20  # bytes: shared files are namespace __init__.py files and the like, never libraries


def sites(prefix: str) -> List[str]:
    """The site-packages folders of a venv or conda prefix."""
    return sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "python*", "site-packages")))


def listed(site_dirs: Sequence[str]) -> Dict[str, Dict[str, str]]:
    """Every file the installed distributions' RECORDs list (absolute path) -> {dist-info folder: its hash there}."""
    out: Dict[str, Dict[str, str]] = {}
    for site in site_dirs:
        for record in glob.glob(os.path.join(glob.escape(site), "*.dist-info", "RECORD")):
            try:
                with open(record, newline="", encoding="utf-8") as fh:
                    rows = [row for row in csv.reader(fh) if row]
            except (OSError, UnicodeDecodeError, csv.Error):
                continue
            owner = os.path.basename(os.path.dirname(record))
            for row in rows:
                path = os.path.normpath(os.path.join(site, row[0]))
                out.setdefault(path, {})[owner] = row[1] if len(row) > 1 else ""
    return out


def _hash(path: str) -> str:
    """A file's hash as a RECORD writes it (sha256=, urlsafe base64 without padding)."""
    with open(path, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def keep(folder: str, site_dirs: Sequence[str], name: str = "shared", earlier: Sequence[dict] = ()) -> List[dict]:
    """Copies every small regular file two or more distributions list into the transaction (``folder``/``name``/,
    one copy per path); ``earlier``: the records of an earlier attempt, kept (its copy may be the only one left)."""
    records = list(earlier)
    known = {r["path"] for r in records}
    for path, owners in sorted(listed(site_dirs).items()):
        if path in known or len(owners) < 2 or os.path.islink(path) or not os.path.isfile(path) or \
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
    """Each kept file that is gone while a distribution installed now still lists it, copied back where the copy is
    the one that distribution recorded (a copy of another owner's overwrite is not); their paths."""
    if not records:
        return []
    now = listed(site_dirs)
    out = []
    for r in records:
        path, copy = r["path"], os.path.join(folder, *r["backup"].split("/"))
        hashes = {h for h in now.get(path, {}).values() if h}
        if now.get(path) and not os.path.lexists(path) and (not hashes or _hash(copy) in hashes):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy2(copy, path)
            out.append(path)
    return out


def owners_of_gone(site_dirs: Sequence[str], before: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """{site: ``name==version``} of each installed distribution a file of whose RECORD was there before pip ran and
    is gone now: pip removed it with another distribution that listed the same path (a new user's trial: the cuDNN
    wheel of the other CUDA, whose nvidia/cudnn/lib files had overwritten the one torch loads, uninstalled, and
    torch's wheel still installed without a library)."""
    was = {os.path.normpath(os.path.join(site, rel)) for site, rels in before.items() for rel in rels}
    return _pins_by_site(site_dirs, [(path, owners) for path, owners in listed(site_dirs).items()
                                     if path in was and not os.path.lexists(path)])


def owners_missing(records: Sequence[dict], site_dirs: Sequence[str]) -> Dict[str, List[str]]:
    """{site: ``name==version`` of each installed distribution there that lists a kept file still gone} (another
    package's install overwrote it, so no copy of its own was kept): reinstalled in its own site, its files are
    its own again."""
    now = listed(site_dirs)
    return _pins_by_site(site_dirs, [(r["path"], now.get(r["path"], {})) for r in records
                                     if not os.path.lexists(r["path"])])


def _pins_by_site(site_dirs: Sequence[str], gone: Sequence[Tuple[str, Dict[str, str]]]) -> Dict[str, List[str]]:
    """{site: sorted ``name==version``} of the owners of each (path, {dist-info: hash}) given."""
    out: Dict[str, List[str]] = {}
    for path, owners in gone:
        for owner in owners:
            site = next((s for s in site_dirs if path.startswith(s.rstrip("/") + "/")), "")
            pin = "==".join(owner[:-len(".dist-info")].split("-", 1))
            if pin not in out.setdefault(site, []):
                out[site].append(pin)
    return {site: sorted(pins) for site, pins in out.items()}
