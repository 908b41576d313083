"""The knowledge base's parse cache never serves a stale fact: any change to a source file misses it."""
from __future__ import annotations

import json
import os

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    from cudnn_doctor import parsed_cache

    parses = []

    def parse(raw: bytes):
        parses.append(raw)
        return json.loads(raw)

    def load(paths):
        return parsed_cache.load(paths, parse, "test")

    return load, parses, tmp_path / "cache"


def test_second_load_comes_from_the_cache(tmp_path, cache):
    load, parses, _ = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    paths = {"a": tmp_path / "a.json"}
    assert load(paths) == {"a": {"v": 1}} and len(parses) == 1
    assert load(paths) == {"a": {"v": 1}} and len(parses) == 1


def test_same_size_edit_with_mtime_set_back_is_seen(tmp_path, cache):
    """The hardest edit to notice: same size, and mtime restored with touch -d; ctime still moves."""
    load, parses, _ = cache
    f = tmp_path / "a.json"
    f.write_text('{"v": 1}')
    before = os.stat(f)
    assert load({"a": f}) == {"a": {"v": 1}}
    f.write_text('{"v": 2}')
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(f).st_size == before.st_size and os.stat(f).st_mtime_ns == before.st_mtime_ns
    assert load({"a": f}) == {"a": {"v": 2}} and len(parses) == 2


def test_replaced_file_and_other_path_miss(tmp_path, cache):
    load, parses, _ = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    (tmp_path / "b.json").write_text('{"v": 1}')
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}}
    assert load({"a": tmp_path / "b.json"}) == {"a": {"v": 1}} and len(parses) == 2  # another path: its own entry
    new = tmp_path / "new.json"
    new.write_text('{"v": 3}')
    os.replace(new, tmp_path / "a.json")  # a reinstall: new inode
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 3}}


def test_damaged_or_unwritable_cache_is_ignored(tmp_path, cache, monkeypatch):
    load, parses, folder = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    load({"a": tmp_path / "a.json"})
    [entry] = list(folder.iterdir())
    entry.write_bytes(b"\x00garbage")
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}}
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "a.json" / "not-a-folder"))
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}}
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", "off")
    n = len(parses)
    load({"a": tmp_path / "a.json"})
    assert len(parses) == n + 1


def test_knowledge_base_from_cache_equals_a_fresh_parse(monkeypatch, tmp_path):
    import tomllib

    from pathlib import Path

    from cudnn_doctor.knowledge import load

    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    first, origin = load.read_all()
    cached, _ = load.read_all()
    assert list((tmp_path / "cache").iterdir())
    fresh = {name: tomllib.loads((Path(origin) / (name + ".toml")).read_text()) for name in load.COMPAT_FILES}
    tables = lambda data: {name: data[name] for name in load.COMPAT_FILES}  # noqa: E731
    assert tables(first) == tables(cached) == fresh
    assert first["derived"] == cached["derived"]  # compat/derived.json (or the updated copy), read beside them


def test_a_cache_that_does_not_answer_is_passed_over(tmp_path, cache, monkeypatch):
    """A home folder on a hung network mount: the files are parsed instead of waiting for the cache."""
    import threading
    import time

    from cudnn_doctor import parsed_cache

    load, parses, _ = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    release = threading.Event()
    monkeypatch.setattr(parsed_cache, "_cached", lambda *a: release.wait(30) or (False, None, None, None))
    monkeypatch.setattr(parsed_cache, "CACHE_WAIT", 0.2)
    start = time.monotonic()
    try:
        assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}}
    finally:
        release.set()
    assert time.monotonic() - start < 2 and len(parses) == 1


def _aged(path, days: float) -> None:
    import time

    then = time.time() - days * 86400
    os.utime(path, (then, then))


def test_a_store_removes_files_unused_for_a_month_and_dead_writers_leftovers(tmp_path, cache):
    load, parses, folder = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    load({"a": tmp_path / "a.json"})
    [current] = folder.glob("test-*.marshal")
    old = folder / "test-0123456789abcdef0123.marshal"
    old.write_bytes(b"x")
    _aged(old, 31)
    dead_writer = folder / ("%s.tmp-node-1" % current.name)
    dead_writer.write_bytes(b"x")
    _aged(dead_writer, 2)
    other_tag = folder / "test-other-0123456789abcdef0123.marshal"  # tag "test-other", not "test"
    other_tag.write_bytes(b"x")
    _aged(other_tag, 400)
    (tmp_path / "a.json").write_text('{"v": 22}')  # a new identity: a miss, so a store, so a prune
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 22}}
    assert not old.exists() and not dead_writer.exists()
    assert current.exists() and other_tag.exists()
    assert len(list(folder.glob("test-*.marshal"))) == 3  # the two identities of a.json, and the other tag


