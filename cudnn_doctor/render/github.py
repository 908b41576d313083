"""GitHub Actions output: ::error/::warning annotations, and a markdown summary for $GITHUB_STEP_SUMMARY."""
from __future__ import annotations

from typing import Optional, TextIO

from ..model import Fix, Severity
from ..results import Report


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_prop(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command_lines(fix: Fix) -> str:
    """The fix's commands one per line, ready to copy, where the one-line text wraps them in prose."""
    if not fix.commands or fix.text == " && ".join(fix.commands):
        return ""
    return "".join("\n$ " + command for command in fix.commands)


def annotation_commands(report: Report) -> str:
    lines = []
    for f in report.findings:
        level = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(f.severity, "notice")
        body = f.title
        if f.detail:
            body += "\n" + f.detail
        if f.remedy:
            body += "\nFix: " + f.remedy.text + _command_lines(f.remedy)
        lines.append("::%s title=%s::%s" % (level, _escape_prop("%s %s" % (f.id, f.alias or "")), _escape_data(body)))
    return "".join(line + "\n" for line in lines)


def summary_markdown(report: Report) -> str:
    facts = report.facts
    cudnn = ", ".join("%s (%s)" % (c.version or "?", c.origin) for c in facts.cudnn) or "none found"
    gpus = ", ".join("%s (CC %s)" % (g.name, g.compute_capability) for g in facts.gpus) or "none found"
    toolkits = ", ".join("%s at %s" % (t.version or "?", t.path) for t in facts.toolkits) or "none found"
    out = [
        "## cudnn-doctor: %s" % report.verdict,
        "",
        "| | |",
        "|---|---|",
        "| Driver | %s (CUDA %s) |" % (facts.driver.version or "not found", facts.driver.cuda_version or "?"),
        "| GPUs | %s |" % gpus,
        "| CUDA toolkits | %s |" % toolkits,
        "| cuDNN | %s |" % cudnn,
        "",
    ]
    if report.findings:
        out += ["| Severity | Id | Finding | Fix |", "|---|---|---|---|"]
        for f in report.findings:
            cell = lambda s: (s or "").replace("|", "\\|").replace("\n", " ")  # noqa: E731
            out.append("| %s | %s | %s | %s |" % (f.severity.value, f.id, cell(f.title), cell(f.fix)))
    else:
        out.append("No problems found.")
    return "\n".join(out) + "\n"


def render_github(report: Report, out: TextIO, summary_path: Optional[str]) -> None:
    out.write(annotation_commands(report))
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in Severity}
    out.write("cudnn-doctor: %s (%d errors, %d warnings)\n" % (report.verdict, counts[Severity.ERROR],
                                                               counts[Severity.WARNING]))
    if summary_path:
        # GitHub appends every step's summary into one page; never truncate what others wrote.
        with open(summary_path, "a", encoding="utf-8") as fh:
            fh.write(summary_markdown(report))
