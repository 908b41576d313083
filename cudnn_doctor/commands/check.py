"""The `check` subcommand: probe the machine, judge it, render the report, choose the exit code."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..diagnose import DEFAULT_TIMEOUT
from . import completion as values
from .check_run import MIN_TIMEOUT, CheckOptions, run_check
from .options import seconds


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
        timeout: float = typer.Option(DEFAULT_TIMEOUT, "--timeout", metavar="SECONDS", callback=seconds(MIN_TIMEOUT),
                                      help="Time budget for the whole run; a probe stuck longer (a hung network "
                                           "mount) is abandoned, named in the report (CD002) and the exit code "
                                           "is 4."),
    ) -> None:
        options = CheckOptions(root=root, env=env, as_json=as_json, fmt=fmt, output_file=output_file,
                               node_name=node_name, verbose=verbose, quiet=quiet, strict=strict, require=require,
                               target=target, junit_xml=junit_xml, skip=skip, image=image, against=against,
                               list_checks=list_checks, smoke=smoke, ready=ready, color=color, timeout=timeout)
        raise typer.Exit(run_check(options, early=ctx.obj))
