"""Command-line entry point: parse options, hand work to a command module, turn crashes into exit 3."""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from . import __version__
from .commands import bench as bench_cmd
from .commands import check as check_cmd
from .commands import explain as explain_cmd
from .commands import fleet as fleet_cmd
from .commands import install as install_cmd
from .commands import matrix as matrix_cmd
from .commands import smoke as smoke_cmd
from .ui import EXIT_DOCTOR_FAILED

app = typer.Typer(
    name="cudnn-doctor",
    help=(
        "Check an NVIDIA CUDA/cuDNN stack before a framework crashes on it, and install cuDNN safely.\n\n"
        "Examples:\n\n"
        "  cudnn-doctor check            # what is installed, what will load, what is wrong\n\n"
        "  cudnn-doctor check --json     # the same as one JSON object, for CI and bug reports\n\n"
        "  cudnn-doctor matrix --cuda 12.4\n\n"
        "  cudnn-doctor explain \"Could not load library libcudnn_ops_infer.so.8\""
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo("cudnn-doctor %s" % __version__)
        raise typer.Exit(0)


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show a traceback if the doctor itself fails."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force colour on or off for every command."),
) -> None:
    """Check an NVIDIA CUDA/cuDNN stack before a framework crashes on it."""
    if debug:
        os.environ["CUDNN_DOCTOR_DEBUG"] = "1"
    if color is not None:  # ui.want_color reads these; the flag must beat an inherited NO_COLOR/FORCE_COLOR
        os.environ.pop("FORCE_COLOR" if not color else "NO_COLOR", None)
        os.environ["NO_COLOR" if not color else "FORCE_COLOR"] = "1"


for module in (check_cmd, matrix_cmd, explain_cmd, smoke_cmd, install_cmd, bench_cmd, fleet_cmd):
    module.register(app)


def main(argv: Optional[List[str]] = None) -> None:
    """Console-script entry: the doctor's own failures exit 3 with one line, not a traceback."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:]) or os.environ.get("CUDNN_DOCTOR_DEBUG")
    try:
        app(args=argv, prog_name="cudnn-doctor", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("cudnn-doctor: interrupted\n")
        sys.exit(130)
    except Exception as exc:  # the doctor itself failed; say so plainly
        if debug:
            raise
        sys.stderr.write(
            "cudnn-doctor: internal error: %s: %s (run again with --debug for a traceback, "
            "and report it with the output of `cudnn-doctor check --json`)\n" % (type(exc).__name__, exc)
        )
        sys.exit(EXIT_DOCTOR_FAILED)
