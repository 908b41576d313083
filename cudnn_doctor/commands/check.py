"""The `check` subcommand: probe the machine, judge it, render the report, choose the exit code."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Mapping, Optional, Sequence

import typer

from .. import diagnose
from ..bounded_io import not_a_folder
from ..diagnose import DEFAULT_TIMEOUT
from ..model import Severity
from ..results import Report
from ..runclock import RunClock
from ..ui import EXIT_INCOMPLETE, EXIT_OK, EXIT_PROBLEMS, error_exit
from . import completion as values
from .options import seconds


def _validate_skip(patterns: Sequence[str]) -> None:
    if not patterns:  # knowing the checks means importing every rule: not before the probes, when none is named
        return
    for p in diagnose.unknown_skips(patterns):
        error_exit("--skip %r matches no check; see `cudnn-doctor check --list-checks`" % p)


def _list_checks() -> None:
    for rid, alias, title in diagnose.known_checks():
        sys.stdout.write("%s  %-36s %s\n" % (rid, alias, title))


def _compat():
    from ..knowledge import load_compat

    return load_compat()


def _node() -> str:
    import platform  # only when the host probe found no name: not worth its import on every run

    return platform.node()


def exit_code_for(report: Report, strict: bool) -> int:
    """0: no errors; 1: an error (or, with --strict, a warning); 4: no error, but something could not be
    checked (a probe abandoned or a path blocked). Renderers never decide this."""
    worst = max((f.severity.rank for f in report.findings), default=0)
    if worst >= Severity.ERROR.rank:
        return EXIT_PROBLEMS
    if report.facts.blocked:
        return EXIT_INCOMPLETE
    return EXIT_PROBLEMS if strict and worst >= Severity.WARNING.rank else EXIT_OK


def _pick_format(fmt: Optional[str], as_json: bool) -> str:
    if as_json:
        return "json"
    if fmt:
        return fmt
    # In GitHub Actions with output going to a log, annotations are what people read.
    if os.environ.get("GITHUB_ACTIONS") == "true" and not sys.stdout.isatty():
        return "github"
    return "human"


def _validate_policy(requires: Sequence[str], target: Optional[str]) -> None:
    """Bad --require/--for input is a usage error (exit 2) before anything is probed."""
    if not requires and target is None:
        return  # a plain check does not pay for the parsers (packaging.specifiers, the knowledge base) up front
    from ..rules.policy import parse_requirement, parse_target

    for expr in requires:
        try:
            parse_requirement(expr)
        except ValueError as exc:
            error_exit("--require %r: %s" % (expr, exc))
    if target is not None:
        try:
            parse_target(target, _compat())
        except ValueError as exc:
            error_exit("--for %r: %s" % (target, exc))


def _require_help() -> str:
    from ..require_keys import REQUIRE_KEYS

    return "\n\n".join("  %s: %s" % (key, text) for key, text in REQUIRE_KEYS.items())


def register(app: typer.Typer) -> None:
    @app.command(
        "check",
        help=(
            "Probe the driver, GPUs, CUDA toolkits, every cuDNN copy and the loader, judge them against the "
            "compatibility data, and print diagnoses with fixes.\n\n"
            "Exit codes: 0 no errors, 1 an error was found (--strict: or a warning), 2 usage error, "
            "3 the doctor itself failed, 4 no error found but something could not be checked (a probe ran past "
            "--timeout or a file was a FIFO, socket or device).\n\n"
            "Examples:\n\n"
            "  cudnn-doctor check\n\n"
            "  cudnn-doctor check -v --require 'cudnn>=9' --require 'driver>=535'\n\n"
            "  cudnn-doctor check --for dl4j==1.0.0-beta6\n\n"
            "  cudnn-doctor check --root /mnt/image --skip 'CD1*' --skip 'CD2*' --skip 'CD8*' --json\n\n"
            "  cudnn-doctor check --root /mnt/c --env 'PATH=C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin' --json\n\n"
            "  cudnn-doctor check --image oci:./layout:v2 --against node17.json\n\n"
            "What each --require key compares:\n\n" + _require_help()
        ),
    )
    def check(
        ctx: typer.Context,
        root: str = typer.Option("/", "--root", metavar="DIR",
                                 help="Inspect the filesystem under DIR as if it were / (an image, chroot, disk); "
                                      "a DIR holding Windows/System32 is read as drive C: of a Windows machine."),
        env: List[str] = typer.Option([], "--env", metavar="NAME=VALUE",
                                      help="An environment variable of the inspected machine (repeatable); given "
                                           "once, they replace this process's environment: PATH, CUDA_PATH, "
                                           "LD_LIBRARY_PATH, CUDA_HOME, ..."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1) and nothing else."),
        fmt: Optional[str] = typer.Option(None, "--format", metavar="human|json|github|prometheus",
                                          autocompletion=values.formats,
                                          help="Output format; github prints ::error/::warning annotations; "
                                               "prometheus writes node_exporter textfile metrics."),
        output_file: Optional[Path] = typer.Option(None, "--output-file", "-o", metavar="PATH",
                                                   help="Write the report to PATH atomically (temporary file, "
                                                        "then rename) instead of stdout."),
        node_name: Optional[str] = typer.Option(None, "--node-name", metavar="NAME",
                                                help="The node's name in --json and prometheus reports "
                                                     "(default: the host name; e.g. $SLURMD_NODENAME)."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False,
                                    help="Show details and where facts came from (-vv: every place searched)."),
        quiet: int = typer.Option(0, "--quiet", "-q", count=True, show_default=False,
                                  help="-q: findings only; -qq: nothing."),
        strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
        require: List[str] = typer.Option([], "--require", metavar="EXPR",
                                          help="A policy such as 'cuda>=11.8', 'cudnn>=8.9,<10', 'driver>=535', "
                                               "'cc>=7.0' (repeatable)."),
        target: Optional[str] = typer.Option(None, "--for", metavar="FRAMEWORK[==VERSION]",
                                             autocompletion=values.targets,
                                             help="Judge against a framework build: torch, tensorflow==2.15, "
                                                  "jax, dl4j==1.0.0-beta6."),
        junit_xml: Optional[Path] = typer.Option(None, "--junit-xml", metavar="PATH",
                                                 help="Also write a JUnit XML report (one test case per rule)."),
        skip: List[str] = typer.Option([], "--skip", metavar="ID", autocompletion=values.checks,
                                       help="Leave out a check by id, alias or pattern (repeatable): "
                                            "--skip CD505, --skip 'CD8*' (e.g. driver/GPU layers for an image)."),
        image: Optional[str] = typer.Option(None, "--image", metavar="REF",
                                            help="Read a container image without running it: oci:DIR[:TAG], "
                                                 "oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME:TAG]; its "
                                                 "config's Env is the environment."),
        against: Optional[str] = typer.Option(None, "--against", metavar="REPORT.json",
                                              help="With --image: judge the image on the node whose `check --json` "
                                                   "report this is (its driver and GPUs)."),
        list_checks: bool = typer.Option(False, "--list-checks", help="List every check (id, alias, title) and exit."),
        smoke: bool = typer.Option(False, "--smoke", help="Also run a real convolution through cuDNN."),
        ready: bool = typer.Option(False, "--ready", help="Also prove CUDA runs on every GPU: cuInit, a context and "
                                                         "a tiny kernel whose result is checked, each under a "
                                                         "deadline (CD218)."),
        color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
        timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", metavar="SECONDS", callback=seconds(0.1),
                                      help="Time budget for the whole run; a probe stuck longer (a hung network "
                                           "mount) is abandoned, named in the report (CD002) and the exit code "
                                           "is 4."),
    ) -> None:
        clock = RunClock()
        if list_checks:
            _list_checks()
            raise typer.Exit(0)
        fmt_name = _pick_format(fmt, as_json)
        if fmt_name not in ("human", "json", "github", "prometheus"):
            error_exit("--format must be human, json, github or prometheus, not %r" % fmt_name)
        if output_file is not None and fmt_name not in ("json", "prometheus"):
            error_exit("--output-file needs --json or --format prometheus")
        problem = not_a_folder(root)
        if problem:
            error_exit("--root %s %s" % (root, problem))
        if image is None and against is not None:
            error_exit("--against needs --image REF: the image to judge on that node")
        if image is not None and (root != "/" or env or smoke or ready):
            error_exit("--image reads the image's own files and Env: it cannot go with --root, --env, --smoke or "
                       "--ready")
        _validate_policy(require, target)
        _validate_skip(skip)
        if image is not None:
            from .check_image import image_check

            report = image_check(image, against, require, target, skip, timeout)
        else:
            report = diagnose.diagnose(root, parse_env(env), requires=require, target=target, skip=skip, smoke=smoke,
                                       timeout=timeout, ready=ready, early=ctx.obj)
        code = exit_code_for(report, strict)
        report.run = clock.finish(node_name or report.facts.host.hostname or _node())
        if junit_xml is not None:
            from ..render.junit import write_junit

            try:
                write_junit(report, junit_xml)
            except OSError as exc:
                error_exit("--junit-xml %s cannot be written: %s" % (junit_xml, exc.strerror or exc))
        if fmt_name in ("json", "prometheus"):
            from ..render.machine import emit_machine_report

            try:
                emit_machine_report(report, code, fmt_name, output_file)
            except OSError as exc:
                error_exit("--output-file %s cannot be written: %s" % (output_file, exc.strerror or exc))
        elif fmt_name == "github":
            from ..render.github import render_github

            render_github(report, sys.stdout, os.environ.get("GITHUB_STEP_SUMMARY"))
        elif quiet < 2:
            from ..render.human import render_human
            from ..ui import console

            render_human(report, console(color=color), verbose=verbose, quiet=quiet)
        raise typer.Exit(code)


def parse_env(pairs: Sequence[str]) -> Optional[Mapping[str, str]]:
    """--env NAME=VALUE pairs as the inspected machine's environment; None (this process's) when none given."""
    if not pairs:
        return None
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            error_exit("--env %r: expected NAME=VALUE, e.g. --env 'PATH=C:\\CUDA\\bin'" % pair)
        out[name.strip()] = value
    return out
