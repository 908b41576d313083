"""The `fleet` subcommand: merge node reports written by `check --json` and say which nodes to look at first."""
from __future__ import annotations

import os
import re
import sys
from typing import List, Optional

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, error_exit

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_age(text: str) -> float:
    """90, 90s, 30m, 24h, 7d -> seconds."""
    m = _AGE.match(text)
    if not m:
        raise ValueError("expected a number with an optional unit s, m, h or d, such as 24h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def fleet_exit_code(fleet, strict: bool) -> int:
    """1: a node has an error, or no usable report; --strict: or a warning, or a report that could not be used."""
    verdicts = fleet.hosts_by_verdict
    if verdicts.get("error") or not fleet.nodes:
        return EXIT_PROBLEMS
    if strict and (verdicts.get("warning") or fleet.rejected or fleet.stale):
        return EXIT_PROBLEMS
    return EXIT_OK


def register(app: typer.Typer) -> None:
    @app.command(
        "fleet",
        help=(
            "Merge many nodes' `check --json` reports: nodes by verdict, configuration groups with the outliers "
            "highlighted, and each finding with the nodes that have it (Slurm hostlist notation). Reads reports "
            "only; it never probes a machine.\n\n"
            "Exit codes: 0 no node has an error, 1 a node has an error or no report was usable (--strict: or a "
            "warning, or a report that could not be used), 2 usage error.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor fleet /shared/cudnn-doctor/reports\n\n"
            "  cat node*.json | cudnn-doctor fleet - --json\n\n"
            "  cudnn-doctor fleet reports/ --max-age 24h --strict\n\n"
            "  cudnn-doctor fleet reports/ --image oci-archive:train.tar   (which nodes can run this image)"
        ),
    )
    def fleet(
        sources: List[str] = typer.Argument(..., metavar="SOURCE...",
                                            help="Report files, folders (searched recursively for *.json) or - "
                                                 "for reports on stdin (one per line or concatenated)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1) and nothing else."),
        max_age: Optional[str] = typer.Option(None, "--max-age", metavar="AGE",
                                              help="Leave out (and name) reports older than AGE: 90s, 30m, 24h, 7d."),
        strict: bool = typer.Option(False, "--strict",
                                    help="Exit 1 on warnings and on reports that could not be used too."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, show_default=False,
                                    help="Show full host lists."),
        color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off."),
        wide: bool = typer.Option(False, "--wide", help="Never wrap or cut a table cell (for a pager or a file)."),
        image: Optional[str] = typer.Option(None, "--image", metavar="REF",
                                            help="Judge this container image on every node (oci:DIR[:TAG], "
                                                 "oci-archive:FILE, docker-archive:FILE): runs, refused by the "
                                                 "runtime, fails, or runs with warnings."),
    ) -> None:
        max_age_s = None
        if max_age is not None:
            try:
                max_age_s = parse_age(max_age)
            except ValueError as exc:
                error_exit("--max-age %r: %s" % (max_age, exc))
        for source in sources:
            if source != "-" and not os.path.lexists(source):
                error_exit("SOURCE %s does not exist" % source)
        if sources.count("-") > 1:
            error_exit("- (stdin) can be given once")
        from ..fleet.load import load
        from ..fleet.merge import merge

        image_facts = None
        if image is not None:  # read first: a refused image is one line before any report is parsed
            from .check_image import read_image_facts

            image_facts = read_image_facts(image, None)
        nodes, rejected, catalogue = load(sources, sys.stdin)
        merged = merge(nodes, rejected, catalogue, max_age_s=max_age_s)
        if image_facts is not None:
            _image_fleet(merged, catalogue, image_facts, as_json, strict, color)
        code = fleet_exit_code(merged, strict)
        if as_json:
            from ..fleet.render import fleet_json
            from ..render.envelope import dumps

            sys.stdout.write(dumps(fleet_json(merged, code)) + "\n")
        else:
            from ..fleet.render import render_fleet
            from ..ui import console

            render_fleet(merged, console(color=color), verbose=verbose, wide=wide)
            if not merged.nodes:
                sys.stderr.write("cudnn-doctor: no usable report in %s\n" % " ".join(sources))
        raise typer.Exit(code)


def _image_fleet(merged, catalogue, image_facts, as_json: bool, strict: bool, color: Optional[bool]) -> None:
    """fleet --image: each node's answer to the image; exit 1 when a node refuses it or would fail (--strict: or
    warns), or no report was usable."""
    from ..fleet.image import hosts_by_verdict, image_fleet_json, judge_fleet, render_image_fleet

    judged = judge_fleet(merged, catalogue, image_facts)
    by_verdict = hosts_by_verdict(judged.classes)
    bad = by_verdict["refused"] or by_verdict["fails"] or not merged.nodes or strict and (
        by_verdict["warnings"] or merged.rejected or merged.stale)
    code = EXIT_PROBLEMS if bad else EXIT_OK
    if as_json:
        from ..render.envelope import dumps

        sys.stdout.write(dumps(image_fleet_json(merged, judged, image_facts, code)) + "\n")
    else:
        from ..ui import console

        render_image_fleet(merged, judged, image_facts, console(color=color))
        if not merged.nodes:
            sys.stderr.write("cudnn-doctor: no usable report\n")
    raise typer.Exit(code)
