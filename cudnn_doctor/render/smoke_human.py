"""`smoke`'s human output: a marked summary line per cuDNN library tested, with its details below."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from ..run_results import SmokeResult
from .human import MARKS


def detail_lines(result: SmokeResult) -> List[str]:
    """The lines under a result's summary: what was loaded, and for a failure the error, why and the fix."""
    lines = []
    parts = []
    if result.cudart_version:
        parts.append("built for CUDA %s" % result.cudart_version)
    if result.driver_library:
        drv = "driver %s" % result.driver_library
        if result.driver_cuda_version:
            drv += " (CUDA %s)" % result.driver_cuda_version
        parts.append(drv)
    if result.total_ms is not None:
        parts.append("%.0f ms in all" % result.total_ms)
    if parts:
        lines.append(" · ".join(parts))
    if not result.ok or result.fallback:
        if result.error_message and result.error_message not in result.summary:
            lines.append("error: %s" % result.error_message)
        if result.cudnn_answer not in (None, "CUDNN_STATUS_SUCCESS") and result.status_api != "cudnn":
            said = result.cudnn_answer
            if result.cudnn_answer_detail:
                said += " (%s)" % result.cudnn_answer_detail
            lines.append("cuDNN's cudnnCreate: %s" % said)
        if result.diagnosis:
            lines.append("why: %s" % result.diagnosis)
        if result.fix:
            lines.append("fix: %s" % result.fix)
    return lines


def render_smoke(results: Sequence[SmokeResult], problem: str, out) -> None:
    """One marked line per library tested (and one for why none was found), its details indented below."""
    from rich.text import Text  # imported here: every command's start-up would pay for it otherwise

    lines: List[Tuple[str, str, List[str]]] = [("error", problem, [])] if problem else []
    lines += [("ok" if r.ok and not r.fallback else "warning" if r.ok else "error", r.summary, detail_lines(r))
              for r in results]
    for state, summary, details in lines:
        mark, style = MARKS[state]
        head = Text()
        head.append(mark, style=style)
        head.append(" " + summary)
        out.print(head)
        for line in details:
            out.print(Text("    " + line), soft_wrap=True)  # a fix's command is never cut in two
