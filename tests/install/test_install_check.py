"""After an install, `check` judges the result: the findings about the installed copy and the overall verdict."""
from __future__ import annotations

import json
import os

import pytest

import archive_factory as af
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

TOOLKIT = "/usr/local/cuda-12.4"


@pytest.fixture
def compat_ok(monkeypatch):
    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict",
                        lambda cudnn, built, toolkit: (True, "accepted by the test"))


def test_summary_keeps_the_findings_about_the_installed_copy(machine):
    """The reporting logic on a fake machine: a copied soname in the toolkit, another copy elsewhere."""
    from cudnn_doctor.diagnose import collect_report
    from cudnn_doctor.install.checkup import summarise

    machine.toolkit("12.4.1")
    machine.cudnn("9.1.0", TOOLKIT + "/lib64", TOOLKIT + "/include", cuda=12040)
    os.unlink(machine.p(TOOLKIT + "/lib64/libcudnn.so.9"))  # copied without cp -P: CD404 about the install
    machine.lib(TOOLKIT + "/lib64/libcudnn.so.9", "cudnn", soname="libcudnn.so.9", CUDNN_V=90100, CUDART_V=12040)
    machine.cudnn("8.9.7", "/opt/other/lib", "/opt/other/include", cuda=12020, header_version="8.9.6")
    machine.ld_conf("other.conf", ["/opt/other/lib"])
    report = collect_report(root=str(machine.root), env=dict(machine.env, CUDA_HOME=TOOLKIT))
    summary = summarise(report, [TOOLKIT, TOOLKIT + "/lib64", TOOLKIT + "/include"])
    assert summary["ran"] and summary["verdict"] == report.verdict
    mine = [f for f in summary["findings"] if f["about_install"]]
    assert "CD404" in {f["id"] for f in mine}
    assert all(TOOLKIT + "/lib64" not in f["title"] for f in summary["findings"] if not f["about_install"])
    listed = len(summary["findings"]) + summary["other_findings"]
    assert listed == len(report.findings)
    assert summary["other_findings"] >= 1  # e.g. no driver: counted, not listed
    assert not any(f["id"].startswith("CD1") for f in summary["findings"])


def test_a_path_that_only_starts_like_the_target_is_not_about_it():
    from cudnn_doctor.install.checkup import _mentions

    class F:
        evidence = {"directory": "/opt/cudnn2/lib"}

    assert not _mentions(F, ["/opt/cudnn"]) and _mentions(F, ["/opt/cudnn2/lib"])


def test_install_reports_the_check_of_the_result(machine, tmp_path, compat_ok):
    from cudnn_doctor.render.install_human import result_lines as _result_lines
    from cudnn_doctor.install import Request, run_install

    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    req = Request(source=str(archive), cuda_home=str(home), smoke=False, machine_root=str(machine.root),
                  env=dict(machine.env))
    report = run_install(req)
    check = report.check
    assert check["ran"] is True and check["seen_with"] == {"CUDA_HOME": TOOLKIT}
    assert check["verdict"] in ("ok", "warning", "error")
    assert not any(f["id"] == "CD401" for f in check["findings"])  # the installed copy was found
    lines = _result_lines(report)
    assert any(line.startswith("Check: verdict %s" % check["verdict"]) and "CUDA_HOME=%s" % TOOLKIT in line
               for line in lines)


def test_install_json_carries_the_check(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--json",
                       env={af.MACHINE_ENV: str(machine.root)})
    assert result.exit_code == 0, result.stderr
    check = json.loads(result.stdout)["check"]
    assert check["ran"] is True and isinstance(check["verdict"], str) and isinstance(check["findings"], list)
    for f in check["findings"]:
        assert set(f) == {"id", "severity", "title", "fix", "about_install"}


def test_a_crashing_check_is_a_note_and_never_fails_the_install(machine, tmp_path, compat_ok, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("probe exploded")

    monkeypatch.setattr("cudnn_doctor.diagnose.collect_report", boom)
    home = machine.p(machine.toolkit("12.4.1"))
    result = af.invoke("install", af.make("linux-xz", tmp_path / "dl"), "--cuda-home", home, "--no-smoke",
                       env={af.MACHINE_ENV: str(machine.root)})
    assert result.exit_code == 0, result.stderr
    assert "Check: the check could not run (RuntimeError: probe exploded)" in result.stdout
    assert (home / "lib64" / "libcudnn.so.9.1.0").is_file()


def test_no_check_skips_it_and_a_target_outside_the_machine_is_not_judged(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    doc = json.loads(af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--no-check", "--json").stdout)
    assert doc["check"] == {"ran": False, "note": "skipped (--no-check)"}
    doc = json.loads(af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--json",
                               env={af.MACHINE_ENV: str(tmp_path / "elsewhere")}).stdout)
    assert doc["check"]["ran"] is False and "outside the machine root" in doc["check"]["note"]


def test_a_prefix_is_judged_as_used_through_ld_library_path(machine, compat_ok, tmp_path):
    from cudnn_doctor.install import Request, run_install

    prefix = machine.p("/opt/cudnn")
    machine.mkdir("/opt")
    req = Request(source=str(af.make("wheel", tmp_path / "dl")), prefix=str(prefix), smoke=False,
                  machine_root=str(machine.root), env=dict(machine.env))
    check = run_install(req).check
    assert check["ran"] and check["seen_with"] == {"LD_LIBRARY_PATH": "/opt/cudnn/lib"}
    assert not any(f["id"] == "CD401" for f in check["findings"])
