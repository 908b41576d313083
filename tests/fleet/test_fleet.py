"""`cudnn-doctor fleet`: merging node reports, naming the bad ones, groups with outliers, findings, the JSON contract."""
from __future__ import annotations

import io
import json
import os
from datetime import datetime, timezone

import pytest
from clirunner import CliRunner
from fleet_factory import fleet_reports, stamp, variant_reports

from cudnn_doctor.cli import app
from cudnn_doctor.fleet.hostlist import compress, expand

FLEET_ENVELOPE = {"schema_version": str, "tool": dict, "command": str, "exit_code": int, "nodes": int,
                  "verdicts": dict, "hosts_by_verdict": dict, "reports": dict, "tool_versions": dict,
                  "groups": list, "findings": list}
GROUP = {"fingerprint": str, "count": int, "hosts": str, "gpu_class": str, "majority": bool, "differs": list,
         "summary": dict, "fields": dict}
FINDING = {"id": str, "severity": str, "count": int, "hosts": str, "title": str, "fix": str}


@pytest.fixture(scope="module")
def templates():
    return variant_reports()


def run_fleet(*args, stdin=None):
    result = CliRunner().invoke(app, ["fleet", *args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def fleet_json(*args, stdin=None):
    result = run_fleet(*args, "--json", stdin=stdin)
    return result.exit_code, json.loads(result.stdout)


def write(folder, name, doc):
    path = folder / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def node(templates, variant, host, minute=0):
    import random

    return stamp(templates[variant], host, datetime(2026, 11, 23, 6, minute, tzinfo=timezone.utc), random.Random(host))


@pytest.mark.parametrize("names, text", [
    (["gpu001", "gpu002", "gpu003", "gpu004", "gpu007"], "gpu[001-004,007]"),
    (["gpu007"], "gpu007"),
    (["a9", "a10", "login"], "a[9-10],login"),
    (["n01", "n1"], "n01,n1"),
    (["rack1-n03", "rack1-n04", "rack2-n03"], "rack1-n[03-04],rack2-n03"),
])
def test_hostlist_compresses_like_slurm_and_expands_back(names, text):
    assert compress(names) == text
    assert sorted(expand(text)) == sorted(names)


def test_groups_outliers_and_findings(tmp_path, templates):
    for i in range(1, 9):
        write(tmp_path, "gpu%03d.json" % i, node(templates, "h100x8", "gpu%03d" % i))
    write(tmp_path, "gpu009.json", node(templates, "old-module", "gpu009"))
    write(tmp_path, "gpu010.json", node(templates, "h100x7", "gpu010"))
    (tmp_path / "a100").mkdir()
    for i in range(1, 4):
        write(tmp_path / "a100", "a%d.json" % i, node(templates, "a100x8", "a%d" % i))
    code, doc = fleet_json(str(tmp_path))
    assert code == 1  # gpu009 has an error (CD104)
    assert doc["nodes"] == 13 and doc["verdicts"]["error"] == 1 and sum(doc["verdicts"].values()) == 13
    assert doc["hosts_by_verdict"]["error"] == "gpu009"
    groups = {g["hosts"]: g for g in doc["groups"]}
    assert groups["gpu[001-008]"]["majority"] and groups["gpu[001-008]"]["differs"] == []
    assert groups["gpu009"]["differs"] == ["kernel_module"] and not groups["gpu009"]["majority"]
    assert groups["gpu010"]["differs"] == ["gpus"]  # one GPU fewer: an outlier of its class, not a new class
    assert groups["a[1-3]"]["majority"] and groups["a[1-3]"]["gpu_class"] == "NVIDIA A100-SXM4-80GB"
    assert groups["gpu009"]["summary"]["driver"] == "580.159.04 (module 575.57.08)"
    findings = {f["id"]: f for f in doc["findings"]}
    assert findings["CD104"]["count"] == 1 and findings["CD104"]["hosts"] == "gpu009"
    assert findings["CD104"]["severity"] == "error" and findings["CD104"]["fix"]
    for f in doc["findings"]:  # which other findings the real rules give these machines is their business
        assert len(expand(f["hosts"])) == f["count"]
    assert doc["findings"][0]["id"] == "CD104"  # errors first

    text = run_fleet(str(tmp_path), "--no-color").stdout
    assert "13 nodes: " in text and ", 1 error" in text and "error: gpu009" in text
    assert "* 580.159.04" in text  # the outlier's differing cell is marked
    assert "Findings across the fleet" in text and "CD104" in text


def test_bad_reports_are_counted_and_named_never_a_crash(tmp_path, templates):
    good = node(templates, "h100x8", "gpu001", minute=5)
    write(tmp_path, "gpu001.json", good)
    write(tmp_path, "gpu001-old.json", node(templates, "old-module", "gpu001", minute=1))  # older: dropped
    write(tmp_path, "cut.json", json.dumps(node(templates, "h100x8", "gpu002"))[:5000])
    write(tmp_path, "garbage.json", "this is not json\n")
    write(tmp_path, "empty.json", "")
    write(tmp_path, "v2.json", dict(good, schema_version="2", host="gpu003"))
    old = {k: v for k, v in good.items() if k not in ("fingerprint", "host", "started_at")}
    write(tmp_path, "old.json", dict(old, tool={"name": "cudnn-doctor", "version": "0.0.9"}))
    write(tmp_path, "edited.json", old)  # this very version writes those fields: damaged, not old
    write(tmp_path, "odd-host.json", dict(good, host={"name": "h3"}, facts="x"))
    write(tmp_path, "matrix.json", {"schema_version": "1", "tool": {"name": "cudnn-doctor"}, "command": "matrix"})
    os.symlink(str(tmp_path / "gone"), str(tmp_path / "dangling.json"))
    code, doc = fleet_json(str(tmp_path))
    assert doc["nodes"] == 1 and doc["verdicts"]["error"] == 0  # the newest gpu001 report won, not the error one
    rejected = {k: [r["source"].rsplit("/", 1)[-1] for r in v] for k, v in doc["reports"]["rejected"].items()}
    assert rejected == {"unreadable": ["dangling.json", "garbage.json"], "truncated": ["cut.json", "empty.json"],
                        "other-schema": ["v2.json"], "old-tool": ["old.json"],
                        "not-a-report": ["edited.json", "matrix.json", "odd-host.json"]}
    [dup] = doc["reports"]["duplicated"]
    assert dup["host"] == "gpu001" and dup["source"].endswith("gpu001-old.json") and dup["kept"].endswith("gpu001.json")
    assert code == 0  # no node has an error; the bad reports only fail --strict
    assert fleet_json(str(tmp_path), "--strict")[0] == 1
    text = run_fleet(str(tmp_path), "--no-color").stdout
    assert "1 other-schema: " in text and "v2.json" in text and "1 duplicated" in text
    assert "{'name'" not in text  # a malformed host is named as such, never shown as a Python repr


def test_stale_reports_are_left_out_and_named(tmp_path, templates):
    write(tmp_path, "a.json", node(templates, "old-module", "gpu001"))
    fresh = node(templates, "h100x8", "gpu002")
    fresh["started_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    write(tmp_path, "b.json", fresh)
    code, doc = fleet_json(str(tmp_path), "--max-age", "1h")
    assert [s["host"] for s in doc["reports"]["stale"]] == ["gpu001"] and doc["reports"]["max_age_s"] == 3600
    assert doc["nodes"] == 1 and code == 0  # the stale error report no longer decides the exit code
    assert fleet_json(str(tmp_path), "--max-age", "1h", "--strict")[0] == 1


def test_stdin_one_per_line_or_concatenated(templates):
    docs = [doc for _, doc in fleet_reports(6, seed=3)]
    lines = "\n".join(json.dumps(d) for d in docs) + "\n{\"schema_version\": \"1\", \"tool\n"
    code, doc = fleet_json("-", stdin=lines)
    assert doc["nodes"] == 6 and [r["source"] for r in doc["reports"]["rejected"]["truncated"]] == ["<stdin>#7"]
    pretty = "".join(json.dumps(d, indent=2) for d in docs)
    assert fleet_json("-", stdin=pretty)[1]["nodes"] == 6
    bad_line = json.dumps(docs[0]) + "\nnot json\n" + json.dumps(docs[1]) + "\n"
    doc = fleet_json("-", stdin=bad_line)[1]
    assert doc["nodes"] == 2 and doc["reports"]["rejected"]["unreadable"][0]["source"] == "<stdin>#2"


def test_json_contract(tmp_path, templates):
    for host, doc in fleet_reports(30, seed=2):
        write(tmp_path, host + ".json", doc)
    code, doc = fleet_json(str(tmp_path))
    for key, typ in FLEET_ENVELOPE.items():
        assert isinstance(doc[key], typ), key
    assert doc["command"] == "fleet" and doc["schema_version"] == "1" and doc["exit_code"] == code
    assert set(doc["verdicts"]) == {"ok", "warning", "error"} and sum(doc["verdicts"].values()) == doc["nodes"] == 30
    assert set(doc["reports"]) >= {"used", "rejected", "duplicated", "stale", "max_age_s"}
    for g in doc["groups"]:
        for key, typ in GROUP.items():
            assert isinstance(g[key], typ), key
        assert set(g["summary"]) == {"driver", "gpu", "cuda", "cudnn", "frameworks", "kernel"}
    assert sum(g["count"] for g in doc["groups"]) == 30
    for f in doc["findings"]:
        for key, typ in FINDING.items():
            assert isinstance(f[key], typ), key
        assert len(expand(f["hosts"])) == f["count"]


@pytest.mark.parametrize("args, message", [
    (["--max-age", "soon"], "--max-age"),
    (["/nonexistent/reports"], "does not exist"),
    (["-", "-"], "once"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, args, message):
    result = run_fleet(*(args if args[0] != "--max-age" else [str(tmp_path), *args]), stdin="")
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_no_usable_report_exits_1(tmp_path):
    write(tmp_path, "x.json", "{")
    result = run_fleet(str(tmp_path), "--no-color")
    assert result.exit_code == 1 and "no usable report" in result.stderr


def test_fleet_reads_reports_only(tmp_path, templates, monkeypatch):
    """Nothing in fleet probes a machine: Host and the probes are never used."""
    from cudnn_doctor import host as host_mod

    def refuse(*a, **k):
        raise AssertionError("fleet built a Host")

    monkeypatch.setattr(host_mod.Host, "__init__", refuse)
    write(tmp_path, "a.json", node(templates, "h100x8", "gpu001"))
    assert fleet_json(str(tmp_path))[1]["nodes"] == 1
    assert io  # stdin path covered above


def test_quick_parse_of_check_output_equals_the_full_parse(tmp_path, templates):
    """The fast path cuts `facts` out of indent-2 reports; it must change nothing else."""
    from cudnn_doctor.fleet.load import quick_document
    from cudnn_doctor.render.envelope import dumps

    doc = node(templates, "old-module", "gpu001")
    doc["facts"]["searched"]["tricky"] = ['\n  "findings": [] "verdict": "ok"', "}\n  \"x\": 1"]
    quick = quick_document(dumps(doc).encode())
    assert quick == {k: v for k, v in doc.items() if k != "facts"}
    assert quick_document(json.dumps(doc).encode()) == doc  # compact: nothing to cut, parsed whole
    assert quick_document(dumps(doc).encode()[:-300]) is None  # cut off: the full parse names it truncated
    (tmp_path / "pretty").mkdir(), (tmp_path / "compact").mkdir()
    for host, d in fleet_reports(12, seed=5):
        (tmp_path / "pretty" / (host + ".json")).write_text(dumps(d) + "\n")
        (tmp_path / "compact" / (host + ".json")).write_text(json.dumps(d))
    a, b = fleet_json(str(tmp_path / "pretty"))[1], fleet_json(str(tmp_path / "compact"))[1]
    assert a == b


def test_fixes_are_printed_as_text_not_markup(tmp_path, templates):
    """A fix such as CD801's `capabilities [gpu]` must reach the terminal as written (rich would eat `[gpu]`)."""
    doc = node(templates, "h100x8", "gpu001")
    doc["findings"] = [{"id": "CD801", "severity": "error", "title": "No GPU visible",
                        "fix": "compose: devices with capabilities [gpu]", "detail": "", "evidence": {}}]
    doc["verdict"] = "error"
    write(tmp_path, "gpu001.json", doc)
    text = run_fleet(str(tmp_path), "--no-color").stdout
    assert "[gpu]" in " ".join(text.replace("│", " ").split())
