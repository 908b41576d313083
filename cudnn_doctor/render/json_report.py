"""The `check --json` document: the versioned envelope around facts and findings (a contract; see tests)."""
from __future__ import annotations

from typing import Any, Dict

from ..fingerprint import fingerprint
from ..model import to_plain
from ..results import Report
from .envelope import envelope


def report_json(report: Report, exit_code: int) -> Dict[str, Any]:
    facts = report.facts.to_dict()
    # A flat name -> path map beside the detailed resolutions, for scripts that only want the answer.
    facts["loader"]["paths"] = {name: res["path"] for name, res in facts["loader"]["resolved"].items()}
    return envelope(
        "check",
        exit_code,
        verdict=report.verdict,
        incomplete=bool(report.facts.blocked),  # something could not be checked (CD002/CD003, exit code 4)
        facts=facts,
        findings=[to_plain(f) for f in report.findings],
        rules_run=list(report.rules_run),
        **merge_fields(report),
        **({"smoke": report.smoke.to_dict()} if report.smoke is not None else {}),
        **({"knowledge": to_plain(report.knowledge)} if report.knowledge is not None else {}),
    )


def merge_fields(report: Report) -> Dict[str, Any]:
    """What `cudnn-doctor fleet` merges reports by: node name, when the run started, how long, the fingerprint."""
    run = report.run
    return {
        "host": (run.host if run else None) or report.facts.host.hostname,
        "started_at": run.started_at if run else None,
        "duration_s": run.duration_s if run else None,
        "fingerprint": fingerprint(report.facts),
    }
