"""The `explain` subcommand: read the pasted text, call cudnn_doctor.explain, render its Report."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit


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


def register(app: typer.Typer) -> None:
    @app.command(
        "explain",
        help=(
            "Explain a pasted CUDA/cuDNN error message: what it says, what it needs, what this machine has, and "
            "one fix.\n\n"
            "Library names (libcudart.so.11.0, cudnn64_8.dll) and versions (\"Loaded runtime CuDNN library: 8.1.0 "
            "but source was compiled with: 8.6.0\") in the text are read and looked up on this machine.\n\n"
            "The cause and fix come from the text itself (the same with --no-check and on any machine); the checks "
            "of this machine add what they find.\n\n"
            "Exit codes: 0 nothing in the text is known as a problem (a harmless log line, or words it does not know, "
            "which it says) and nothing here stands in the way, 1 the "
            "text shows a problem or this machine has one, 2 usage error.\n\n"
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
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False,
                                    help="Also name the matched patterns, failure-catalogue entries and public "
                                         "reports of the same error."),
    ) -> None:
        from ..bounded_io import not_a_folder

        if not_a_folder(root):
            error_exit("--root %s %s" % (root, not_a_folder(root)))
        body = _read_text(text, file)
        if not body.strip():
            if text == "-":
                error_exit("stdin (-) was empty: pipe the failing program's output, e.g. "
                           "python train.py 2>&1 | cudnn-doctor explain -")
            if file:
                error_exit("--file %s is empty: give the file that holds the error text" % file)
            error_exit("give the error text as an argument, with --file PATH, or on stdin (-)")
        from ..explain import explain as explain_text

        report = explain_text(body, root=root, check=not no_check)
        code = EXIT_PROBLEMS if report.explanation.problem else EXIT_OK
        if as_json:
            from ..render.envelope import dumps, envelope
            from ..render.explain import explain_payload

            sys.stdout.write(dumps(envelope("explain", code, **explain_payload(report))) + "\n")
        else:
            from ..render.explain import render_explain
            from ..ui import console

            render_explain(report, console(), verbose=verbose)
        raise typer.Exit(code)
