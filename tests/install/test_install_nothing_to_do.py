"""Doing nothing says so and succeeds: installing the archive that is already in place changes nothing (no
"30 replaced", no backup, no history entry), and `rollback` with nothing to undo exits 0 with one line."""
from __future__ import annotations

import json
import os

import pytest

import archive_factory as af
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


@pytest.fixture
def world(machine, tmp_path):
    return af.toolkit_and_tarball(machine, tmp_path)


def _history(home):
    folder = home / ".cudnn-doctor" / "history"
    return sorted(os.listdir(folder)) if folder.is_dir() else []


def test_the_same_archive_again_changes_nothing_and_says_so(world):
    home = world["home"]
    assert af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke").exit_code == 0
    after, history = af.snapshot(home), _history(home)
    again = af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke")
    assert again.exit_code == 0, again.stderr
    assert "already installed" in again.stdout and "nothing was changed" in again.stdout
    assert "replaced" not in again.stdout and "Backup:" not in again.stdout
    assert af.snapshot(home) == after and _history(home) == history
    doc = json.loads(af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke", "--json").stdout)
    assert doc["installed"] is True and doc["plan"]["unchanged"] is True and doc["history_entry"] is None
    assert doc["verify"].get("ok") is not False and doc["backup"] == {}
    # One rollback undoes the one real install; the no-ops left nothing to undo.
    assert af.invoke("rollback", "--cuda-home", home).exit_code == 0
    assert _history(home) == []


def test_a_changed_file_is_installed_again(world):
    home = world["home"]
    assert af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke").exit_code == 0
    header = home / "include" / "cudnn_version.h"
    header.write_text(header.read_text() + "\n/* edited */\n")
    again = af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke")
    assert again.exit_code == 0 and "already installed" not in again.stdout and "replaced" in again.stdout
    assert len(_history(home)) == 2


@pytest.mark.parametrize("installed_first", [False, True], ids=["never-installed", "all-rolled-back"])
def test_rollback_with_nothing_to_undo_exits_0_with_one_line(world, installed_first):
    home = world["home"]
    if installed_first:
        assert af.invoke("install", world["archive"], "--cuda-home", home, "--no-smoke").exit_code == 0
        assert af.invoke("rollback", "--cuda-home", home).exit_code == 0
    result = af.invoke("rollback", "--cuda-home", home)
    assert result.exit_code == 0 and not result.stderr
    assert result.stdout.startswith("Nothing to roll back in ") and len(result.stdout.strip().splitlines()) == 1
    doc = json.loads(af.invoke("rollback", "--cuda-home", home, "--json").stdout)
    assert doc["exit_code"] == 0 and doc["nothing"] and doc["rolled_back"] is None
