"""JUnit XML: one test case per rule that ran, so CI systems show the doctor like a test suite."""
from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Dict, List

from ..model import Finding, Severity
from ..results import Report
from .machine import write_atomic


def junit_tree(report: Report) -> ET.ElementTree:
    by_rule: Dict[str, List[Finding]] = {}
    for f in report.findings:
        by_rule.setdefault(f.id, []).append(f)
    ids = list(dict.fromkeys(list(report.rules_run) + [f.id for f in report.findings]))
    suites = ET.Element("testsuites", name="cudnn-doctor")
    suite = ET.SubElement(suites, "testsuite", name="cudnn-doctor check", tests=str(len(ids)))
    failures = 0
    for rule_id in ids:
        case = ET.SubElement(suite, "testcase", classname="cudnn_doctor.rules", name=rule_id)
        problems = [f for f in by_rule.get(rule_id, []) if f.severity in (Severity.ERROR, Severity.WARNING)]
        for f in problems:
            failures += 1
            node = ET.SubElement(case, "failure", type=f.severity.value, message=f.title)
            node.text = "%s\n\nWhy: %s\nFix: %s" % (f.title, f.detail, f.fix)
        infos = [f for f in by_rule.get(rule_id, []) if f.severity == Severity.INFO]
        if infos and not problems:
            ET.SubElement(case, "system-out").text = "\n".join(f.title for f in infos)
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    return ET.ElementTree(suites)


def write_junit(report: Report, path: Path) -> None:
    """Written to a temporary file and renamed, so a reader never sees half a report."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    junit_tree(report).write(buffer, encoding="utf-8", xml_declaration=True)
    write_atomic(path, buffer.getvalue())
