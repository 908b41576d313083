"""`fleet` on hostile input: deep nesting, oversized reports, FIFOs in a folder, bytes of every kind; a bad report
is counted and named, the good ones are still merged."""
from __future__ import annotations

import io
import json
import os

import pytest
import archive_factory as af
from clirunner import CliRunner
from fleet_factory import fleet_reports
from fuzz_support import budget
from hypothesis import given
from hypothesis import strategies as st

from cudnn_doctor.cli import app
from cudnn_doctor.render.envelope import dumps

DEEP = "[" * 100_000 + "\n"


def fleet_json(*args, stdin=None):
    result = CliRunner().invoke(app, ["fleet", *args, "--json"], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def rejected_sources(doc):
    return {r["source"].rsplit("/", 1)[-1]: (kind, r["reason"])
            for kind, items in doc["reports"]["rejected"].items() for r in items}


@pytest.fixture(scope="module")
def reports():
    return [(host, dumps(doc) + "\n") for host, doc in fleet_reports(5, seed=7)]


def test_a_100k_deep_file_in_a_folder_is_named_and_the_rest_merged(tmp_path, reports):
    for host, text in reports:
        (tmp_path / ("%s.json" % host)).write_text(text)
    (tmp_path / "poison.json").write_text(DEEP)
    doc = fleet_json(str(tmp_path))
    assert doc["nodes"] == 5
    kind, reason = rejected_sources(doc)["poison.json"]
    assert kind == "unreadable" and "nested deeper" in reason


def test_a_100k_deep_document_on_stdin_does_not_hide_the_next_line(reports):
    compact = [json.dumps(json.loads(text)) for _, text in reports]
    doc = fleet_json("-", stdin=compact[0] + "\n" + DEEP + compact[1] + "\n")
    assert doc["nodes"] == 2
    assert rejected_sources(doc)["<stdin>#2"][0] == "unreadable"


def test_an_oversized_report_is_refused_without_reading_it(tmp_path, reports):
    big = json.loads(reports[0][1])
    big["padding"] = "x" * (17 << 20)
    (tmp_path / "big.json").write_text(json.dumps(big))
    (tmp_path / "ok.json").write_text(reports[1][1])
    doc = fleet_json(str(tmp_path))
    assert doc["nodes"] == 1 and "larger than 16 MiB" in rejected_sources(doc)["big.json"][1]
    on_stdin = fleet_json("-", stdin=json.dumps(big) + "\n")
    assert on_stdin["nodes"] == 0 and "larger than 16 MiB" in rejected_sources(on_stdin)["<stdin>#1"][1]


def test_a_fifo_in_a_folder_is_named_not_opened(tmp_path, reports):
    (tmp_path / "a.json").write_text(reports[0][1])
    os.mkfifo(str(tmp_path / "pipe.json"))  # opening it for reading would wait for a writer forever
    proc = af.run_cli("fleet", str(tmp_path), "--json", timeout=60)  # a real process: a hang fails, not blocks
    doc = json.loads(proc.stdout)
    assert doc["nodes"] == 1 and "named pipe" in rejected_sources(doc)["pipe.json"][1]


def test_twenty_thousand_reports_with_one_poisoned_file(tmp_path, reports):
    """The issue's acceptance case; its time is measured by benchmarks/fleet_hostile_bench.py, not here."""
    texts = [text for _, text in reports]
    for i in range(20_000):
        doc = json.loads(texts[i % len(texts)])
        doc["host"] = "node%05d" % i
        (tmp_path / ("node%05d.json" % i)).write_text(json.dumps(doc))
    (tmp_path / "node10000-poisoned.json").write_text(DEEP)
    doc = fleet_json(str(tmp_path))
    assert doc["nodes"] == 20_000
    assert list(rejected_sources(doc)) == ["node10000-poisoned.json"]


def _documents(text):
    from cudnn_doctor.fleet.reading import split_documents

    return split_documents("<stdin>", io.StringIO(text).read)


@given(depth=st.integers(1, 50_000), opener=st.sampled_from("[{"), tail=st.text(max_size=20))
@budget(30)
def test_any_nesting_is_a_document_or_a_named_rejection(depth, opener, tail):
    text = (opener if opener == "[" else '{"a":') * depth + tail
    for label, item in _documents(text):
        assert label.startswith("<stdin>")
        assert hasattr(item, "reason") or isinstance(item, (dict, list))


@given(junk=st.binary(max_size=3000), at=st.integers(0, 3))
@budget(40)
def test_junk_between_good_lines_on_stdin_never_loses_them(junk, at):
    lines = [json.dumps({"good": i, "marker": "zq9"}) for i in range(3)]
    lines.insert(at, junk.decode("utf-8", "replace").replace("\n", " "))
    docs = [item for _, item in _documents("\n".join(lines) + "\n")
            if isinstance(item, dict) and item.get("marker") == "zq9"]
    assert [d["good"] for d in docs] == [0, 1, 2]
