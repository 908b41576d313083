"""The `pick` subcommand: which build of a framework (or cuDNN) to install on this machine, or on the node whose
`check --json` report is given, judged by cudnn_doctor/pick from the facts check collects and the knowledge."""
from __future__ import annotations

import shlex
import sys
from typing import Optional

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit

CHOICES = ("torch", "tensorflow", "jax", "onnxruntime", "cupy", "paddlepaddle", "cudnn")
FORMS = ("pip", "uv", "conda", "requirements", "json")


def register(app: typer.Typer) -> None:
    @app.command(
        "pick",
        help=(
            "Which build to install: the newest release (within VERSION-SPEC) of a framework or cuDNN that runs "
            "on every GPU of this machine with its driver, and the pip, uv and conda commands that install it. "
            "Probes what check probes, nothing more.\n\n"
            "Exit codes: 0 picked, 1 nothing fits (the reason and the driver that would fit are printed), 2 bad "
            "input.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor pick torch\n\n"
            "  cudnn-doctor pick jax '>=0.6,<0.8'\n\n"
            "  cudnn-doctor pick cudnn --emit pip\n\n"
            "  cudnn-doctor pick torch --against node.json    # node.json: `cudnn-doctor check --json` on a compute node"
        ),
    )
    def pick(
        framework: str = typer.Argument(..., metavar="|".join(CHOICES),
                                        autocompletion=lambda incomplete: [c for c in CHOICES
                                                                           if c.startswith(incomplete)]),
        spec: str = typer.Argument("", metavar="[VERSION-SPEC]", help="e.g. 2.8, ==2.8.1 or '>=2.6,<2.9'."),
        against: Optional[str] = typer.Option(None, "--against", metavar="NODE.json",
                                              help="Answer for the node of this saved `check --json` report."),
        emit: Optional[str] = typer.Option(None, "--emit", metavar="|".join(FORMS),
                                           autocompletion=lambda incomplete: [f for f in FORMS
                                                                              if f.startswith(incomplete)],
                                           help="Print one install form alone (json: the whole answer)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1); as --emit json."),
    ) -> None:
        if framework not in CHOICES:
            error_exit("pick what? %r is not one of %s" % (framework, ", ".join(CHOICES)))
        if emit is not None and emit not in FORMS:
            error_exit("--emit wants one of %s, not %r" % (", ".join(FORMS), emit))
        from ..knowledge import load_compat
        from ..pick.choose import BadSpec, pick as choose, spec_set
        from ..pick.cudnn import pick_cudnn
        from ..pick.machine import BadReport, from_facts, from_report

        try:
            spec_set(spec)  # bad input is refused before anything is probed
        except BadSpec as exc:
            error_exit(str(exc))
        compat = load_compat()
        facts = None  # this machine's, when it is the one asked about: its fixes are built for it
        if against:
            try:
                with open(against, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError as exc:
                error_exit("cannot read %s: %s" % (against, exc.strerror or exc))
            try:
                machine = from_report(text, against, compat)
            except BadReport as exc:
                error_exit(str(exc))
            if not machine.gpus:
                error_exit("%s shows no NVIDIA GPU: save the report on a compute node (`cudnn-doctor check --json "
                           "> node.json`) and ask with --against node.json" % against)
        else:
            from ..diagnose import collect_facts

            facts = collect_facts()
            machine = from_facts(facts, compat)
            if not machine.gpus:
                error_exit("this machine shows no NVIDIA GPU (a login or build node?): run `cudnn-doctor check "
                           "--json > node.json` on a compute node and ask `cudnn-doctor pick %s --against node.json`"
                           % " ".join(shlex.quote(w) for w in [framework] + ([spec] if spec else [])), EXIT_PROBLEMS)
        chosen = pick_cudnn(compat, spec, machine) if framework == "cudnn" else choose(compat, framework, spec, machine)
        from ..pick.answer import answer

        data = answer(compat, chosen, facts)
        code = EXIT_OK if data["ok"] else EXIT_PROBLEMS
        if as_json or emit == "json":
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("pick", code, **data)) + "\n")
        else:
            from ..render.pick import emit_lines, human_lines

            lines = emit_lines(data, emit) if emit else human_lines(data)
            (sys.stdout if data["ok"] or not emit else sys.stderr).write(
                "\n".join(lines if lines or not emit else human_lines(data)) + "\n")
        raise typer.Exit(code)
