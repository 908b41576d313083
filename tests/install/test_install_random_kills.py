"""install killed at random points through the whole run, then `rollback` or a new `install`: exact states only.

Points are numbered file operations (tests/kill_driver.py) from taking the lock to the end, including the journal
write and a real loader-cache refresh, plus kills after a random delay. After each kill the toolkit must hold the
old or the new cuDNN, or be part-way with a journal; `rollback` must then give back the old tree byte for byte,
and a new `install` the new one. The tally of states seen is printed at the end (`pytest -s` shows it too).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import archive_factory as af
import fuzz_support as fz
from kit import FakeMachine, have_gcc, ldconfig_available

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

DRIVER = Path(__file__).parent.parent / "kill_driver.py"
STATE = ".cudnn-doctor"
TALLY: Counter = Counter()


@pytest.fixture(scope="module", autouse=True)
def print_tally(request):
    yield
    if not TALLY:
        return
    lines = ["install random-kill tally (%s profile):" % fz.PROFILE]
    lines += ["  %-44s %d" % (key, n) for key, n in sorted(TALLY.items())]
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    for line in lines:
        (reporter.write_line if reporter else print)(line)
    out = os.environ.get("CUDNN_DOCTOR_KILL_TALLY")
    if out:
        with open(out, "a") as fh:
            fh.write("\n".join(lines) + "\n")


def _files(home: Path) -> dict:
    """The toolkit as users see it: every file, link and folder, bytes and modes (the state folder left out)."""
    return {k: v for k, v in af.snapshot(home).items() if not k.startswith(STATE)}


class World:
    """A machine root with a CUDA 12.4 toolkit holding the old cuDNN, and the archive of the new one."""

    def __init__(self, archive: Path, old=None) -> None:
        self.top = Path(tempfile.mkdtemp(prefix="cudnn-doctor-kill-"))
        self.machine = FakeMachine(self.top / "root")
        self.home = self.machine.p(self.machine.toolkit("12.4.1"))
        rel = str(self.home.relative_to(self.machine.root))
        (old or _fake_old)(self.machine, rel)
        # The loader-cache refresh the driver runs for real: this machine's ld.so.conf lists the toolkit's lib64.
        self.machine.file("/etc/ld.so.conf", rel + "/lib64\n")
        self.archive = archive
        self.before = af.snapshot(self.home)

    def run(self, kill_at: int = 0, log: Path = None, delay: float = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(af.REPO), CUDNN_DOCTOR_KILL_UNDER=str(self.machine.root),
                   CUDNN_DOCTOR_KILL_AT=str(kill_at), **{af.MACHINE_ENV: af.NO_MACHINE})
        if log is not None:
            env["CUDNN_DOCTOR_KILL_LOG"] = str(log)
        if ldconfig_available():
            env["CUDNN_DOCTOR_KILL_LDCONFIG"] = str(self.machine.root)
        cmd = [sys.executable, str(DRIVER), "install", str(self.archive), "--cuda-home", str(self.home), "--no-smoke"]
        proc = subprocess.Popen(cmd, env=env, cwd=str(af.REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        if delay is not None:
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=180)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def close(self) -> None:
        shutil.rmtree(self.top, ignore_errors=True)


def _fake_old(machine, rel):
    machine.cudnn("9.0.0", rel + "/lib64", rel + "/include", cuda=12040)


def _state(world: World, new_files: dict) -> str:
    files = _files(world.home)
    old = {k: v for k, v in world.before.items() if not k.startswith(STATE)}
    pending = os.path.isdir(world.home / STATE / "txn")
    name = "old" if files == old else "new" if files == new_files else "part-way"
    return name + (" + journal" if pending else "")


def _rollback_to_old(world: World) -> None:
    """`rollback` until nothing is left: the toolkit and its state folder exactly as before the first install."""
    for _ in range(3):
        result = af.invoke("rollback", "--cuda-home", world.home)
        assert "Traceback" not in result.stderr, result.stderr
        if result.exit_code == 0 and "Nothing to roll back" in result.stdout:
            break
        assert result.exit_code == 0, (result.stdout, result.stderr)
    assert af.snapshot(world.home) == world.before


def _kill_and_recover(archive, new_files, follow, kill_at=0, delay=None, old=None, label="") -> None:
    world = World(archive, old)
    try:
        proc = world.run(kill_at=kill_at, delay=delay)
        killed = proc.returncode == -signal.SIGKILL
        assert killed or proc.returncode == 0, (proc.returncode, proc.stderr)
        state = _state(world, new_files) if killed else "finished (not killed)"
        assert not state.startswith("part-way") or "journal" in state, "part-way without a journal: no repair"
        TALLY["after kill%s: %s" % (label, state)] += 1
        if follow == "install":
            result = af.invoke("install", archive, "--cuda-home", world.home, "--no-smoke")
            assert result.exit_code == 0, (result.stdout, result.stderr)
            assert _files(world.home) == new_files
            TALLY["then install: new, byte for byte"] += 1
        _rollback_to_old(world)
        TALLY["then rollback: old, byte for byte"] += 1
    finally:
        world.close()


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """The 9.1.0 archive, the new tree it installs, and the numbered operations of one whole run."""
    archive = af.make("linux-xz", tmp_path_factory.mktemp("dl"))
    return _reference(archive, tmp_path_factory.mktemp("log"))


def _reference(archive, logdir, old=None):
    world = World(archive, old)
    try:
        log = logdir / "ops.json"
        start = time.monotonic()
        proc = world.run(log=log)
        took = time.monotonic() - start
        assert proc.returncode == 0, proc.stderr
        new_files = _files(world.home)
        ops = json.loads(log.read_text())
    finally:
        world.close()
    marks = {}
    # Renames onto the toolkit's own files (new cuDNN files moving in): the middle one is mid-apply.
    moves = [i for i, (event, where) in enumerate(ops, 1) if event == "os.rename" and "/%s/" % STATE not in where]
    if moves:
        marks["apply-middle"] = moves[len(moves) // 2]
    for i, (event, where) in enumerate(ops, 1):
        if "journal.json" in where:
            marks.setdefault("journal-" + event, i)
        if event == "cudnn-doctor-kill-test":
            marks[where] = i
    return {"archive": archive, "new": new_files, "ops": len(ops), "marks": marks, "took": took}


def test_reference_run_passes_the_journal_and_the_loader_cache(fake):
    assert fake["ops"] > 50
    assert {"journal-open", "journal-os.rename", "apply-middle"} <= set(fake["marks"])
    if ldconfig_available():
        assert {"ldconfig-start", "ldconfig-running", "ldconfig-done"} <= set(fake["marks"])


@pytest.mark.parametrize("mark, follow", [("journal-open", "rollback"), ("journal-open", "install"),
                                          ("journal-os.rename", "rollback"), ("journal-os.rename", "install"),
                                          ("apply-middle", "rollback"), ("apply-middle", "install"),
                                          ("ldconfig-start", "install"), ("ldconfig-running", "rollback"),
                                          ("ldconfig-done", "install")])
def test_kill_at_the_journal_write_and_the_loader_cache_refresh(fake, mark, follow):
    if mark not in fake["marks"]:
        pytest.skip("no %s point in this run (ldconfig needs root)" % mark)
    _kill_and_recover(fake["archive"], fake["new"], follow, kill_at=fake["marks"][mark], label=" at " + mark)


@fz.budget(8)
@given(where=st.floats(0, 1, exclude_max=True), follow=st.sampled_from(["rollback", "install"]))
def test_kill_at_a_random_file_operation(fake, where, follow):
    _kill_and_recover(fake["archive"], fake["new"], follow, kill_at=1 + int(where * fake["ops"]))


@fz.budget(3)
@given(where=st.floats(0, 1.2), follow=st.sampled_from(["rollback", "install"]))
def test_kill_after_a_random_delay(fake, where, follow):
    """Between numbered operations too: inside a write, an fsync, the loader's child, interpreter start."""
    _kill_and_recover(fake["archive"], fake["new"], follow, delay=where * fake["took"], label=" (delay)")


