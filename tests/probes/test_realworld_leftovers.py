"""The real-world harness cleans up after runs that were killed (each leaves about 1 GB in the test cache)."""
from __future__ import annotations

import os
import subprocess

from realworld_run import remove_dead_runs


def test_a_killed_runs_work_folder_is_removed_by_the_next_run(tmp_path):
    """Only the folders of runs whose process is gone and that sat untouched for an hour go: this run's own, a live
    one's, a recent one's (another container's run sharing the cache) and others stay."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names no process now (pids are not reused this fast)
    for name in ("draws-%d" % gone.pid, "pytest-%d" % gone.pid, "draws-%d" % os.getpid(),
                 "pytest-%d" % os.getppid(), "draw-271128-5", "draws-x", "pytest-%d0" % gone.pid):
        (tmp_path / name).mkdir()
        (tmp_path / name / "lib.so").write_bytes(b"x")
        if name != "pytest-%d0" % gone.pid:  # that one is recent: it stays although no such process runs here
            os.utime(tmp_path / name, (1, 1))
    assert sorted(remove_dead_runs(tmp_path)) == sorted(["draws-%d" % gone.pid, "pytest-%d" % gone.pid])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["draws-%d" % os.getpid(), "pytest-%d" % os.getppid(), "draw-271128-5", "draws-x", "pytest-%d0" % gone.pid])
