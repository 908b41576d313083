"""`check --format prometheus`: node_exporter textfile metrics, written atomically, accepted by the real promtool."""
from __future__ import annotations

import os
import subprocess

import pytest
from clirunner import CliRunner
from engines import apt_tool
from kit import Gpu

from cudnn_doctor.cli import app

MA = "/usr/lib/x86_64-linux-gnu"


@pytest.fixture
def broken_node(machine):
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()], kernel_module="575.57.08")
    machine.ld_conf("x86_64-linux-gnu.conf", [MA])
    machine.cudnn("9.14.0", MA, "/usr/include/x86_64-linux-gnu", cuda=13000, header_name="cudnn_version_v9.h")
    machine.file("/etc/hostname", "gpu007\n")
    return machine


def metrics_of(machine, tmp_path, *args):
    out = tmp_path / "textfile" / "cudnn_doctor.prom"
    out.parent.mkdir(exist_ok=True)
    result = CliRunner().invoke(app, ["check", "--format", "prometheus", "--root", str(machine.root),
                                      "--output-file", str(out), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result, out


def test_metrics_content_and_atomic_file(broken_node, tmp_path):
    result, out = metrics_of(broken_node, tmp_path)
    assert result.exit_code == 1 and result.stdout == ""  # the exit code is check's; nothing else on stdout
    text = out.read_text()
    assert 'cudnn_doctor_findings{severity="error"} ' in text
    assert 'cudnn_doctor_finding{id="CD104",severity="error"} 1' in text
    assert 'cudnn_doctor_verdict{verdict="error"} 1' in text
    info = next(line for line in text.splitlines() if line.startswith("cudnn_doctor_build_info{"))
    assert 'driver="580.95.05"' in info and 'cudnn="9.14.0"' in info and info.endswith(" 1")
    assert "cudnn_doctor_check_duration_seconds " in text and "cudnn_doctor_last_run_timestamp_seconds " in text
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert os.listdir(out.parent) == ["cudnn_doctor.prom"]  # no temporary file left behind


def test_unwritable_output_file_is_a_usage_error(broken_node, tmp_path):
    result = CliRunner().invoke(app, ["check", "--format", "prometheus", "--root", str(broken_node.root),
                                      "--output-file", str(tmp_path / "missing" / "x.prom")])
    assert result.exit_code == 2 and "--output-file" in result.stderr


def test_output_file_needs_a_machine_format(broken_node, tmp_path):
    result = CliRunner().invoke(app, ["check", "--root", str(broken_node.root), "-o", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--output-file needs" in result.stderr


def test_promtool_accepts_the_metrics(broken_node, tmp_path):
    promtool, why = apt_tool("promtool", ["prometheus"])
    if promtool is None:
        pytest.skip(why)
    _, out = metrics_of(broken_node, tmp_path)
    proc = subprocess.run([promtool, "check", "metrics"], stdin=out.open("rb"), capture_output=True, text=True)
    print("$ promtool check metrics < %s\n%s%s(exit %d)" % (out.name, proc.stdout, proc.stderr, proc.returncode))
    assert proc.returncode == 0 and proc.stdout.strip() == "" and proc.stderr.strip() == "", proc.stdout + proc.stderr