# --- NVIDIA's real files: cuDNN 9.1.0 installed over a real 8.9.7 copy ------------------------------------------


def _real_old(site: Path):
    """Places the real 8.9.7 wheel's libraries as NVIDIA's tarball lays them out (.so.8.9.7 plus links)."""
    def place(machine, rel):
        for so in sorted((site / "nvidia" / "cudnn" / "lib").glob("libcudnn*.so.8")):
            stem = so.name.split(".so.")[0]
            dest = machine.p("%s/lib64/%s.so.8.9.7" % (rel, stem))
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(so, dest)
            os.chmod(dest, 0o755)
            machine.link("%s/lib64/%s.so.8" % (rel, stem), "%s.so.8.9.7" % stem)
            machine.link("%s/lib64/%s.so" % (rel, stem), "%s.so.8" % stem)
        for header in sorted((site / "nvidia" / "cudnn" / "include").glob("*.h")):
            machine.file("%s/include/%s" % (rel, header.name), header.read_bytes())
    return place


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    import realdata

    new_site, old_site = realdata.real_wheel(*realdata.CUDNN9), realdata.real_wheel(*realdata.CUDNN8)
    if new_site is None or old_site is None:
        pytest.skip("the nvidia-cudnn-cu12 9.1.0.70 and 8.9.7.29 wheels are not available (offline?)")
    archive = af.repack_wheel_as_tarball(new_site, realdata.CACHE / "repacked", compression="")
    ref = _reference(archive, tmp_path_factory.mktemp("log"), old=_real_old(old_site))
    ref["old"] = _real_old(old_site)
    return ref


@pytest.mark.realdata
@fz.budget(1)
@given(where=st.floats(0, 1, exclude_max=True), follow=st.sampled_from(["rollback", "install"]))
def test_real_cudnn_killed_at_a_random_file_operation(real, where, follow):
    _kill_and_recover(real["archive"], real["new"], follow, kill_at=1 + int(where * real["ops"]), old=real["old"],
                      label=" (real 9.1.0 over 8.9.7)")


@pytest.mark.realdata
def test_real_cudnn_killed_during_the_loader_cache_refresh(real):
    if "ldconfig-running" not in real["marks"]:
        pytest.skip("ldconfig needs root")
    _kill_and_recover(real["archive"], real["new"], "rollback", kill_at=real["marks"]["ldconfig-running"],
                      old=real["old"], label=" (real 9.1.0 over 8.9.7) at ldconfig-running")
