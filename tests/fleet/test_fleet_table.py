"""fleet's terminal table: a cell marked as differing differs from the majority's text, nothing is cut in the
middle of a word, fixes are printed whole under the table, and a --root report's kernel reads as not recorded."""
from __future__ import annotations

import json
import random
from datetime import datetime, timezone

from facts_factory import gpu, real_machine
from fleet_factory import stamp

from cudnn_doctor.commands.check_run import exit_code_for
from cudnn_doctor.diagnose import collect_report
from cudnn_doctor.render.json_report import report_json


def _report(change=lambda f: None):
    facts = real_machine()
    facts.gpus = [gpu(i, uuid="GPU-%d" % i) for i in range(8)]
    change(facts)
    report = collect_report(facts=facts)
    doc = report_json(report, exit_code_for(report, False))
    for key in ("started_at", "duration_s", "host"):
        doc.pop(key)
    return doc


def _write(folder, host, template):
    doc = stamp(template, host, datetime(2026, 11, 23, 6, 0, tzinfo=timezone.utc), random.Random(host))
    (folder / (host + ".json")).write_text(json.dumps(doc))


def _run(folder, width="100", verbose=0, wide=False):
    """The fleet summary as a terminal `width` columns wide shows it."""
    import io
    import sys

    from rich.console import Console

    from cudnn_doctor.fleet.load import load
    from cudnn_doctor.fleet.merge import merge
    from cudnn_doctor.fleet.render import render_fleet

    nodes, rejected, catalogue = load([str(folder)], sys.stdin)
    out = io.StringIO()
    render_fleet(merge(nodes, rejected, catalogue), Console(file=out, width=int(width), color_system=None),
                 verbose=verbose, wide=wide)
    return out.getvalue()


def test_a_marked_cell_never_shows_the_majoritys_text(tmp_path):
    def driver_cuda(f):  # a field the Driver cell does not show by itself
        f.driver.cuda_version = "12.9"

    base, odd = _report(), _report(driver_cuda)
    for i in range(1, 5):
        _write(tmp_path, "gpu%03d" % i, base)
    _write(tmp_path, "gpu009", odd)
    text = _run(tmp_path, "200")
    table = text.split("Findings across the fleet", 1)[0]
    assert "* 580.159.04 (driver_cuda: 12.9)" in table, table
    assert table.count("driver_cuda") == 1  # only the outlier's cell, which the mark is on


def test_fixes_are_whole_lines_under_the_table_and_cells_are_not_cut(tmp_path):
    doc = _report()
    doc["findings"] = [{"id": "CD801", "severity": "error", "title": "No GPU visible", "detail": "", "evidence": {},
                        "fix": "sudo nvidia-ctk runtime configure --runtime=docker && see "
                               "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/"
                               "install-guide.html"}]
    doc["verdict"] = "error"
    _write(tmp_path, "gpu001", doc)
    text = _run(tmp_path, "60")
    fixes = text.split("\nFixes\n", 1)[1]
    assert "  CD801: " + doc["findings"][0]["fix"] in fixes.splitlines()
    table = text.split("\nFixes\n", 1)[0]
    assert "install-guide" not in table  # the fix is not squeezed into a table cell


def test_a_root_report_has_no_question_mark_kernel(tmp_path):
    def under_root(f):
        f.host.kernel_release = None
        f.host.root = "/mnt/image"

    _write(tmp_path, "img1", _report(under_root))
    text = _run(tmp_path, "250", verbose=1)
    assert "not recorded (x86_64)" in text and "? x86_64" not in text


def test_wide_keeps_every_cell_on_one_line(tmp_path):
    base = _report()
    for i in range(1, 3):
        _write(tmp_path, "gpu%03d" % i, base)
    narrow, wide = _run(tmp_path, "80"), _run(tmp_path, "80", wide=True)
    cell = "9.14.0 (system, CUDA 13.0), 9.19.0 (pip, CUDA 13.1)"
    assert not any(cell in line for line in narrow.splitlines())
    assert any(cell in line and "8x NVIDIA H100 80GB HBM3 (9.0)" in line for line in wide.splitlines())


def test_fleet_has_a_wide_switch():
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    assert "--wide" in CliRunner().invoke(app, ["fleet", "--help"], env={"COLUMNS": "120"}).output
