"""Machine-read reports (JSON, Prometheus text) to stdout or, atomically, to a file that others poll."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Optional

from ..model import Report
from ..ui import error_exit


def render_machine_report(report: Report, exit_code: int, fmt: str) -> str:
    if fmt == "prometheus":
        from .prometheus import render_prometheus

        return render_prometheus(report, exit_code)
    from .envelope import dumps
    from .json_report import report_json

    return dumps(report_json(report, exit_code)) + "\n"


def emit_machine_report(report: Report, exit_code: int, fmt: str, output_file: Optional[Path]) -> None:
    text = render_machine_report(report, exit_code, fmt)
    if output_file is None:
        sys.stdout.write(text)
        return
    try:
        write_atomic(Path(output_file), text)
    except OSError as exc:
        error_exit("--output-file %s cannot be written: %s" % (output_file, exc.strerror or exc))


def write_atomic(path: Path, text: str) -> None:
    """A reader (node_exporter, a fleet merge) sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=".%s." % path.name, suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; collectors often run as another user
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
