"""compat/derived.json is exactly what scripts/refresh_knowledge.py derives from the recorded sources, valid
against the schema `cudnn-doctor update` also writes to, and never overrides a hand-transcribed row."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cudnn_doctor.knowledge.schema import problems
from cudnn_doctor.refresh import collect
from cudnn_doctor.refresh.build import derived_text, hand_facts

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "knowledge"


def test_shipped_derived_knowledge_is_what_the_refresh_script_writes():
    expected = derived_text(collect.load_recorded(RECORDED), ROOT / "compat", "scripts/refresh_knowledge.py")
    assert (ROOT / "compat" / "derived.json").read_text() == expected, "run scripts/refresh_knowledge.py"


def test_refresh_script_check_mode_agrees():
    proc = subprocess.run([sys.executable, "scripts/refresh_knowledge.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_shipped_derived_knowledge_is_valid():
    doc = json.loads((ROOT / "compat" / "derived.json").read_text())
    assert problems(doc) == []
    assert doc["cudnn_releases"] and doc["cudnn_builds"] and doc["frameworks"]


def test_schema_rejects_a_damaged_copy():
    doc = json.loads((ROOT / "compat" / "derived.json").read_text())
    doc["cudnn_builds"][0]["cuda"] = ["twelve"]
    del doc["date"]
    found = problems(doc)
    assert any("date" in p for p in found) and any("cudnn_builds/0/cuda/0" in p for p in found)


def test_derived_rows_never_cover_a_transcribed_one():
    doc = json.loads((ROOT / "compat" / "derived.json").read_text())
    releases = [e["release"] for e in doc["cudnn_releases"]]
    hand, _ = hand_facts(ROOT / "compat", releases)
    for row in doc["cudnn_builds"]:
        for rel in releases:
            if row["from"] <= rel <= row["to"] and rel in (row["from"], row["to"]):
                assert (rel, row["variant"]) not in hand, (rel, row)