def test_prune_keeps_the_most_recently_used(tmp_path):
    from cudnn_doctor.parsed_cache import prune

    for i in range(6):
        f = tmp_path / ("fatbin-%020d.marshal" % i)
        f.write_bytes(b"x")
        _aged(f, 6 - i)  # file 5 is the newest
    removed = prune(tmp_path, "fatbin", keep=4)
    assert sorted(removed) == ["fatbin-%020d.marshal" % i for i in (0, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fatbin-%020d.marshal" % i for i in (2, 3, 4, 5)]


def test_a_hit_marks_an_old_file_as_used(tmp_path, cache):
    load, parses, folder = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    load({"a": tmp_path / "a.json"})
    [stored] = folder.glob("test-*.marshal")
    _aged(stored, 20)
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}} and len(parses) == 1
    import time

    assert os.stat(stored).st_mtime > time.time() - 3600


def test_remember_all_asks_the_cache_once_for_a_set_and_falls_back_to_each_file_when_one_changed(tmp_path,
                                                                                                 monkeypatch):
    """A framework's many libraries are one cache read; a changed one is read afresh, the others still come from
    their own entries; a read that raised is handed back and never remembered."""
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    from cudnn_doctor import parsed_cache

    computed = []

    def compute(values):
        def one(i):
            computed.append(i)
            if isinstance(values[i], Exception):
                raise values[i]
            return values[i]
        return one

    ids = [("a", 1), ("b", 1), ("c", 1)]
    assert parsed_cache.remember_all("t", ids, compute([10, None, 30])) == [10, None, 30] and computed == [0, 1, 2]
    reads = []
    real_cached = parsed_cache._cached
    monkeypatch.setattr(parsed_cache, "_cached", lambda *a: reads.append(a[1]) or real_cached(*a))
    assert parsed_cache.remember_all("t", ids, compute([0, 0, 0])) == [10, None, 30]
    assert computed == [0, 1, 2] and reads == ["t-set"]  # one read, nothing computed
    reads.clear()
    changed = [("a", 1), ("b", 2), ("c", 1)]
    assert parsed_cache.remember_all("t", changed, compute([0, 20, 0])) == [10, 20, 30]
    assert computed == [0, 1, 2, 1] and reads == ["t-set", "t", "t", "t"]
    failing = [("a", 1), ("b", 3), ("c", 1)]
    err = OSError("gone")
    got = parsed_cache.remember_all("t", failing, compute([0, err, 0]))
    assert got[0] == 10 and got[1] is err and got[2] == 30
    got = parsed_cache.remember_all("t", failing, compute([0, err, 0]))
    assert got[1] is err and computed.count(1) == 4  # the failed read was not remembered, alone or in the set
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", "off")
    assert parsed_cache.remember_all("t", ids, compute([7, 8, 9])) == [7, 8, 9]


def test_two_identities_that_share_a_file_name_take_turns_and_never_answer_for_each_other(tmp_path, cache,
                                                                                          monkeypatch):
    """The file name is a 32-bit checksum of the key; the key stored in the file decides a hit. Every name made
    the same: each identity still gets its own value, parsed again when the other one took the file."""
    from cudnn_doctor import parsed_cache

    monkeypatch.setattr(parsed_cache.zlib, "crc32", lambda data: 7)
    load, parses, folder = cache
    (tmp_path / "a.json").write_text('{"v": 1}')
    (tmp_path / "b.json").write_text('{"v": 2}')
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}}
    assert load({"a": tmp_path / "b.json"}) == {"a": {"v": 2}}
    assert load({"a": tmp_path / "b.json"}) == {"a": {"v": 2}} and len(parses) == 2  # b's now: a hit
    assert load({"a": tmp_path / "a.json"}) == {"a": {"v": 1}} and len(parses) == 3  # a again: parsed, not b's
    assert [p.name for p in folder.glob("test-*.marshal")] == ["test-00000007.marshal"]
