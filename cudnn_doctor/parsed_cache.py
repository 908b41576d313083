"""A cache of parsed data files that can never be stale: keyed on every source file's identity.

Parsing the knowledge base's TOML costs tens of milliseconds on every run; loading the same data with
``marshal`` costs about one. The key holds, for each source file, its path, size, inode, device, mtime
and ctime in nanoseconds (ctime cannot be set back by ``touch``), plus the Python version and a format
tag, so any edit, replacement or reinstall misses the cache. A cache that cannot be read or written is
simply not used. ``CUDNN_DOCTOR_CACHE_DIR=off`` turns it off.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

FORMAT = "1"
CACHE_WAIT = 0.5  # seconds the cache may take to answer before the files are parsed instead


def cache_dir() -> Optional[Path]:
    configured = os.environ.get("CUDNN_DOCTOR_CACHE_DIR")
    if configured is not None:
        return None if configured in ("", "off", "0") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cudnn-doctor"


def _identity(paths: Sequence[Path], tag: str) -> Tuple:
    ids = []
    for path in paths:
        st = os.stat(path)
        ids.append((str(path), st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns))
    return (FORMAT, tag, sys.version, tuple(ids))


def load(paths: Dict[str, Path], parse: Callable[[bytes], Any], tag: str) -> Dict[str, Any]:
    """``{name: parse(bytes of paths[name])}``, from the cache when every file is unchanged.

    The cache usually lives in the home folder, which on a cluster may be a network mount that hangs: it is
    read in a worker thread given ``CACHE_WAIT`` seconds, after which the files are simply parsed.
    """
    names = sorted(paths)
    folder = cache_dir()
    found: List[Any] = []
    if folder is not None:
        worker = threading.Thread(target=lambda: found.append(_cached(folder, paths, names, tag)), daemon=True)
        worker.start()
        worker.join(CACHE_WAIT)
    hit, key, target = found[0] if found else (None, None, None)
    if hit is not None:
        return hit
    data = {}
    for name in names:
        with open(paths[name], "rb") as fh:
            data[name] = parse(fh.read())
    if target is not None:
        writer = threading.Thread(target=_store, args=(target, key, data), daemon=True)
        writer.start()
        writer.join(CACHE_WAIT)
    return data


def _cached(folder: Path, paths: Dict[str, Path], names: List[str], tag: str):
    """(data or None, key, cache file) for these source files."""
    try:
        key = _identity([paths[n] for n in names], tag)
        target = folder / ("%s-%s.marshal" % (tag, hashlib.sha256(repr(key).encode()).hexdigest()[:20]))
    except (OSError, ValueError):
        return None, None, None
    try:
        with open(target, "rb") as fh:
            stored_key, data = marshal.loads(fh.read())
        if stored_key == key and isinstance(data, dict) and sorted(data) == names:
            return data, key, target
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return None, key, target


def _store(target: Path, key: Tuple, data: Dict[str, Any]) -> None:
    try:
        blob = marshal.dumps((key, data))
        target.parent.mkdir(parents=True, exist_ok=True)
        # Unique per machine and process: a home folder shared by a cluster's nodes sees many writers.
        tmp = target.with_name("%s.tmp-%s-%d" % (target.name, os.uname().nodename, os.getpid()))
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, target)  # readers see the old file or the whole new one
    except (OSError, ValueError):
        pass


def remember(tag: str, identity: Tuple, compute: Callable[[], Any]) -> Tuple[Any, bool]:
    """(compute()'s value, whether it came from the cache) for one file: cached while ``identity`` (its path,
    size, inode, device, mtime and ctime, from the open file) is the same. Values must be marshal-able."""
    folder = cache_dir()
    key = (FORMAT, tag, sys.version, identity)
    target = folder / ("%s-%s.marshal" % (tag, hashlib.sha256(repr(key).encode()).hexdigest()[:20])) if folder else None
    found: List[Any] = []

    def read() -> None:
        try:
            with open(target, "rb") as fh:
                stored_key, value = marshal.loads(fh.read())
            if stored_key == key:
                found.append(value)
        except (OSError, ValueError, EOFError, TypeError):
            pass
    if target is not None:
        worker = threading.Thread(target=read, daemon=True)
        worker.start()
        worker.join(CACHE_WAIT)  # a hung home folder costs at most this, then the work is done here
        if found:
            return found[0], True
    value = compute()
    if target is not None:
        writer = threading.Thread(target=_store, args=(target, key, value), daemon=True)
        writer.start()
        writer.join(CACHE_WAIT)
    return value, False
