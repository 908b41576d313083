"""Two test runs sharing ~/.cache/cudnn-doctor-tests: each unpacked wheel is filled once, never replaced or deleted
under the other run (tests/realdata.py's cache_lock), even when the wheel is removed after unpacking."""
from __future__ import annotations

import multiprocessing
import time
import zipfile
from pathlib import Path

import realdata


def _unpack(target: str, wheel: str, queue) -> None:
    def fill(zf: zipfile.ZipFile, tmp: Path) -> None:
        zf.extractall(tmp)
        time.sleep(0.5)  # widen the window in which the other run would step in

    try:
        got = realdata.unpacked_wheel(Path(target), lambda: Path(wheel) if Path(wheel).exists() else None, fill,
                                      keep_wheel=False)
        queue.put(("ok", str(got), (Path(target) / "lib" / "libfake.so").read_text()))
    except Exception as exc:  # reported to the parent, which fails with it
        queue.put(("error", "%s: %s" % (type(exc).__name__, exc), ""))


def test_two_runs_unpacking_the_same_wheel_take_turns(tmp_path):
    wheel = tmp_path / "fake-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("lib/libfake.so", "payload")
    target = tmp_path / "cache" / "unpacked" / "fake-1.0"
    context = multiprocessing.get_context("spawn")  # two fresh interpreters, as two pytest runs would be
    queue = context.Queue()
    runs = [context.Process(target=_unpack, args=(str(target), str(wheel), queue)) for _ in range(2)]
    for run in runs:
        run.start()
    results = [queue.get(timeout=60) for _ in runs]
    for run in runs:
        run.join(60)
    assert results == [("ok", str(target), "payload")] * 2
    assert (target / ".complete").exists() and not wheel.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["fake-1.0", "fake-1.0.lock"]  # no stray tmp tree
