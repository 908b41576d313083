"""Fixes as values: a Finding carries a Fix (never a string); renderers say the same line and add structure."""
from __future__ import annotations

import dataclasses
import io

import pytest

from rich.console import Console

from cudnn_doctor.model import Facts, Finding, Severity
from cudnn_doctor.results import Report
from cudnn_doctor.remedies import advice, ld_conf_fix, noted, or_else, run, say, then
from cudnn_doctor.remedies.shells import command_fix, powershell_quote
from cudnn_doctor.render.github import annotation_commands
from cudnn_doctor.render.human import render_human
from cudnn_doctor.render.json_report import report_json

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")


def test_a_finding_takes_its_remedy_as_a_fix_value_and_derives_the_line():
    new = Finding(id="CD999", severity=Severity.WARNING, title="t", remedy=run("sudo ldconfig"))
    assert new.fix == "sudo ldconfig" and new.remedy.commands == ["sudo ldconfig"] and new.remedy.root
    assert new.remedy.shell == "sh"
    bare = Finding(id="CD999", severity=Severity.INFO, title="t")
    assert bare.remedy is None and bare.fix == ""
    with pytest.raises(TypeError):
        Finding(id="CD999", severity=Severity.WARNING, title="t", remedy="do the thing")
    with pytest.raises(TypeError):
        Finding(id="CD999", severity=Severity.WARNING, title="t", fix="do the thing")


def test_a_fix_is_a_plain_frozen_value_not_a_string():
    fix = run("sudo ldconfig")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fix.text = "other"  # type: ignore[misc]
    for imitation in ("__add__", "__radd__", "__getitem__", "__contains__", "startswith", "upper"):
        assert not hasattr(fix, imitation), imitation
    with pytest.raises(TypeError):
        fix + " now"  # type: ignore[operator]
    assert noted(fix, " now").text == "sudo ldconfig now" and noted(fix, " now").commands == ["sudo ldconfig"]


def test_each_shell_runs_its_commands_its_own_way():
    assert run("a", "b").text == "a && b"
    ps = command_fix(["Copy-Item a b", "Remove-Item c"], shell="powershell")
    assert ps.text == "Copy-Item a b; Remove-Item c" and ps.shell == "powershell" and not ps.root
    assert command_fix(["copy a b", "del c"], shell="cmd").text == "copy a b && del c"
    assert powershell_quote("it's") == "'it''s'"


def test_composed_fixes_keep_their_commands_in_order_and_say_the_alternative_in_words():
    register = ld_conf_fix("/opt/cudnn/lib")
    assert register.writes == ["/etc/ld.so.conf.d/cudnn-doctor-opt-cudnn-lib.conf"]
    assert register.text == ("echo /opt/cudnn/lib | sudo tee /etc/ld.so.conf.d/cudnn-doctor-opt-cudnn-lib.conf "
                             "> /dev/null && sudo ldconfig")
    both = then(run("pip uninstall -y torch"), say("install %s", run("pip install torch")), joint=" && ")
    assert both.commands == ["pip uninstall -y torch", "pip install torch"] and not both.root
    alt = or_else(run("unset X"), "export X=0")
    assert alt.text == "unset X   (or export X=0)" and alt.commands == ["unset X"] and alt.manual == "export X=0"
    assert advice("buy a GPU").commands == [] and advice("buy a GPU").shell == ""


def _report() -> Report:
    fix = or_else(run("cd /usr/lib", "sudo ln -sf libcudnn.so.9.1.0 libcudnn.so.9", "sudo ldconfig"),
                  "reinstall the package")
    return Report(facts=Facts(), findings=[Finding(id="CD404", severity=Severity.WARNING, title="copied",
                                                   remedy=fix)])


def test_renderers_say_the_same_line_and_add_the_structure():
    report = _report()
    line = report.findings[0].fix
    out = io.StringIO()
    render_human(report, Console(file=out, width=300, color_system=None), quiet=1)
    assert "Fix: " + line in out.getvalue()
    [doc] = report_json(report, 0)["findings"]
    assert doc["fix"] == line and doc["remedy"]["text"] == line
    assert doc["remedy"]["commands"][1] == "sudo ln -sf libcudnn.so.9.1.0 libcudnn.so.9" and doc["remedy"]["root"]
    # GitHub: the same line, then each command on its own line to copy.
    assert "Fix: %s%%0A$ cd /usr/lib%%0A$ sudo ln -sf" % line in annotation_commands(report)


def test_header_mismatch_fix_keeps_the_unset_commands_and_says_the_other_way():
    from cudnn_doctor.remedies.leftovers import header_mismatch_fix

    unset = run("unset LD_LIBRARY_PATH")
    fix = header_mismatch_fix(unset, None, "sudo cudnn-doctor install --version 9.1.0", "/usr/include/cudnn.h", "9.1.0")
    assert fix.commands == ["unset LD_LIBRARY_PATH"]
    assert fix.text == "unset LD_LIBRARY_PATH   (or bring the headers to 9.1.0: sudo cudnn-doctor install --version 9.1.0)"
    assert header_mismatch_fix(unset, None, None, "/usr/include/cudnn.h", "9.1.0").text.endswith(
        "(or remove the header no library matches: sudo rm -f /usr/include/cudnn.h)")
    assert header_mismatch_fix(unset, "/opt/cudnn/lib", None, "/usr/include/cudnn.h", "9.1.0") is unset
    assert header_mismatch_fix(None, None, None, "/usr/include/cudnn.h", "9.1.0").text == "sudo rm -f /usr/include/cudnn.h"
