"""Crash safety, rollback history, locking: the previous cuDNN survives kills, failures and races."""
from __future__ import annotations

import json
import os
import signal
import time

import pytest

import archive_factory as af
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


@pytest.fixture
def world(machine, tmp_path):
    return af.toolkit_and_tarball(machine, tmp_path)


def _header_version(home):
    text = (home / "include" / "cudnn_version.h").read_text()
    return ".".join(line.split()[-1] for line in text.splitlines()
                    if line.split()[1:2] in (["CUDNN_MAJOR"], ["CUDNN_MINOR"], ["CUDNN_PATCHLEVEL"]))


def _install_killed_at(world, point):
    """An install that SIGKILLs itself at `point` (one of the transaction's crash points)."""
    proc = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke",
                      env={"CUDNN_DOCTOR_TEST_CRASH_AT": point})
    assert proc.returncode == -signal.SIGKILL, (proc.stdout, proc.stderr)


@pytest.mark.parametrize("point", ["staged-3", "after-journal", "after-backup-1", "after-backup-3",
                                   "after-place-1", "after-place-9", "after-place-20", "before-commit"])
def test_killed_install_is_undone_by_the_next_rollback(world, point):
    before = af.snapshot(world["home"])
    _install_killed_at(world, point)
    assert os.path.isdir(world["home"] / ".cudnn-doctor" / "txn")
    proc = af.run_cli("rollback", "--cuda-home", world["home"])
    assert proc.returncode == 0, proc.stderr
    assert "Repaired" in proc.stdout
    assert af.snapshot(world["home"]) == before


def test_killed_install_is_undone_by_the_next_install_which_then_succeeds(world):
    before = af.snapshot(world["home"])
    _install_killed_at(world, "after-place-5")
    proc = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke")
    assert proc.returncode == 0, proc.stderr
    assert "Repaired first: undid an interrupted install of cuDNN 9.1.0" in proc.stdout
    assert _header_version(world["home"]) == "9.1.0"
    assert len(os.listdir(world["home"] / ".cudnn-doctor" / "history")) == 1
    assert af.run_cli("rollback", "--cuda-home", world["home"]).returncode == 0
    assert af.snapshot(world["home"]) == before


def test_kill_after_the_commit_mark_keeps_the_install(world):
    before = af.snapshot(world["home"])
    _install_killed_at(world, "after-commit-mark")
    assert _header_version(world["home"]) == "9.1.0"
    proc = af.run_cli("rollback", "--cuda-home", world["home"])  # first repairs: records the finished install
    assert proc.returncode == 0 and "finished recording" in proc.stdout
    assert _header_version(world["home"]) == "9.1.0"
    assert af.run_cli("rollback", "--cuda-home", world["home"]).returncode == 0
    assert af.snapshot(world["home"]) == before


def test_killed_rollback_is_finished_by_the_next_run(world):
    before = af.snapshot(world["home"])
    assert af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke").returncode == 0
    proc = af.run_cli("rollback", "--cuda-home", world["home"], env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-restore-7"})
    assert proc.returncode == -signal.SIGKILL
    proc = af.run_cli("rollback", "--cuda-home", world["home"])
    assert proc.returncode == 0 and "finished an interrupted rollback" in proc.stdout
    assert af.snapshot(world["home"]) == before


def test_two_installs_then_two_rollbacks(world):
    original = af.snapshot(world["home"])
    assert af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke").exit_code == 0
    after_first = af.snapshot(world["home"])
    newer = af.make("linux-xz", world["tmp"] / "dl2", version="9.14.0", build="64")
    assert af.invoke("install", newer, "--cuda-home", world["home"], "--no-smoke").exit_code == 0
    assert _header_version(world["home"]) == "9.14.0"
    first = af.invoke("rollback", "--cuda-home", world["home"])
    assert first.exit_code == 0 and "left to roll back: 1" in first.stdout
    assert af.snapshot(world["home"]) == after_first
    assert af.invoke("rollback", "--cuda-home", world["home"]).exit_code == 0
    assert af.snapshot(world["home"]) == original
    third = af.invoke("rollback", "--cuda-home", world["home"])
    assert third.exit_code == 0 and third.stdout.strip().startswith("Nothing to roll back in") \
        and len(third.stdout.strip().splitlines()) == 1 and not third.stderr


def test_rollback_restores_modes_links_and_bytes(world):
    m, home = world["machine"], world["home"]
    rel = str(home.relative_to(m.root))
    os.chmod(home / "include" / "cudnn_version.h", 0o600)  # odd modes must come back as they were
    os.chmod(home / "lib64", 0o700)
    m.link(rel + "/lib64/libcudnn_weird.so", "libcudnn.so.9.0.0")
    before = af.snapshot(home)
    assert af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke").exit_code == 0
    assert os.stat(home / "lib64").st_mode & 0o777 == 0o755  # a+rx while installed (failure D5)
    assert af.invoke("rollback", "--cuda-home", home).exit_code == 0
    assert af.snapshot(home) == before


def test_failed_load_check_after_install_undoes_it(world, monkeypatch):
    from cudnn_doctor.install import Refusal, Request, run_install
    from cudnn_doctor.install.verify import load_cudnn

    before = af.snapshot(world["home"])
    calls = []

    def load(lib, search_dir):
        calls.append(lib)
        result = load_cudnn(lib, search_dir)
        if len(calls) == 2:  # the installed copy: pretend the loader picked up something else
            result = {"loaded": False, "error": "libcudnn_graph.so.9: cannot open shared object file"}
        return result

    req = Request(source=str(world["archive"]), cuda_home=str(world["home"]), smoke=False)
    with pytest.raises(Refusal) as info:
        run_install(req, load=load)
    assert "failed its load check" in str(info.value) and "undone" in str(info.value)
    assert af.snapshot(world["home"]) == before


def _install_holding_the_lock(world, seconds):
    """An install started in the background that sleeps `seconds` once it holds the lock; returns when the lock
    file names its pid (or after 30 s)."""
    first = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke",
                       env={"CUDNN_DOCTOR_TEST_SLEEP_AT": "after-lock:%d" % seconds}, wait=False)
    lock = world["home"] / ".cudnn-doctor" / "lock"
    deadline = time.time() + 30
    while not (lock.exists() and lock.read_text().startswith("pid")) and time.time() < deadline:
        time.sleep(0.05)
    return first


