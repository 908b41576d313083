"""Nothing is left behind: `install` and `rollback` killed by SIGTERM or SIGHUP in a real process undo to the old
state and remove their staging files; a full disk during staging removes the staged copies; a prefix the install
created goes with its rollback."""
from __future__ import annotations

import errno
import json
import os
import signal
import time

import pytest

from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

import archive_factory as af
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

STATE = ".cudnn-doctor"


@pytest.fixture
def world(machine, tmp_path):
    return af.toolkit_and_tarball(machine, tmp_path)


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _staged_files(home):
    staging = home / STATE / "txn" / "staging"
    return [os.path.join(d, f) for d, _, files in os.walk(staging) for f in files]


def _killed_at(world, point, signum, *extra):
    """Starts a real `install` that pauses at ``point``, sends ``signum`` once it is there, and waits for it."""
    paused = world["tmp"] / ("paused-%s-%d" % (point, time.monotonic_ns()))
    proc = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke", *extra,
                      env={"CUDNN_DOCTOR_TEST_SLEEP_AT": "%s:60" % point, "CUDNN_DOCTOR_TEST_PAUSED_FILE": str(paused)},
                      wait=False)
    reached = _wait_for(paused.exists)
    if not reached:
        proc.kill()
    assert reached, "the install never reached %s: %s" % (point, proc.communicate()[1])
    time.sleep(0.1)  # from the marker to the sleep itself
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


@pytest.mark.parametrize("signum, point", [(signal.SIGTERM, "staged-3"), (signal.SIGHUP, "staged-3"),
                                           (signal.SIGTERM, "after-place-3")])
def test_a_signal_mid_install_undoes_it_and_leaves_no_staging(world, signum, point):
    before = af.snapshot(world["home"])
    code, out, err = _killed_at(world, point, signum)
    assert code == 128 + signum, err
    assert err.count("\n") == 1 and "interrupted by %s" % signal.Signals(signum).name in err
    assert "Traceback" not in err and "nothing was changed" in err
    assert not (world["home"] / STATE).exists()  # no staging folder, no journal, no lock
    assert af.snapshot(world["home"]) == before


def test_sigterm_mid_install_with_json_still_prints_an_envelope(world):
    code, out, err = _killed_at(world, "staged-2", signal.SIGTERM, "--json")
    assert code == 143 and json.loads(out)["exit_code"] == 143 and "SIGTERM" in json.loads(out)["error"]


def test_a_full_disk_while_staging_removes_the_staged_files(world, monkeypatch):
    """ENOSPC from the writer seam; the trash folder cannot be made either while the staged copies fill the disk."""
    from cudnn_doctor.install import journal, safety

    before = af.snapshot(world["home"])
    real_write, real_makedirs, written = safety.CountingWriter.write, os.makedirs, []

    def write(self, data):
        if len(written) >= 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(len(data))
        return real_write(self, data)

    def makedirs(path, *a, **k):
        if os.path.basename(path) == journal.TRASH and _staged_files(world["home"]):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        return real_makedirs(path, *a, **k)

    monkeypatch.setattr(safety.CountingWriter, "write", write)
    monkeypatch.setattr(journal.os, "makedirs", makedirs)
    result = af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke")
    assert result.exit_code == 1 and "is full" in result.stderr, result.stderr
    assert not (world["home"] / STATE).exists()
    assert af.snapshot(world["home"]) == before


