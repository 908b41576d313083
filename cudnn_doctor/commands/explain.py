"""The `explain` subcommand: recognise a pasted framework error, say what it means, run the checks that decide it."""
from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit


@dataclass
class SymptomMatch:
    """One routing-table row (compat/symptoms.toml) that the pasted text matched."""

    id: str
    pattern: str  # the pattern that matched
    meaning: str
    catalogue: List[str]
    rules: List[str]


def match_symptoms(text: str, compat=None) -> List[SymptomMatch]:
    """Every symptom row whose patterns occur in `text`, in table order. Pure: no machine access."""
    from ..compat import load_compat

    compat = compat or load_compat()
    out: List[SymptomMatch] = []
    for symptom in compat.symptoms():
        hit = symptom.matches(text or "")
        if hit:
            out.append(SymptomMatch(symptom.id, hit, symptom.meaning, symptom.catalogue, symptom.rules))
    return out


def routed_rules(matches: List[SymptomMatch]) -> List[str]:
    """The rule ids to run, each once, in the order the matches name them."""
    return list(dict.fromkeys(r for m in matches for r in m.rules))


def _read_text(text: Optional[str], file: Optional[str]) -> str:
    if file:
        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError as exc:
            error_exit("cannot read %s: %s" % (file, exc.strerror or exc))
    if text == "-" or (text is None and not sys.stdin.isatty()):
        return sys.stdin.read()
    return text or ""


def _run_checks(rules: List[str], root: str) -> Optional[Dict[str, Any]]:
    """The findings of the routed rules on this machine; None when the check command is not available."""
    try:
        from .check import collect_report
    except ImportError:
        return None
    report = collect_report(root=root)
    wanted = set(rules)
    relevant = [f for f in report.findings if f.id in wanted]
    return {"findings": relevant, "ran": [r for r in rules if r in report.rules_run]}


def _render(matches: List[SymptomMatch], checks: Optional[Dict[str, Any]], ran_checks: bool) -> None:
    from rich.markup import escape

    from ..ui import console

    con = console()
    if not matches:
        con.print("No known CUDA/cuDNN error pattern matched this text.", markup=False)
        con.print("Run `cudnn-doctor check` for a full diagnosis of this machine.", markup=False)
        return
    for m in matches:
        con.print("[bold]%s[/bold]  (matched %r)" % (escape(m.id), escape(m.pattern)))
        con.print("  " + m.meaning, markup=False)
        con.print("  failure catalogue: %s; checks: %s" % (", ".join(m.catalogue), ", ".join(m.rules) or "none "
                                                          "(needs a GPU or the failing program to observe)"),
                  markup=False)
    if not ran_checks:
        return
    if checks is None:
        con.print("\nThe check command is not available in this build; run `cudnn-doctor check`.", markup=False)
        return
    findings = checks["findings"]
    con.print("\nOn this machine (%s):" % ", ".join(checks["ran"]), markup=False)
    problems = [f for f in findings if f.severity.value != "info"]
    if not problems:
        con.print("  None of these checks found a problem here. Run the failing program's environment through "
                  "`cudnn-doctor check` (same shell, venv and LD_LIBRARY_PATH); out-of-memory and crashes need the "
                  "GPU at work to show.", markup=False)
    for f in findings:
        con.print("  %s %s %s" % (f.severity.value.upper(), f.id, f.title), markup=False)
        if f.fix and f.severity.value != "info":
            con.print("    fix: %s" % f.fix, markup=False)


def register(app: typer.Typer) -> None:
    @app.command(
        "explain",
        help=(
            "Explain a pasted CUDA/cuDNN error message and run the checks that decide it on this machine.\n\n"
            "Exit codes: 0 no routed check found an error, 1 one did, 2 usage error.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor explain \"Could not load library libcudnn_ops_infer.so.8\"\n\n"
            "  python train.py 2>&1 | cudnn-doctor explain -\n\n"
            "  cudnn-doctor explain --file error.log --no-check"
        ),
    )
    def explain(
        text: Optional[str] = typer.Argument(None, metavar="ERROR_TEXT", help="The error text, or - for stdin."),
        file: Optional[str] = typer.Option(None, "--file", metavar="PATH", help="Read the error text from a file."),
        no_check: bool = typer.Option(False, "--no-check", help="Only explain; do not inspect this machine."),
        root: str = typer.Option("/", "--root", metavar="DIR", help="Inspect the filesystem under DIR."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        body = _read_text(text, file)
        if not body.strip():
            error_exit("give the error text as an argument, with --file PATH, or on stdin (-)")
        matches = match_symptoms(body)
        checks = _run_checks(routed_rules(matches), root) if matches and not no_check else None
        code = EXIT_OK
        if checks and any(f.severity.value == "error" for f in checks["findings"]):
            code = EXIT_PROBLEMS
        if as_json:
            from ..model import to_plain
            from ..render.envelope import dumps, envelope

            payload = {"matches": [asdict(m) for m in matches], "rules": routed_rules(matches)}
            if checks is not None:
                payload["findings"] = to_plain(checks["findings"])
                payload["checks_ran"] = checks["ran"]
            sys.stdout.write(dumps(envelope("explain", code, **payload)) + "\n")
        else:
            _render(matches, checks, ran_checks=bool(matches) and not no_check)
        raise typer.Exit(code)
