"""`check`'s run: its options as one value, the run that judges and renders, and the exit code. The typer command
(commands/check.py) parses the line into CheckOptions and calls run_check; a new option is a typer option there
and a field here."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Mapping, Optional, Sequence

from .. import diagnose
from ..bounded_io import not_a_folder
from ..diagnose import DEFAULT_TIMEOUT
from ..model import Severity
from ..results import Report
from ..runclock import RunClock
from ..ui import EXIT_INCOMPLETE, EXIT_OK, EXIT_PROBLEMS, error_exit

MIN_TIMEOUT = 0.1  # seconds: the shortest --timeout a run can be given


@dataclass
class CheckOptions:
    """`check`'s options, as typer parsed them; the defaults are the command line's."""

    root: str = "/"
    env: List[str] = field(default_factory=list)
    as_json: bool = False
    fmt: Optional[str] = None
    output_file: Optional[Path] = None
    node_name: Optional[str] = None
    verbose: int = 0
    quiet: int = 0
    strict: bool = False
    require: List[str] = field(default_factory=list)
    target: Optional[str] = None
    junit_xml: Optional[Path] = None
    skip: List[str] = field(default_factory=list)
    image: Optional[str] = None
    against: Optional[str] = None
    list_checks: bool = False
    smoke: bool = False
    ready: bool = False
    color: Optional[bool] = None
    timeout: float = DEFAULT_TIMEOUT


def run_check(o: CheckOptions, early: Any = None) -> int:
    """Probe, judge and render as the options say; the exit code. Bad input ends in ui.error_exit (exit 2).
    ``early``: the native child cli.main started, handed on to diagnose (commands never name the host seam)."""
    clock = RunClock()
    if o.list_checks:
        _list_checks()
        return EXIT_OK
    fmt_name = _pick_format(o.fmt, o.as_json)
    if fmt_name not in ("human", "json", "github", "prometheus"):
        error_exit("--format must be human, json, github or prometheus, not %r" % fmt_name)
    if o.output_file is not None and fmt_name not in ("json", "prometheus"):
        error_exit("--output-file needs --json or --format prometheus")
    problem = not_a_folder(o.root)
    if problem:
        error_exit("--root %s %s" % (o.root, problem))
    if o.image is None and o.against is not None:
        error_exit("--against needs --image REF: the image to judge on that node")
    if o.image is not None and (o.root != "/" or o.env or o.smoke or o.ready):
        error_exit("--image reads the image's own files and Env: it cannot go with --root, --env, --smoke or "
                   "--ready")
    _validate_policy(o.require, o.target)
    _validate_skip(o.skip)
    if o.image is not None:
        from .check_image import image_check

        report = image_check(o.image, o.against, o.require, o.target, o.skip, o.timeout)
    else:
        report = diagnose.diagnose(o.root, parse_env(o.env), requires=o.require, target=o.target, skip=o.skip,
                                   smoke=o.smoke, timeout=o.timeout, ready=o.ready, early=early)
    code = exit_code_for(report, o.strict)
    report.run = clock.finish(o.node_name or report.facts.host.hostname or _node())
    if o.junit_xml is not None:
        from ..render.junit import write_junit

        try:
            write_junit(report, o.junit_xml)
        except OSError as exc:
            error_exit("--junit-xml %s cannot be written: %s" % (o.junit_xml, exc.strerror or exc))
    if fmt_name in ("json", "prometheus"):
        from ..render.machine import emit_machine_report

        try:
            emit_machine_report(report, code, fmt_name, o.output_file)
        except OSError as exc:
            error_exit("--output-file %s cannot be written: %s" % (o.output_file, exc.strerror or exc))
    elif fmt_name == "github":
        from ..render.github import render_github

        render_github(report, sys.stdout, os.environ.get("GITHUB_STEP_SUMMARY"))
    elif o.quiet < 2:
        from ..render.human import render_human
        from ..ui import console

        render_human(report, console(color=o.color), verbose=o.verbose, quiet=o.quiet)
    return code


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