def test_rollback_after_a_killed_install_removes_the_prefix_it_created(world, tmp_path):
    prefix = tmp_path / "new-prefix"
    proc = af.run_cli("install", world["archive"], "--prefix", prefix, "--no-smoke",
                      env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-place-3"})
    assert proc.returncode == -signal.SIGKILL and (prefix / STATE / "txn").is_dir()
    result = af.invoke("rollback", "--prefix", prefix)
    assert result.exit_code == 0, result.stderr
    assert "Removed the folder %s" % prefix in result.stdout
    assert not prefix.exists()


@pytest.mark.parametrize("point", ["staged-2", "after-place-3"])
def test_check_names_an_interrupted_install_with_rollback_as_its_fix(world, point, check_json):
    machine, home = world["machine"], world["home"]
    proc = af.run_cli("install", world["archive"], "--cuda-home", home, "--no-smoke",
                      env={"CUDNN_DOCTOR_TEST_CRASH_AT": point})
    assert proc.returncode == -signal.SIGKILL
    code, doc = check_json(machine)
    [found] = [f for f in doc["findings"] if f["id"] == "CD411"]
    target = found["evidence"]["target"]  # the toolkit as check found it (/usr/local/cuda, a link to the 12.4 one)
    assert target in ("/usr/local/cuda", "/" + str(home.relative_to(machine.root)))
    assert found["evidence"]["path"] == target + "/.cudnn-doctor/txn"
    # Under --root the fix runs from outside the root, so it names the toolkit inside it.
    assert "cudnn-doctor rollback --cuda-home %s%s " % (machine.root, target) in found["fix"]
    assert found["evidence"]["status"] == ("staging" if point.startswith("staged") else "applying")
    result = af.invoke("rollback", "--cuda-home", home)  # the fix, run on this machine
    assert result.exit_code == 0, result.stderr
    assert not [f for f in check_json(machine)[1]["findings"] if f["id"] == "CD411"]


@given(after=st.integers(0, 40))
@budget(10)
def test_a_full_disk_at_any_write_leaves_nothing(tmp_path_factory, after):
    """ENOSPC from the writer seam after any number of writes: the target and its state folder are as before."""
    from unittest import mock

    from kit import FakeMachine

    from cudnn_doctor.install import Request, Refusal, run_install, safety

    m = FakeMachine(tmp_path_factory.mktemp("full") / "root")
    w = af.toolkit_and_tarball(m, m.root.parent)
    before = af.snapshot(w["home"])
    real_write, count = safety.CountingWriter.write, [0]

    def write(self, data):
        count[0] += 1
        if count[0] > after:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, data)

    with mock.patch.object(safety.CountingWriter, "write", write):
        try:
            run_install(Request(source=str(w["archive"]), cuda_home=str(w["home"]), smoke=False, check=False))
            installed = True
        except Refusal as refusal:
            assert "is full" in str(refusal)
            installed = False
    if not installed:
        assert af.snapshot(w["home"]) == before and not (w["home"] / STATE).exists()


def test_sigterm_mid_rollback_says_so_and_the_same_rollback_finishes_it(world):
    before = af.snapshot(world["home"])
    assert af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke").exit_code == 0
    proc = af.run_cli("rollback", "--cuda-home", world["home"], env={"CUDNN_DOCTOR_TEST_SLEEP_AT": "after-restore-3:60"},
                      wait=False)
    history = world["home"] / STATE / "history"

    def rolling_back():
        for entry in history.iterdir() if history.is_dir() else []:
            try:
                if json.loads((entry / "journal.json").read_text()).get("status") == "rolling-back":
                    return True
            except (OSError, ValueError):
                pass
        return False

    assert _wait_for(rolling_back)
    time.sleep(0.5)  # inside the hook's sleep after the third restore
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.count("\n") == 1 and "interrupted by SIGTERM" in err, err
    assert "run the same rollback again" in err
    result = af.invoke("rollback", "--cuda-home", world["home"])
    assert result.exit_code == 0 and "finished an interrupted rollback" in result.stdout, result.stderr
    assert af.snapshot(world["home"]) == {k: v for k, v in before.items()}


@given(signum=st.sampled_from([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]),
       point=st.sampled_from(["after-lock", "staged-1", "staged-3", "after-journal", "after-backup-2",
                              "after-place-1", "after-place-6"]))
@budget(6)
def test_any_signal_at_any_step_leaves_the_toolkit_as_it_was(tmp_path_factory, signum, point):
    from kit import FakeMachine

    m = FakeMachine(tmp_path_factory.mktemp("sig") / "root")
    w = af.toolkit_and_tarball(m, m.root.parent)
    before = af.snapshot(w["home"])
    code, out, err = _killed_at(w, point, signum)
    assert code == 128 + signum and "interrupted by %s" % signal.Signals(signum).name in err, err
    assert af.snapshot(w["home"]) == before and not (w["home"] / STATE).exists()
