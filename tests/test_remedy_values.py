"""Fixes as values: a Finding carries a Fix; plain strings still work; renderers say the same line and add structure."""
from __future__ import annotations

import io

from rich.console import Console

from cudnn_doctor.model import Facts, Finding, Fix, Report, Severity
from cudnn_doctor.remedies import advice, ld_conf_fix, or_else, run, say, then
from cudnn_doctor.render.github import annotations
from cudnn_doctor.render.human import render_human
from cudnn_doctor.render.json_report import report_json


def test_a_plain_string_fix_is_wrapped_and_a_fix_value_becomes_the_remedy():
    old = Finding(id="CD999", severity=Severity.WARNING, title="t", fix="do the thing")
    assert old.fix == "do the thing" and old.remedy == Fix(text="do the thing")
    new = Finding(id="CD999", severity=Severity.WARNING, title="t", fix=run("sudo ldconfig"))
    assert new.fix == "sudo ldconfig" and new.remedy.commands == ["sudo ldconfig"] and new.remedy.root
    assert Finding(id="CD999", severity=Severity.INFO, title="t").remedy is None


def test_a_fix_still_reads_as_its_line_for_rule_code_written_before_fixes_were_values():
    fix = run("sudo ldconfig")
    assert "%s!" % fix == "sudo ldconfig!" and "ldconfig" in fix and fix[0].upper() + fix[1:] == "Sudo ldconfig"
    assert fix.startswith("sudo") and (fix + " now").commands == ["sudo ldconfig"]


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
    return Report(facts=Facts(), findings=[Finding(id="CD404", severity=Severity.WARNING, title="copied", fix=fix)])


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
    assert "Fix: %s%%0A$ cd /usr/lib%%0A$ sudo ln -sf" % line in annotations(report)
