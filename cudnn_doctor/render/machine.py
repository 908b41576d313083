"""Machine-read reports (JSON, Prometheus text) for stdout or, atomically, for a file that others poll."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional, Union

from ..results import Report


def render_machine_report(report: Report, exit_code: int, fmt: str) -> str:
    if fmt == "prometheus":
        from .prometheus import render_prometheus

        return render_prometheus(report, exit_code)
    from .envelope import dumps
    from .json_report import report_json

    return dumps(report_json(report, exit_code)) + "\n"


def emit_machine_report(report: Report, exit_code: int, fmt: str, output_file: Optional[Path]) -> None:
    """To stdout, or to ``output_file`` atomically (OSError when it cannot be written: the caller says so)."""
    text = render_machine_report(report, exit_code, fmt)
    if output_file is None:
        sys.stdout.write(text)
    else:
        write_atomic(Path(output_file), text)


def write_atomic(path: Path, data: Union[str, bytes], prefix: Optional[str] = None,
                 mode: Optional[int] = None) -> None:
    """A reader (node_exporter, a CI step, a fleet merge) sees the old file or the new one, never half of one.
    `prefix` names the temporary file; `mode` defaults to what the umask allows a new file."""
    import tempfile  # only for a report written to a file: not worth its import (random, shutil) on stdout

    fd, tmp = tempfile.mkstemp(prefix=prefix or ".%s." % path.name, suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)  # mkstemp makes 0600; collectors and CI steps often read as another user
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
