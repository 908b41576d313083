"""The suite's own cache folder, set before anything is collected, and a guard on where knowledge is read from.

A developer who ran `cudnn-doctor update` has ~/.cache/cudnn-doctor/knowledge.json (and wheels.json); a test that read
it would judge against knowledge the goldens were not written from. tests/conftest.py calls redirect() when it is
imported, so every test module, every in-process run and every child cudnn-doctor starts with XDG_CACHE_HOME at an
empty folder of this session. Guard (a pytest plugin) hooks the knowledge loader's reads: a test that read
knowledge.json, wheels.json or the compat files from anywhere but the shipped compat/ folder, tests/ or its own
temporary folders errors at teardown naming the test and the path, and the session fails listing them; a read while a
module is collected fails that module. `python -m pytest -p hermetic` installs both in a session of its own (the
guard's own test runs one so).
"""
from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest

TESTS = Path(__file__).resolve().parent
_SESSION: List[Path] = []  # this process's cache folder, made once
_ITEM: List[Optional[pytest.Item]] = [None]  # the test running now (None while modules are collected)


def redirect() -> Path:
    """Point the package's cache (XDG_CACHE_HOME, and the parse cache inside it) at an empty folder of this process."""
    if not _SESSION:
        _SESSION.append(Path(tempfile.mkdtemp(prefix="cudnn-doctor-tests-xdg-")))
    os.environ["XDG_CACHE_HOME"] = str(_SESSION[0])
    os.environ.pop("CUDNN_DOCTOR_CACHE_DIR", None)  # a developer's own parse-cache folder stays theirs
    return _SESSION[0]


def cache_home() -> Path:
    return redirect()


def _redirected() -> None:
    from cudnn_doctor.knowledge.load import updated_path

    if not _SESSION or os.environ.get("XDG_CACHE_HOME") != str(_SESSION[0]):
        raise RuntimeError("knowledge asked for before tests/conftest.py redirected the cache (hermetic.redirect)")
    if updated_path().exists():
        raise RuntimeError("the suite's own cache folder holds %s: a test wrote it there" % updated_path())


@functools.lru_cache(maxsize=1)
def shipped_compat() -> Any:
    """The shipped knowledge (compat/), for parameters drawn at collection: refuses to load before the redirect, so a
    user's `cudnn-doctor update` copy can never be the one read."""
    _redirected()
    from cudnn_doctor.knowledge import load_compat

    compat = load_compat()
    assert compat.data["derived"].get("origin") == "shipped", compat.data["derived"].get("origin")
    return compat


def fetches_only_when_slow(module: Any, *names: str) -> None:
    """Wrap the helpers that download (pip, apt-get) or use what they downloaded: called by a test of the quick tier
    (not marked slow, tests/conftest.py) or while a module is collected, they raise, naming the test. The quick tier
    then needs no network and no warm test cache; a hit in a developer's cache does not hide a fresh clone's download."""
    for name in names:
        def wrapper(*args: Any, _fn: Callable[..., Any] = getattr(module, name), **kwargs: Any) -> Any:
            item = _ITEM[0]
            if item is None or item.get_closest_marker("slow") is None:
                raise RuntimeError("%s calls %s.%s, which downloads (or reads what was downloaded): mark it slow "
                                   "(tests/conftest.py _SLOW_*, or the realdata marker) or use data recorded in "
                                   "tests/data" % (item.nodeid if item else "a module being collected",
                                                   module.__name__, _fn.__name__))
            return _fn(*args, **kwargs)
        setattr(module, name, functools.wraps(getattr(module, name))(wrapper))


