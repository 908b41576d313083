"""node-problem-detector status from a `check --json` report: the plugin contract (0 OK, 1 problem, 2 unknown)
and a message within NPD's output limit (max_output_length, 80 by default), written atomically for the plugin.

    python3 -m cudnn_doctor.fleet.npd REPORT STATUS_FILE [MAX_LENGTH]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Tuple

from ..render.machine import write_atomic

NPD_OK, NPD_PROBLEM, NPD_UNKNOWN = 0, 1, 2
DEFAULT_MAX_OUTPUT_LENGTH = 80  # node-problem-detector's default max_output_length


def npd_status(doc: Any, limit: int = DEFAULT_MAX_OUTPUT_LENGTH) -> Tuple[int, str]:
    """Error findings are a problem (their ids first: they survive the cut); warnings alone are OK."""
    if not isinstance(doc, dict) or doc.get("command") != "check" or not isinstance(doc.get("findings"), list):
        return NPD_UNKNOWN, _fit("cudnn-doctor report unreadable", limit)
    errors = [f for f in doc["findings"] if isinstance(f, dict) and f.get("severity") == "error"]
    if errors:
        ids = " ".join(dict.fromkeys(str(f.get("id")) for f in errors))
        return NPD_PROBLEM, _fit("%s: %s" % (ids, errors[0].get("title", "")), limit)
    if doc.get("exit_code") not in (0, 1, 4, None):
        return NPD_UNKNOWN, _fit("cudnn-doctor check failed (exit %s)" % doc.get("exit_code"), limit)
    warnings = sum(1 for f in doc["findings"] if isinstance(f, dict) and f.get("severity") == "warning")
    return NPD_OK, _fit("cuDNN stack OK" + (" (%d warnings)" % warnings if warnings else ""), limit)


def _fit(message: str, limit: int) -> str:
    # One line of printable ASCII: NPD cuts bytes, and a cut inside a UTF-8 sequence would garble the condition.
    text = " ".join(message.split()).encode("ascii", "replace").decode("ascii")
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


def write_status(report_path: str, status_path: str, limit: int = DEFAULT_MAX_OUTPUT_LENGTH) -> int:
    try:
        with open(report_path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        doc = None
    code, message = npd_status(doc, limit)
    write_atomic(Path(status_path), "%d\n%s\n" % (code, message))
    return code


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        sys.stderr.write("usage: python3 -m cudnn_doctor.fleet.npd REPORT STATUS_FILE [MAX_LENGTH]\n")
        return 2
    write_status(args[0], args[1], int(args[2]) if len(args) == 3 else DEFAULT_MAX_OUTPUT_LENGTH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