def test_second_concurrent_install_fails_fast_and_the_first_completes(world):
    before = af.snapshot(world["home"])
    first = _install_holding_the_lock(world, seconds=3)
    second = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke")
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert second.returncode == 1
    assert second.stderr.count("\n") == 1 and "another cudnn-doctor install" in second.stderr
    assert "pid %d" % first.pid in second.stderr and "--lock-wait" in second.stderr
    assert len(os.listdir(world["home"] / ".cudnn-doctor" / "history")) == 1
    assert _header_version(world["home"]) == "9.1.0"
    assert af.run_cli("rollback", "--cuda-home", world["home"]).returncode == 0
    assert af.snapshot(world["home"]) == before


def test_second_install_with_lock_wait_runs_after_the_first(world):
    before = af.snapshot(world["home"])
    first = _install_holding_the_lock(world, seconds=2)
    second = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke", "--lock-wait", "60")
    first.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    # The second ran after the first had finished: it found the same files in place and changed nothing.
    assert "already installed" in second.stdout, second.stdout
    assert len(os.listdir(world["home"] / ".cudnn-doctor" / "history")) == 1
    assert af.run_cli("rollback", "--cuda-home", world["home"]).returncode == 0
    assert af.snapshot(world["home"]) == before


def test_journal_is_written_before_anything_changes(world):
    proc = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke",
                      env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-journal"})
    assert proc.returncode == -signal.SIGKILL
    journal = json.loads((world["home"] / ".cudnn-doctor" / "txn" / "journal.json").read_text())
    assert journal["status"] == "applying" and journal["cudnn_version"] == "9.1.0"
    actions = {op["action"] for op in journal["ops"]}
    assert actions == {"new", "replace", "retire"}
    assert _header_version(world["home"]) == "9.0.0"  # nothing applied yet


def test_dry_run_mentions_an_interrupted_install(world):
    af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke",
               env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-backup-2"})
    result = af.invoke("install", world["archive"], "--cuda-home", world["home"], "--dry-run")
    assert "unfinished install" in result.stdout


def test_ldconfig_decision_is_pure_and_conservative():
    from cudnn_doctor.install.verify import should_refresh_loader_cache as decide

    system = ["/usr/local/cuda-12.4/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu", "/lib"]
    assert decide("/usr/lib/x86_64-linux-gnu", 0, system, "linux", "/tmp") is True
    assert decide("/usr/lib/x86_64-linux-gnu", 1000, system, "linux", "/tmp") is False  # not root
    assert decide("/opt/cudnn/lib", 0, system, "linux", "/tmp") is False  # not a loader folder
    assert decide("/tmp/pytest-1/usr/lib", 0, system + ["/tmp/pytest-1/usr/lib"], "linux", "/tmp") is False
    assert decide("/usr/lib/x86_64-linux-gnu", 0, system, "darwin", "/tmp") is False