class Guard:
    """Records every knowledge file the loader reads, by the test (or module being collected) that read it."""

    def __init__(self) -> None:
        from cudnn_doctor.knowledge.load import compat_dir

        self.allowed: List[Path] = [compat_dir().resolve(), TESTS]
        self.current = "session start"
        self.collecting = False
        self.reads: List[Tuple[str, Path]] = []  # outside the allowed folders, not yet reported
        self.found: List[str] = []  # every one, for the session's end
        self._hook()

    def _hook(self) -> None:
        from cudnn_doctor.knowledge import load, wheel_index

        def watched(fn: Callable[..., Any], arg: bool) -> Callable[..., Any]:
            @functools.wraps(fn)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                got = fn(*args, **kwargs)
                self.saw(Path(args[0]) if arg else Path(got))
                return got
            return wrapper

        # Each is looked up at call time (module globals, or a function-local import): what a user's cache, a
        # monkeypatched folder or an installed copy would be read through.
        load.read_updated = watched(load.read_updated, True)
        load.compat_dir = watched(load.compat_dir, False)
        wheel_index.updated_wheels_path = watched(wheel_index.updated_wheels_path, False)
        wheel_index.shipped_path = watched(wheel_index.shipped_path, False)

    def saw(self, path: Path) -> None:
        if not path.exists():
            return  # nothing was read: a missing cache copy is the shipped knowledge
        real = path.resolve()
        if any(real == a or a in real.parents for a in self.allowed):
            return
        self.reads.append((self.current, path))
        self.found.append("%s read %s" % (self.current, path))
        if self.collecting:
            raise RuntimeError("%s loads knowledge from %s while it is collected: read it inside a test or through "
                               "hermetic.shipped_compat()" % (self.current, path))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        factory = getattr(session.config, "_tmp_path_factory", None)
        if factory is not None:  # every test's own temporary folders (tmp_path) are under the base
            self.allowed.append(factory.getbasetemp().resolve())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector):  # type: ignore[no-untyped-def]
        self.current, self.collecting = "collecting %s" % collector.nodeid, isinstance(collector, pytest.Module)
        yield
        self.current, self.collecting = "between tests", False

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item):  # type: ignore[no-untyped-def]
        self.current, _ITEM[0] = item.nodeid, item
        redirect()  # what a module or an earlier test set by hand does not reach this test
        yield
        self.current, _ITEM[0] = "between tests", None

    @pytest.hookimpl(trylast=True)  # after the fixtures' own teardown (monkeypatch's undo included)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        _forget_updated_knowledge()
        reads, self.reads[:] = list(self.reads), []
        if reads:
            pytest.fail("read knowledge from outside compat/, tests/ and its own temporary folders (a user's cache?):"
                        "\n  " + "\n  ".join("%s: %s" % (who, path) for who, path in reads), pytrace=False)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        leftover = cache_home() / "cudnn-doctor" / "knowledge.json"
        if leftover.exists():  # a child cudnn-doctor would have read it: the hooks above see only this process
            self.found.append("a test wrote %s into the suite's cache folder" % leftover)
        if self.found and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.found:
            terminalreporter.section("knowledge read from outside the shipped and test folders")
            for line in self.found:
                terminalreporter.write_line(line)


def _forget_updated_knowledge() -> None:
    """A test that loaded an updated copy (its own XDG_CACHE_HOME) leaves it in the per-process caches: the next test
    must start from the shipped knowledge again."""
    from cudnn_doctor.knowledge import load_compat, wheel_index

    info = load_compat.cache_info()
    if info.currsize and load_compat().data.get("derived", {}).get("origin") != "shipped":
        load_compat.cache_clear()
    if wheel_index._LOADED and wheel_index._LOADED[0].origin not in ("shipped", "none"):
        wheel_index._LOADED.clear()


def install(config: pytest.Config) -> Optional[Guard]:
    """The redirect and the guard, once per session (tests/conftest.py's pytest_configure, or `-p hermetic`)."""
    redirect()
    if config.pluginmanager.has_plugin("knowledge-guard"):
        return None
    guard = Guard()
    config.pluginmanager.register(guard, "knowledge-guard")
    return guard


def uninstall() -> None:
    if _SESSION:
        shutil.rmtree(_SESSION[0], ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    install(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    uninstall()
