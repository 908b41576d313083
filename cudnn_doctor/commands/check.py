"""The `check` subcommand: probe the machine, judge it, render the report, choose the exit code."""
from __future__ import annotations

import fnmatch
import os
import platform
import sys
from pathlib import Path
from typing import List, Mapping, Optional, Sequence

import typer

from ..host import Host
from ..model import Facts, Finding, Report, Severity
from ..runclock import RunClock
from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit


def collect_facts(root: str = "/", env: Optional[Mapping[str, str]] = None) -> Facts:
    """Observe the machine (or the filesystem under ``root``) and return the facts."""
    from ..probes import collect

    return collect(Host(root=root, env=env))


def probe_error_findings(facts: Facts) -> List[Finding]:
    """A probe that failed is reported, so a blind spot is never mistaken for a healthy machine."""
    return [
        Finding(
            id="CD001",
            severity=Severity.WARNING,
            title="The %s probe failed: %s" % (e.probe, e.error),
            detail="cudnn-doctor could not inspect this part of the machine, so findings about it may be missing.",
            fix="Re-run with `cudnn-doctor --debug check -v` and report it with `cudnn-doctor check --json` attached.",
            alias="probe-failed",
        )
        for e in facts.probe_errors
    ]


def collect_report(root: str = "/", env: Optional[Mapping[str, str]] = None, requires: Sequence[str] = (),
                   target: Optional[str] = None, smoke: Optional[dict] = None,
                   facts: Optional[Facts] = None, skip: Sequence[str] = ()) -> Report:
    """Facts plus the judgement of every rule: the one result object every renderer reads."""
    from ..rules import RuleContext, evaluate

    facts = facts if facts is not None else collect_facts(root, env)
    context = RuleContext(compat=_compat(), requires=list(requires), target=target, smoke=smoke)
    findings, ran = evaluate(facts, context)
    findings = probe_error_findings(facts) + findings
    if skip:
        from ..rules import RULES

        aliases = {r.id: r.alias for r in RULES}
        findings = [f for f in findings if not _skipped(f.id, f.alias, skip)]
        ran = [r for r in ran if not _skipped(r, aliases.get(r, ""), skip)]
    report = Report(facts=facts, findings=findings, rules_run=ran)
    if smoke is not None:
        report.extra["smoke"] = smoke
    return report


def _skipped(rule_id: str, alias: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(rule_id, p.upper()) or (alias and alias == p) for p in patterns)


def _validate_skip(patterns: Sequence[str]) -> None:
    from ..rules import RULES, evaluate  # noqa: F401  (evaluate loads the registry)
    from ..rules import registry  # noqa: F401

    known = [(r.id, r.alias) for r in RULES] + [("CD001", "probe-failed")]
    for p in patterns:
        if not any(_skipped(rid, alias, [p]) for rid, alias in known):
            error_exit("--skip %r matches no check; see `cudnn-doctor check --list-checks`" % p)


def _list_checks() -> None:
    from ..rules import RULES
    from ..rules import registry  # noqa: F401

    for r in sorted(RULES, key=lambda r: r.id):
        sys.stdout.write("%s  %-36s %s\n" % (r.id, r.alias, r.title))


def _compat():
    from ..compat import load_compat

    return load_compat()


def exit_code_for(report: Report, strict: bool) -> int:
    """0: no errors; 1: an error (or, with --strict, a warning). Renderers never decide this."""
    worst = max((f.severity.rank for f in report.findings), default=0)
    threshold = Severity.WARNING.rank if strict else Severity.ERROR.rank
    return EXIT_PROBLEMS if worst >= threshold else EXIT_OK


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
    from ..rules.policy import REQUIRE_KEYS

    return "\n\n".join("  %s: %s" % (key, text) for key, text in REQUIRE_KEYS.items())


