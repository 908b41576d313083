"""A cache of parsed data files that can never be stale: keyed on every source file's identity.

Parsing the knowledge base's TOML costs tens of milliseconds on every run; loading the same data with
``marshal`` costs about one. The key holds, for each source file, its path, size, inode, device, mtime
and ctime in nanoseconds (ctime cannot be set back by ``touch``), plus the Python version and a format
tag, so any edit, replacement or reinstall misses the cache. A cache that cannot be read or written is
simply not used. ``CUDNN_DOCTOR_CACHE_DIR=off`` turns it off.
"""
from __future__ import annotations

import marshal
import os
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

FORMAT = "1"
CACHE_WAIT = 0.5  # seconds the cache may take to answer before the files are parsed instead
# Each new identity (an upgraded wheel, a new driver, another Python) leaves a new file and nothing ever asks for the
# old one again: a store keeps each tag's most recently used files and removes the rest, and leftovers of writers
# that died. A hit marks its file as used (at most once a day, so a warm run does not write).
KEEP_PER_TAG = 256
STALE_SECONDS = 30 * 86400
TOUCH_AFTER = 86400


def cache_dir() -> Optional[Path]:
    configured = os.environ.get("CUDNN_DOCTOR_CACHE_DIR")
    if configured is not None:
        return None if configured in ("", "off", "0") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cudnn-doctor"


def file_identity(path: str, st: os.stat_result) -> Tuple[str, int, int, int, int, int]:
    """What "unchanged" means for a cached file: its path, size, inode, device, mtime and ctime (ns)."""
    return (path, st.st_size, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns)


def _identity(paths: Sequence[Path]) -> Tuple:
    return tuple(file_identity(str(path), os.stat(path)) for path in paths)


def load(paths: Dict[str, Path], parse: Callable[[bytes], Any], tag: str) -> Dict[str, Any]:
    """``{name: parse(bytes of paths[name])}``, from the cache when every file is unchanged."""
    names = sorted(paths)

    def parse_all() -> Dict[str, Any]:
        data = {}
        for name in names:
            with open(paths[name], "rb") as fh:
                data[name] = parse(fh.read())
        return data
    return _remembered(tag, lambda: _identity([paths[n] for n in names]), parse_all,
                       valid=lambda data: isinstance(data, dict) and sorted(data) == names)


def remember(tag: str, identity: Tuple, compute: Callable[[], Any]) -> Any:
    """compute()'s value for one file, from the cache while ``identity`` (its path, size, inode, device, mtime
    and ctime, from the open file) is the same. Values must be marshal-able."""
    return _remembered(tag, lambda: identity, compute)


def remember_all(tag: str, identities: Sequence[Tuple], compute: Callable[[int], Any]) -> List[Any]:
    """``[compute(i) for each file i]``, as remember() gives each, asked of the cache in one read: the whole set is
    also stored under all its identities together (a framework's dozens of libraries cost one file, not a read and
    a thread each). A set with any file changed falls back to each file's own entry. Where compute(i) raises, the
    list holds the exception, and nothing is remembered of that file."""
    folder = cache_dir()
    if folder is None:
        return [_attempt(compute, i) for i in range(len(identities))]
    ids = tuple(identities)
    answer: List[Any] = []

    def look() -> None:
        whole = _cached(folder, tag + "-set", lambda: ids, lambda v: isinstance(v, list) and len(v) == len(ids))
        if whole[0]:
            answer.append((whole, None))
        else:
            answer.append((whole, [_cached(folder, tag, lambda: one, lambda v: True) for one in ids]))
    worker = threading.Thread(target=look, daemon=True)
    worker.start()
    worker.join(CACHE_WAIT)
    if not answer:  # the cache did not answer in time: read every file here, store nothing
        return [_attempt(compute, i) for i in range(len(ids))]
    whole, each = answer[0]
    if each is None:
        return list(whole[1])
    values = [hit[1] if hit[0] else _attempt(compute, i) for i, hit in enumerate(each)]
    stores = [(hit[3], hit[2], values[i]) for i, hit in enumerate(each)
              if not hit[0] and hit[3] is not None and not isinstance(values[i], Exception)]
    if whole[3] is not None and not any(isinstance(v, Exception) for v in values):
        stores.append((whole[3], whole[2], values))
    if stores:
        writer = threading.Thread(target=_store_each, args=(stores,), daemon=True)
        writer.start()
        writer.join(CACHE_WAIT)
    return values


