"""Property-based fuzzing of `check`: damaged machine roots always give a valid report, in time, with a documented exit.

Most properties call the probes and rules in-process through the Host seam (fast); a smaller set runs the real
command in a fresh process. The FIFO and hung-read properties need `check --timeout` (issue 16 items 1-2).
"""
from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import fuzz_support as fz
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

DEADLINE_S = 10.0  # `check --timeout`'s default budget for a whole run (HELPERS.md contract)
CLI_SLACK_S = 20.0  # interpreter start and imports on a loaded 2-core CI machine


def _check_in_process(root, env):
    """collect_report + the JSON renderer + the exit-code rule, as `check --json` chains them."""
    from cudnn_doctor.commands.check_run import exit_code_for
    from cudnn_doctor.diagnose import collect_report
    from cudnn_doctor.render.envelope import dumps
    from cudnn_doctor.render.json_report import report_json

    from cudnn_doctor.runclock import RunClock

    start, clock = time.monotonic(), RunClock()
    report = collect_report(str(root), env=env)
    code = exit_code_for(report, strict=False)
    report.run = clock.finish(report.facts.host.hostname or "fuzz-node")  # as `check` stamps it
    text = dumps(report_json(report, code))
    return report, code, json.loads(text), text, time.monotonic() - start


def _assert_sound(root, report, code, doc, text, took):
    assert took < DEADLINE_S, "check took %.1f s on a damaged root" % took
    assert code in (0, 1, 4)
    fz.assert_report_contract(doc, code)
    # A probe or rule that raised is a traceback swallowed into a finding: on damaged input it is a bug.
    assert not report.facts.probe_errors, report.facts.probe_errors
    crashed = [f.title for f in report.findings if "could not run" in f.title]
    assert not crashed, crashed
    doc["facts"]["host"]["root"] = None  # the one place the doctor-side root belongs, besides:
    for f in doc["findings"]:  # fixes, typed on the doctor's machine: `ls -l`/`findmnt` (CD002/CD003), and every
        f["fix"] = f["remedy"] = None  # fix made of file commands points into the root (`ldconfig -r ROOT`)
    leaked = json.dumps(doc)
    at = leaked.find(str(root))
    assert at < 0, "a doctor-side path leaked into the report: ...%s..." % leaked[max(0, at - 200):at + 100]


@fz.budget(40)
@given(ops=st.lists(fz.damage(), min_size=1, max_size=6), ld_path=st.one_of(st.none(), fz.ld_library_path()))
@example(ops=[("conf_loop", True), ("conf_long", 1000, ["include /etc/ld.so.conf", fz.MA, "relative"])],
         ld_path="::.:..")
@example(ops=[("text", fz.TK + "/version.json", "[" * 100000)], ld_path=None)
@example(ops=[("text", "/usr/include/x86_64-linux-gnu/cudnn_version.h",
               "#define CUDNN_MAJOR %s\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n" % ("9" * 5000))],
         ld_path=None)
@example(ops=[("ldcache", b"glibc-ld.so.cache1.1")], ld_path=None)
def test_damaged_root_gives_a_valid_report(ops, ld_path):
    root = fz.fresh_root()
    try:
        for op in ops:
            fz.apply(root, op)
        env = {"PATH": "/usr/bin:/bin"}
        if ld_path is not None:
            env["LD_LIBRARY_PATH"] = ld_path
        _assert_sound(root, *_check_in_process(root, env))
    finally:
        fz.discard_root(root)


@fz.budget(4)
@given(ops=st.lists(fz.damage(), min_size=1, max_size=4), ld_path=st.one_of(st.none(), fz.ld_library_path()))
def test_damaged_root_through_the_real_command(ops, ld_path):
    root = fz.fresh_root()
    try:
        for op in ops:
            fz.apply(root, op)
        env = {} if ld_path is None else {"LD_LIBRARY_PATH": ld_path}
        proc, took = fz.run_check_cli(root, env=env, timeout=DEADLINE_S + CLI_SLACK_S)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1, 4), (proc.returncode, proc.stderr)
        doc = json.loads(proc.stdout)  # the only thing on stdout
        fz.assert_report_contract(doc, proc.returncode)
        assert took < DEADLINE_S + CLI_SLACK_S
    finally:
        fz.discard_root(root)


# --- FIFOs and hung reads: need the run's deadline (`check --timeout`) --------------------------------------

needs_timeout = pytest.mark.skipif(not fz.have_timeout_option(), reason=fz.NO_TIMEOUT_REASON)
TIMEOUT_S = 2


def _assert_names(doc, inside, ids):
    """Some finding with one of ``ids`` names ``inside`` (the path as seen in the root)."""
    named = [f for f in doc["findings"] if f["id"] in ids and inside in f["title"] + f["detail"] + f["fix"]]
    assert named, "no %s finding names %s: %s" % ("/".join(ids), inside,
                                                   [(f["id"], f["title"]) for f in doc["findings"]])


@needs_timeout
@pytest.mark.parametrize("inside", fz.HUNG_FILES)
def test_fifo_in_place_of_a_file_is_named_not_read(inside):
    root = fz.fresh_root()
    try:
        fz.apply(root, ("fifo", inside))
        proc, took = fz.run_check_cli(root, args=["--timeout", str(TIMEOUT_S)], timeout=TIMEOUT_S + CLI_SLACK_S)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1, 4), (proc.returncode, proc.stderr)
        doc = json.loads(proc.stdout)
        fz.assert_report_contract(doc, proc.returncode)
        _assert_names(doc, inside, ("CD002", "CD003"))
    finally:
        fz.discard_root(root)


@needs_timeout
@pytest.mark.parametrize("inside", fz.HUNG_FILES)
def test_hung_read_is_abandoned_at_the_deadline(inside):
    """A regular file whose open never returns (a dead NFS server): the run still ends, says where it stalled."""
    root = fz.fresh_root()
    try:
        shim = os.path.join(os.path.dirname(os.path.dirname(__file__)), "hang_shim.py")
        proc, took = fz.run_check_cli(root, args=["--timeout", str(TIMEOUT_S)], timeout=TIMEOUT_S + CLI_SLACK_S,
                                      env={"CUDNN_DOCTOR_TEST_HANG": str(root) + inside}, wrapper=shim)
        assert "Traceback" not in proc.stderr, proc.stderr
        doc = json.loads(proc.stdout)
        fz.assert_report_contract(doc, proc.returncode)
        assert doc.get("incomplete") is True
        assert proc.returncode in (1, 4) and (proc.returncode == 4 or doc["verdict"] == "error")
        _assert_names(doc, inside, ("CD002",))
    finally:
        fz.discard_root(root)


@needs_timeout
@fz.budget(3)
@given(ops=st.lists(fz.damage(fifo=True), min_size=1, max_size=4))
def test_damaged_root_with_fifos_ends_within_the_deadline(ops):
    root = fz.fresh_root()
    try:
        for op in ops:
            fz.apply(root, op)
        proc, took = fz.run_check_cli(root, args=["--timeout", str(TIMEOUT_S)], timeout=TIMEOUT_S + CLI_SLACK_S)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1, 4), (proc.returncode, proc.stderr)
        fz.assert_report_contract(json.loads(proc.stdout), proc.returncode)
        assert took < TIMEOUT_S + CLI_SLACK_S
    finally:
        fz.discard_root(root)
