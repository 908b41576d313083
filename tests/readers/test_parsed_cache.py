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
