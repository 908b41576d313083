"""Rollback never destroys files written after the install; the backups' space is reported and can be pruned."""
from __future__ import annotations

import errno
import json
import os

import pytest

import archive_factory as af
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


@pytest.fixture
def world(machine, tmp_path):
    return af.toolkit_and_tarball(machine, tmp_path)


def _files(home):
    """The toolkit as users see it (the state folder left out)."""
    return {k: v for k, v in af.snapshot(home).items() if not k.startswith(".cudnn-doctor")}


def _install(world, archive=None):
    result = af.invoke("install", archive or world["archive"], "--cuda-home", world["home"], "--no-smoke", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _like_dpkg(path, data):
    """A package manager's write: a new file renamed over the name (new inode)."""
    tmp = str(path) + ".dpkg-new"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _refused_rollback(world, expect):
    before = af.snapshot(world["home"])
    result = af.invoke("rollback", "--cuda-home", world["home"])
    assert result.exit_code == 1, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.count("\n") == 0 and line.startswith("cudnn-doctor: error: ") and "Traceback" not in line
    assert expect in line and "--force" in line and "set-aside" in line and "fix:" in line
    assert af.snapshot(world["home"]) == before  # nothing touched, history entry kept
    return line


def test_rollback_refuses_when_a_package_manager_replaced_an_installed_library(world):
    _install(world)
    lib = world["home"] / "lib64" / "libcudnn_ops.so.9.1.0"
    _like_dpkg(lib, b"\x7fELF a newer libcudnn_ops from apt")
    line = _refused_rollback(world, str(lib))
    assert "changed after cuDNN 9.1.0 was installed" in line


def test_rollback_refuses_when_a_file_was_overwritten_in_place(world):
    _install(world)
    header = world["home"] / "include" / "cudnn_version.h"
    ino = os.stat(header).st_ino
    with open(header, "r+b") as fh:  # like `cp new.h cudnn_version.h`: same inode, new bytes
        fh.truncate(0)
        fh.write(b"/* hand-copied 9.2 header */\n")
    assert os.stat(header).st_ino == ino
    _refused_rollback(world, "cudnn_version.h")


def test_rollback_refuses_when_a_link_was_retargeted(world):
    _install(world)
    link = world["home"] / "lib64" / "libcudnn.so"
    os.unlink(link)
    os.symlink("libcudnn.so.9.0.0", link)
    _refused_rollback(world, "was a link to libcudnn.so.9, now a link to libcudnn.so.9.0.0")


def test_rollback_refuses_when_a_file_appeared_where_one_was_retired(world):
    doc = _install(world)
    retired = next(f["dest"] for f in doc["plan"]["files"] if f["action"] == "retire")
    with open(retired, "wb") as fh:
        fh.write(b"written by someone else after the install")
    _refused_rollback(world, retired)


def test_force_sets_changed_files_aside_and_restores_the_rest(world):
    before = _files(world["home"])
    _install(world)
    lib = world["home"] / "lib64" / "libcudnn_ops.so.9.1.0"
    _like_dpkg(lib, b"newer bytes nobody may lose")
    result = af.invoke("rollback", "--cuda-home", world["home"], "--force", "--json")
    assert result.exit_code == 0, result.stderr
    moved = json.loads(result.stdout)["rolled_back"]["set_aside"]
    assert [m["path"] for m in moved] == [str(lib)]
    kept = moved[0]["moved_to"]
    assert "/.cudnn-doctor/set-aside/" in kept and kept.endswith("lib64/libcudnn_ops.so.9.1.0")
    with open(kept, "rb") as fh:
        assert fh.read() == b"newer bytes nobody may lose"
    assert _files(world["home"]) == before
    # The set-aside folder survives later runs (trash is emptied, set-aside never is).
    _install(world)
    assert os.path.exists(kept)


def test_a_deleted_installed_file_does_not_block_rollback(world):
    before = _files(world["home"])
    _install(world)
    os.unlink(world["home"] / "lib64" / "libcudnn_adv.so.9.1.0")
    assert af.invoke("rollback", "--cuda-home", world["home"]).exit_code == 0
    assert _files(world["home"]) == before


def test_journal_records_what_each_install_placed(world):
    doc = _install(world)
    journal = json.loads(open(os.path.join(doc["history_entry"], "journal.json")).read())
    placed = {os.path.basename(op["rel"]): op["placed"] for op in journal["ops"] if op["action"] != "retire"}
    st = os.stat(world["home"] / "lib64" / "libcudnn.so.9.1.0")
    assert placed["libcudnn.so.9.1.0"] == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}
    assert placed["libcudnn.so.9"] == {"link": "libcudnn.so.9.1.0"}


