"""fix --undo in a shell where the environment fix changed is on PATH but not activated (no VIRTUAL_ENV): fix found
it from its errors' site, and undo finds the same one by its journal (realworld --fix-command, draws 303-14, 303-18:
undo said "which environment?")."""
from __future__ import annotations

import os

from cudnn_doctor.fixing.apply import STATE, journaled_on_path


def test_the_first_environment_on_path_with_a_fix_journal_is_found(tmp_path):
    plain, fixed = tmp_path / "plain", tmp_path / "fixed"
    for prefix in (plain, fixed):
        (prefix / "bin").mkdir(parents=True)
    (fixed / STATE).mkdir(parents=True)
    path = os.pathsep.join([str(plain / "bin"), "", str(fixed / "bin"), "/usr/bin"])
    assert journaled_on_path({"PATH": path}) == str(fixed)
    assert journaled_on_path({"PATH": str(plain / "bin")}) is None
    assert journaled_on_path({}) is None