def test_loader_dirs_are_read_like_the_probes_read_them(tmp_path):
    """One ld.so.conf reader (probes.loader): includes followed, hwcap lines and `dir=type` suffixes handled."""
    from cudnn_doctor.host import Host
    from cudnn_doctor.install.verify import loader_dirs

    (tmp_path / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (tmp_path / "etc" / "ld.so.conf").write_text("include ld.so.conf.d/*.conf\n# comment\nhwcap 0 nosegneg\n")
    (tmp_path / "etc" / "ld.so.conf.d" / "cuda.conf").write_text("/usr/local/cuda/targets/x86_64-linux/lib\n"
                                                               "/opt/old/lib=libc6\n")
    found = loader_dirs(Host(str(tmp_path)))
    assert {"/usr/local/cuda/targets/x86_64-linux/lib", "/opt/old/lib", "/usr/lib"} <= found
    assert not any("hwcap" in d or "=" in d for d in found)


def test_force_keeps_an_install_whose_load_check_fails_and_says_so(world):
    from cudnn_doctor.render.install_human import result_lines as _result_lines
    from cudnn_doctor.install import Request, run_install
    from cudnn_doctor.install.verify import load_cudnn

    calls = []

    def load(lib, search_dir):
        calls.append(lib)
        return load_cudnn(lib, search_dir) if len(calls) == 1 else {"loaded": True, "version": 90000}

    req = Request(source=str(world["archive"]), cuda_home=str(world["home"]), smoke=False, force=True)
    report = run_install(req, load=load)
    assert report.installed and report.verify["ok"] is False
    assert _header_version(world["home"]) == "9.1.0"
    assert any("kept only because of --force" in line for line in _result_lines(report))


# --- what an OS error part-way says about the target ------------------------------------------------


def _failing_moves(monkeypatch, first_bad, last_bad=None):
    """transaction._move raising ENOSPC from call ``first_bad`` (to ``last_bad``), like a disk filling up."""
    import errno

    from cudnn_doctor.install import transaction

    real, calls = transaction._move, []

    def move(src, dst):
        calls.append(dst)
        if len(calls) >= first_bad and (last_bad is None or len(calls) <= last_bad):
            raise OSError(errno.ENOSPC, "No space left on device", dst)
        real(src, dst)

    monkeypatch.setattr(transaction, "_move", move)


def _one_line_failure(result, what="install failed"):
    assert result.exit_code == 1, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and line.startswith("cudnn-doctor: error: " + what)
    return line


def test_os_error_while_applying_is_undone_and_says_so(world, monkeypatch):
    before = af.snapshot(world["home"])
    _failing_moves(monkeypatch, 5, 5)
    line = _one_line_failure(af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke"))
    assert "No space left" in line and "left as it was (the journal undid every change)" in line
    assert af.snapshot(world["home"]) == before


def test_os_error_while_undoing_says_the_target_is_part_way_and_rollback_repairs_it(world, monkeypatch):
    before = af.snapshot(world["home"])
    _failing_moves(monkeypatch, 5)  # the undo's own moves fail too
    line = _one_line_failure(af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke"))
    assert "left as it was" not in line and "part-way" in line
    assert "cudnn-doctor rollback --cuda-home %s" % world["home"] in line
    monkeypatch.undo()
    result = af.invoke("rollback", "--cuda-home", world["home"])
    assert result.exit_code == 0 and "Repaired" in result.stdout, result.stderr
    assert af.snapshot(world["home"]) == before


def test_os_error_after_the_commit_says_the_install_stands(world, monkeypatch):
    import errno

    from cudnn_doctor.install import transaction

    before = af.snapshot(world["home"])

    def broken(*args):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(transaction, "_to_history", broken)
    line = _one_line_failure(af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke"),
                             what="recording the finished install failed")
    assert "left as it was" not in line and "9.1.0 is installed and verified" in line
    assert _header_version(world["home"]) == "9.1.0"
    monkeypatch.undo()
    result = af.invoke("rollback", "--cuda-home", world["home"])
    assert result.exit_code == 0 and "finished recording" in result.stdout, result.stderr
    assert af.invoke("rollback", "--cuda-home", world["home"]).exit_code == 0
    assert af.snapshot(world["home"]) == before


def test_os_error_while_repairing_an_earlier_install_says_so(world, monkeypatch):
    import errno

    from cudnn_doctor.install import transaction

    before = af.snapshot(world["home"])
    _install_killed_at(world, "after-place-5")

    def broken(*args):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(transaction, "undo", broken)
    line = _one_line_failure(af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke"))
    assert "Read-only" in line and "left as it was" not in line and "earlier interrupted install" in line
    assert "cudnn-doctor rollback --cuda-home" in line
    monkeypatch.undo()
    assert af.invoke("rollback", "--cuda-home", world["home"]).exit_code == 0
    assert af.snapshot(world["home"]) == before
