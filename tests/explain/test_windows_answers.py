"""A paste explain reads as Windows gets an answer written for Windows: no sudo, apt, ldconfig, LD_LIBRARY_PATH or
lib64 folder, and its commands are PowerShell's (the brief: every fix is built for its target). Drawn from every
real paste of the corpus, not from a list: 21 Windows answers said Linux words before this test (round 30)."""
from __future__ import annotations

import re

import explain_grading as grading

from cudnn_doctor.explain import explain
from cudnn_doctor.model import WINDOWS_SHELL

LINUX_ONLY = re.compile(r"\bsudo\b|\bapt(?:-get)?\b|\bldconfig\b|LD_LIBRARY_PATH|ubuntu-drivers|\blib64\b|\.so\b")


def test_windows_pastes_are_answered_for_windows():
    wrong, windows = [], 0
    for split in grading.SPLITS:
        for case in grading.cases(split):
            ex = explain(case["text"], check=False).explanation
            if ex.evidence is None or ex.evidence.platform != "windows" or ex.fix is None:
                continue
            windows += 1
            said = sorted(set(LINUX_ONLY.findall(ex.fix.text)))
            shells = {ex.fix.shell} - {"", WINDOWS_SHELL}
            if said or shells:
                wrong.append("%s: %s %s | %s" % (case["id"], said, sorted(shells), ex.fix.text[:160]))
    assert windows >= 100, windows  # the corpus holds that many: the platform reading still works
    assert wrong == [], "\n".join(wrong)
