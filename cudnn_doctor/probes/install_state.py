"""What an interrupted `cudnn-doctor install` left in a toolkit or prefix: its staging folder and journal."""
from __future__ import annotations

import json
import posixpath
from typing import List, Optional, Set

# The installer's own names (install/target.py STATE_DIR, install/journal.py TXN and JOURNAL). Spelled here, not
# imported: probes sit below the installer, and these names are part of what a released version left on disk.
STATE_DIR = ".cudnn-doctor"
TXN = "txn"
JOURNAL = "journal.json"


def _candidates(ctx) -> List[str]:
    """Targets an install may have used: every toolkit, the parent of each cuDNN copy's folder (a --prefix puts
    the libraries in PREFIX/lib) and of each LD_LIBRARY_PATH entry (a prefix not finished has no cuDNN yet)."""
    facts, host = ctx.facts, ctx.host
    places = [t.path for t in facts.toolkits if t.kind != "pip" and not t.dangling]
    places += [posixpath.dirname(c.directory.rstrip("/")) for c in facts.cudnn if c.directory]
    places += [posixpath.dirname(p.rstrip("/")) for p in host.env_paths("LD_LIBRARY_PATH") if p.startswith("/")]
    seen: Set[str] = set()
    out = []
    for place in places:
        if place and place != "/" and place not in seen:
            seen.add(place)
            out.append(place)
    return out


def _running(host, pid: Optional[int]) -> bool:
    """The install that wrote the journal is still at work (a live machine's /proc lists it): not a leftover."""
    if not isinstance(pid, int) or not host.is_live:
        return False
    cmdline = host.read_bytes("/proc/%d/cmdline" % pid, limit=1 << 12)
    return bool(cmdline) and b"cudnn" in cmdline


def _staged(host, staging: str) -> "tuple[int, int]":
    """(files, bytes) under the staging folder: a cuDNN's role folders hold a few dozen files, one level deep."""
    files = size = 0
    for role in host.listdir(staging):
        folder = "%s/%s" % (staging, role)
        for name in host.listdir(folder) if host.is_dir(folder) else []:
            st = host.stat("%s/%s" % (folder, name))
            files += 1
            size += st.st_size if st is not None else 0
    return files, size


def probe(ctx) -> None:
    host, facts = ctx.host, ctx.facts
    for target in _candidates(ctx):
        state = "%s/%s" % (target.rstrip("/"), STATE_DIR)
        txn = "%s/%s" % (state, TXN)
        ctx.searched("install-state", txn)
        if not host.is_dir(txn):
            continue
        text = host.read_text("%s/%s" % (txn, JOURNAL), limit=1 << 20)
        try:
            journal = json.loads(text) if text else {}
        except (ValueError, RecursionError):
            journal = {}
        journal = journal if isinstance(journal, dict) else {}
        if _running(host, journal.get("pid")):
            continue
        files, size = _staged(host, txn + "/staging") if host.is_dir(txn + "/staging") else (0, 0)
        st = host.stat(state)
        facts.cudnn_leftovers.append({
            "kind": "interrupted-install", "path": txn, "target": target,
            "target_kind": "toolkit" if any(t.path == target for t in facts.toolkits) else "prefix",
            "status": str(journal.get("status") or "unknown"), "pid": journal.get("pid"),
            "version": journal.get("cudnn_version"), "staged_files": files, "staged_bytes": size,
            "owner_uid": st.st_uid if st is not None else None})