def _store_each(stores: List[Tuple[Path, Tuple, Any]]) -> None:
    for target, key, value in stores:
        _store(target, key, value)


def _attempt(compute: Callable[[int], Any], i: int) -> Any:
    try:
        return compute(i)
    except Exception as exc:  # handed back in the list: the caller says what a failed read means
        return exc


def _remembered(tag: str, identify: Callable[[], Tuple], compute: Callable[[], Any],
                valid: Callable[[Any], bool] = lambda value: True) -> Any:
    """compute()'s value, or the cached one stored under the same identity.

    The cache usually lives in the home folder, which on a cluster may be a network mount that hangs: it is
    read (the identity taken too) in a worker thread given ``CACHE_WAIT`` seconds, after which the work is
    simply done here.
    """
    folder = cache_dir()
    found: List[Any] = []
    if folder is not None:
        worker = threading.Thread(target=lambda: found.append(_cached(folder, tag, identify, valid)), daemon=True)
        worker.start()
        worker.join(CACHE_WAIT)
    hit, value, key, target = found[0] if found else (False, None, None, None)
    if hit:
        return value
    value = compute()
    if target is not None:
        writer = threading.Thread(target=_store, args=(target, key, value), daemon=True)
        writer.start()
        writer.join(CACHE_WAIT)
    return value


def _cached(folder: Path, tag: str, identify: Callable[[], Tuple], valid: Callable[[Any], bool]):
    """(hit, value, key, cache file) for this identity; a value may itself be None."""
    try:
        key = (FORMAT, tag, sys.version, identify())
        # The name only spreads the keys over files; the key stored inside decides a hit, so a checksum will do
        # (hashlib's OpenSSL start is 3-4 ms of check on the lent H200), and two keys of one name just take turns.
        target = folder / ("%s-%08x.marshal" % (tag, zlib.crc32(repr(key).encode())))
    except (OSError, ValueError):
        return False, None, None, None
    try:
        with open(target, "rb") as fh:
            stored_key, value = marshal.loads(fh.read())
        if stored_key == key and valid(value):
            _mark_used(target)
            return True, value, key, target
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return False, None, key, target


def _store(target: Path, key: Tuple, data: Any) -> None:
    try:
        blob = marshal.dumps((key, data))
        target.parent.mkdir(parents=True, exist_ok=True)
        # Unique per machine and process: a home folder shared by a cluster's nodes sees many writers.
        tmp = target.with_name("%s.tmp-%s-%d" % (target.name, os.uname().nodename, os.getpid()))
        with open(tmp, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, target)  # readers see the old file or the whole new one
    except (OSError, ValueError):
        return
    prune(target.parent, target.name.rsplit("-", 1)[0])


def _mark_used(target: Path) -> None:
    try:
        if os.stat(target).st_mtime < time.time() - TOUCH_AFTER:
            os.utime(target)
    except OSError:
        pass


def prune(folder: Path, tag: str, keep: int = KEEP_PER_TAG, stale: float = STALE_SECONDS) -> List[str]:
    """Remove ``tag``'s cache files beyond the ``keep`` most recently used, those unused for ``stale`` seconds,
    and temporary files a killed writer left a day ago or more; returns the names removed."""
    now = time.time()
    entries = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if not entry.name.startswith(tag + "-") or not entry.is_file(follow_symlinks=False):
                    continue
                rest = entry.name[len(tag) + 1:]
                if "-" in rest.split(".marshal", 1)[0]:  # another tag that starts with this one ("compat-x-...")
                    continue
                entries.append((entry.stat(follow_symlinks=False).st_mtime, entry.name))
    except OSError:
        return []
    done = [name for mtime, name in entries if ".marshal.tmp-" in name and mtime < now - 86400]
    kept = sorted(((m, n) for m, n in entries if n.endswith(".marshal")), reverse=True)
    done += [name for i, (mtime, name) in enumerate(kept) if i >= keep or mtime < now - stale]
    removed = []
    for name in done:
        try:
            os.unlink(folder / name)
            removed.append(name)
        except OSError:
            pass
    return removed