def register(app: typer.Typer) -> None:
    @app.command(
        "check",
        help=(
            "Probe the driver, GPUs, CUDA toolkits, every cuDNN copy and the loader, judge them against the "
            "compatibility data, and print diagnoses with fixes.\n\n"
            "Exit codes: 0 no errors, 1 an error was found (--strict: or a warning), 2 usage error, "
            "3 the doctor itself failed.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor check\n\n"
            "  cudnn-doctor check -v --require 'cudnn>=9' --require 'driver>=535'\n\n"
            "  cudnn-doctor check --for dl4j==1.0.0-beta6\n\n"
            "  cudnn-doctor check --root /mnt/image --skip 'CD1*' --skip 'CD2*' --skip 'CD8*' --json\n\n"
            "What each --require key compares:\n\n" + _require_help()
        ),
    )
    def check(
        root: str = typer.Option("/", "--root", metavar="DIR",
                                 help="Inspect the filesystem under DIR as if it were / (an image, chroot, disk)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1) and nothing else."),
        fmt: Optional[str] = typer.Option(None, "--format", metavar="human|json|github|prometheus",
                                          help="Output format; github prints ::error/::warning annotations; "
                                               "prometheus writes node_exporter textfile metrics."),
        output_file: Optional[Path] = typer.Option(None, "--output-file", "-o", metavar="PATH",
                                                   help="Write the report to PATH atomically (temporary file, "
                                                        "then rename) instead of stdout."),
        node_name: Optional[str] = typer.Option(None, "--node-name", metavar="NAME",
                                                help="The node's name in --json and prometheus reports "
                                                     "(default: the host name; e.g. $SLURMD_NODENAME)."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="Show details and where facts came from."),
        quiet: int = typer.Option(0, "--quiet", "-q", count=True, help="-q: findings only; -qq: nothing."),
        strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
        require: List[str] = typer.Option([], "--require", metavar="EXPR",
                                          help="A policy such as 'cuda>=11.8', 'cudnn>=8.9,<10', 'driver>=535', "
                                               "'cc>=7.0' (repeatable)."),
        target: Optional[str] = typer.Option(None, "--for", metavar="FRAMEWORK[==VERSION]",
                                             help="Judge against a framework build: torch, tensorflow==2.15, "
                                                  "jax, dl4j==1.0.0-beta6."),
        junit_xml: Optional[Path] = typer.Option(None, "--junit-xml", metavar="PATH",
                                                 help="Also write a JUnit XML report (one test case per rule)."),
        skip: List[str] = typer.Option([], "--skip", metavar="ID",
                                       help="Leave out a check by id, alias or pattern (repeatable): "
                                            "--skip CD505, --skip 'CD8*' (e.g. driver/GPU layers for an image)."),
        list_checks: bool = typer.Option(False, "--list-checks", help="List every check (id, alias, title) and exit."),
        smoke: bool = typer.Option(False, "--smoke", help="Also run a real convolution through cuDNN."),
        color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
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
        if not os.path.isdir(root):
            error_exit("--root %s is not a folder" % root)
        _validate_policy(require, target)
        _validate_skip(skip)
        facts = collect_facts(root)
        smoke_result = _run_smoke(facts, root) if smoke else None
        report = collect_report(root, requires=require, target=target, smoke=smoke_result, facts=facts, skip=skip)
        code = exit_code_for(report, strict)
        report.extra["run"] = clock.finish(node_name or facts.host.hostname or platform.node())
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


def _run_smoke(facts: Facts, root: str = "/") -> dict:
    """Run the cuDNN smoke test on the copy a plain process would load; paths reported as inside the root."""
    from ..smoke import run_smoke

    res = next((r for name, r in sorted(facts.loader.resolved.items(), reverse=True)
                if name.startswith("libcudnn.so.") and r.path), None)
    if res is None:
        return {"ok": False, "summary": "no cuDNN library that a plain process would load was found",
                "fix": "Install cuDNN (`cudnn-doctor install ARCHIVE`, or pip install nvidia-cudnn-cuXX)."}
    host = Host(root)
    # The driver library the loader picks (it may live only on LD_LIBRARY_PATH, which the child does not get).
    libcuda = facts.loader.resolved.get("libcuda.so.1")
    driver = str(host.real(libcuda.path)) if libcuda is not None and libcuda.path else None
    result = run_smoke(str(host.real(res.path)), driver_library=driver).to_dict()
    if host.is_live:
        return result
    prefix = str(host.root)
    return {k: (v.replace(prefix, "") if isinstance(v, str) else v) for k, v in result.items()}