def test_copied_backups_still_roll_back_in_order(world, monkeypatch):
    """Backups kept as copies (another file system) come back with new inodes; the older record follows them."""
    def no_links(*args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_links)
    original = _files(world["home"])
    _install(world)
    after_first = _files(world["home"])
    _install(world, af.make("linux-xz", world["tmp"] / "dl2", version="9.14.0", build="64"))
    for expected in (after_first, original):
        result = af.invoke("rollback", "--cuda-home", world["home"])
        assert result.exit_code == 0, result.stderr
        assert _files(world["home"]) == expected


def test_interrupted_install_is_still_undone_without_checks(world):
    before = af.snapshot(world["home"])
    proc = af.run_cli("install", world["archive"], "--cuda-home", world["home"], "--no-smoke",
                      env={"CUDNN_DOCTOR_TEST_CRASH_AT": "after-place-4"})
    assert proc.returncode != 0
    _like_dpkg(world["home"] / "lib64" / "libcudnn.so.9.1.0", b"changed while interrupted")  # no record: undone
    proc = af.run_cli("rollback", "--cuda-home", world["home"])
    assert proc.returncode == 0 and "Repaired" in proc.stdout, proc.stderr
    assert af.snapshot(world["home"]) == before


# --- the space the history holds ---------------------------------------------------------------


def test_install_reports_the_space_its_backup_holds(world):
    replaced = sum(os.lstat(world["home"] / "lib64" / n).st_size for n in os.listdir(world["home"] / "lib64")
                   if n.startswith("libcudnn") and not os.path.islink(world["home"] / "lib64" / n))
    replaced += sum(os.lstat(world["home"] / "include" / n).st_size for n in os.listdir(world["home"] / "include")
                    if n.startswith("cudnn"))
    result = af.invoke("install", world["archive"], "--cuda-home", world["home"], "--no-smoke")
    assert result.exit_code == 0, result.stderr
    assert "Backup: " in result.stdout and "rollback --cuda-home %s --prune 1" % world["home"] in result.stdout
    newer = af.make("linux-xz", world["tmp"] / "dl2", version="9.14.0", build="64")  # the same one again is a no-op
    doc = json.loads(af.invoke("install", newer, "--cuda-home", world["home"], "--no-smoke", "--json").stdout)
    assert doc["backup"]["entries"] == 2 and doc["backup"]["bytes"] > 0
    first = json.loads(open(os.path.join(os.path.dirname(doc["history_entry"]),
                                         sorted(os.listdir(os.path.dirname(doc["history_entry"])))[0],
                                         "journal.json")).read())
    assert first["cudnn_version"] == "9.1.0"
    assert doc["backup"]["total_bytes"] >= replaced


def test_prune_keeps_the_newest_installs_undoable(world):
    _install(world)
    after_first = _files(world["home"])
    _install(world, af.make("linux-xz", world["tmp"] / "dl2", version="9.14.0", build="64"))
    after_second = _files(world["home"])
    result = af.invoke("rollback", "--cuda-home", world["home"], "--prune", "1")
    assert result.exit_code == 0, result.stderr
    assert "Pruned 1 history entry" in result.stdout and "dropped cuDNN 9.1.0" in result.stdout
    assert _files(world["home"]) == after_second  # pruning never touches installed files
    assert len(os.listdir(world["home"] / ".cudnn-doctor" / "history")) == 1
    assert af.invoke("rollback", "--cuda-home", world["home"]).exit_code == 0
    assert _files(world["home"]) == after_first
    again = af.invoke("rollback", "--cuda-home", world["home"])
    assert again.exit_code == 0 and "Nothing to roll back" in again.stdout and len(again.stdout.splitlines()) == 1


def test_prune_zero_drops_every_backup(world):
    _install(world)
    installed = _files(world["home"])
    doc = json.loads(af.invoke("rollback", "--cuda-home", world["home"], "--prune", "0", "--json").stdout)
    assert doc["kept"] == 0 and len(doc["pruned"]) == 1 and doc["pruned"][0]["backup_bytes"] > 0
    assert _files(world["home"]) == installed
    assert not (world["home"] / ".cudnn-doctor").exists()  # nothing left to keep
    assert af.invoke("rollback", "--cuda-home", world["home"], "--prune", "-1").exit_code == 2
