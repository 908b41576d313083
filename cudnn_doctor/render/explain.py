"""`explain`'s output: what the pasted text says, what that needs, what this machine has, and one fix (human), or
the same as one JSON envelope. Reads the Report that cudnn_doctor.explain returns; decides nothing."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Protocol

from ..model import Finding, to_plain


class Explained(Protocol):
    """What these renderers read of explain's ExplainReport (cudnn_doctor.explain, a layer above this one)."""

    findings: List[Finding]
    rules_run: List[str]
    explanation: Any  # cudnn_doctor.explain.Explanation


def _fix_text(fix: Any) -> str:
    return fix.text if fix is not None else ""


def render_explain(report: Explained, con: Any, verbose: int = 0) -> None:
    """Human text; catalogue letters, patterns and public reports only with -v."""
    ex = report.explanation
    say = lambda line="": con.print(line, markup=False, highlight=False, soft_wrap=True)  # noqa: E731  (fixes whole)
    if not ex.understood:
        say("No known CUDA/cuDNN error pattern, library name or version matched this text.")
        say("Run `cudnn-doctor check` for a full diagnosis of this machine.")
        return
    say("What the text says")
    for m in ex.matches:
        say("  " + m.meaning)
        if verbose:
            say("    (%s: matched %r; failure catalogue %s)" % (m.id, m.pattern, ", ".join(m.catalogue)))
    read: List[str] = list(ex.sonames)
    if ex.versions.compiled and not ex.evidence.checks:  # a decoded check says it below, with its verdict
        read.append("%sbuilt with cuDNN %s, loaded cuDNN %s" % ((ex.versions.framework + " ")
                                                               if ex.versions.framework else "",
                                                               ex.versions.compiled, ex.versions.runtime or "?"))
    if ex.versions.cuda_required:
        read.append("CUDA %s or newer required" % ex.versions.cuda_required)
    if read:
        say("  Read from it: " + "; ".join(read))
    for line in decoded_lines(ex.evidence):
        say("  " + line)
    if ex.answer is not None:
        say("Cause")
        say("  " + ex.answer.cause)
    if ex.needs:
        say("What that needs")
        for line in ex.needs:
            say("  " + line)
    if ex.checked:
        say("On this machine")
        if ex.elsewhere:
            say("  (%s)" % ex.elsewhere)
        for line in ex.here:
            say("  ERROR " + line)
        for line in ex.has:
            say("  " + line)
        for line in ex.gaps:
            say("  ERROR " + line)
        for lib in ex.libraries:
            if lib.problem or verbose:
                say("  %s %s" % ("ERROR" if lib.problem else "INFO ", lib.message))
        for f in report.findings:
            if f.severity.value != "info" or verbose or not ex.problem or f.remedy is not None:
                say("  %s %s %s" % (f.severity.value.upper().ljust(5), f.id, f.title))
        if verbose and report.rules_run:
            say("  (checks run: %s)" % ", ".join(report.rules_run))
        if not report.findings and not ex.problem:
            ran = ", ".join(report.rules_run)
            say("  The checks this error routes to%s found nothing wrong here." % ((" (%s)" % ran) if ran and verbose
                                                                                  else ""))
    elif ex.rules:
        say("Run it without --no-check to see what this machine has%s." % (
            (" (checks %s)" % ", ".join(ex.rules)) if verbose else ""))
    if ex.fix is not None:
        say("Fix")
        say("  " + ex.fix.text)
        for label, fix in ex.also:
            say("  %s: %s" % (label[:1].upper() + label[1:], fix.text))
    if verbose:
        for r in ex.reports:
            say("Reported before: %s" % r.source)


def _library(seen: Any) -> str:
    """'cuDNN 9' where the paste gives cuDNN 9's number; a name alone does not say which cuDNN numbered it
    (darknet's CUDNN_STATUS_EXECUTION_FAILED of 2019 is cuDNN 7's)."""
    return "cuDNN" if seen.code.api == "cudnn_v9" and seen.said == seen.code.name else seen.code.library


def decoded_lines(ev: Any) -> List[str]:
    """The evidence as the user reads it: each status with its meaning, each library with its release."""
    out = ["%s %s%s: %s" % (_library(s), s.code.name, "" if s.said == s.code.name else " (%s %d)" % (
        s.code.ctype, s.code.number), s.code.meaning or s.code.message or s.code.words) for s in ev.statuses]
    out += ["%s ships with %s" % (lib.name, lib.label) for lib in ev.libraries]
    out += ["%s: built with %s %s, loaded %s (%s)" % (
        c.framework, c.library, c.compiled, ("%s %s" % (c.library, c.runtime)) if c.runtime else "none",
        "fits its check" if c.fits else "does not fit its check") for c in ev.checks]
    if ev.gpu_cc:
        out.append("the GPU has compute capability %s" % ev.gpu_cc)
    return out


def explain_payload(report: Explained) -> Dict[str, Any]:
    """The JSON fields of `explain --json` (inside the shared envelope)."""
    ex = report.explanation
    payload: Dict[str, Any] = {
        "matches": [dataclasses.asdict(m) for m in ex.matches], "rules": ex.rules, "libraries_named": ex.sonames,
        "versions": dataclasses.asdict(ex.versions), "needs": ex.needs,
        "reports": [r.source for r in ex.reports], "understood": ex.understood,
        "evidence": {k: v for k, v in to_plain(ex.evidence).items() if k != "text"},
        "cause": ex.answer.cause if ex.answer is not None else "", "problem": ex.problem,
        "fix": _fix_text(ex.fix), "remedy": to_plain(ex.fix),
        "also": [{"for": label, "fix": fix.text} for label, fix in ex.also],
    }
    if ex.checked:
        payload.update(
            findings=to_plain(report.findings), checks_ran=report.rules_run, has=ex.has, gaps=ex.gaps,
            libraries=[dict(to_plain(lib), fix=_fix_text(lib.fix)) for lib in ex.libraries], here=ex.here,
            elsewhere=ex.elsewhere)
    return payload
