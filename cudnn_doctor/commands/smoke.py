"""The `smoke` subcommand: run a real convolution through cuDNN and check it against the CPU."""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

import typer

from ..render.envelope import dumps, envelope
from ..ui import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, console, error_exit
from .libraries import validate_library
from .options import seconds

def smoke(
    library: Optional[str] = typer.Option(None, "--library", metavar="PATH",
                                          help="Test this cuDNN library file instead of the one the loader picks."),
    device: int = typer.Option(0, "--device", min=0, metavar="N", help="CUDA device index (after CUDA_VISIBLE_DEVICES)."),
    all_copies: bool = typer.Option(False, "--all", help="Test every cuDNN copy found on this machine."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    timeout: float = typer.Option(60.0, "--timeout", callback=seconds(1.0), metavar="S",
                                 help="Seconds allowed per library."),
    driver_lib: Optional[str] = typer.Option(None, "--driver-library", hidden=True, metavar="PATH",
                                             help="Use this libcuda instead of the one the loader picks."),
) -> None:
    """Run a small float32 convolution through cuDNN on the GPU and compare it with the CPU.

    Exit codes: 0 every library passed, 1 a library failed (or none was found), 2 bad input.
    """
    from ..smoke import run_smoke

    if library and all_copies:
        error_exit("--library and --all cannot be combined", EXIT_USAGE)
    if driver_lib and not os.path.exists(driver_lib):
        error_exit("--driver-library %s: no such file" % driver_lib, EXIT_USAGE)
    problem = ""
    if library:
        validate_library(library)
        libraries, driver = [library], driver_lib
    else:
        from ..which_cudnn import CannotTest, find_libraries

        try:
            choice = find_libraries(all_copies, driver_given=bool(driver_lib))
        except CannotTest as stop:
            error_exit(stop.message, stop.code)
        libraries, driver, problem = choice.libraries, driver_lib or choice.driver, choice.problem
    from ..diagnose import fixes_here

    with fixes_here():  # a failure's fix is typed on this machine, by the user who ran smoke
        results = [run_smoke(lib, device=device, timeout=timeout, driver_library=driver) for lib in libraries]
    code = EXIT_OK if results and all(r.ok for r in results) else EXIT_PROBLEMS
    if as_json:
        payload: Dict[str, Any] = {"results": [r.to_dict() for r in results]}
        if problem:
            payload["problem"] = problem
        typer.echo(dumps(envelope("smoke", code, **payload)))
    else:
        from ..render.smoke_human import render_smoke

        render_smoke(results, problem, console())
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("smoke", help=(
        "Run a small float32 convolution through cuDNN on the GPU, in a child process, and compare it with a "
        "CPU reference. It proves the library, driver and GPU work together, and turns any failure into a "
        "diagnosis with a fix.\n\n"
        "Exit codes: 0 every library passed, 1 one failed (or none was found), 2 bad input.\n\n"
        "Examples:\n\n"
        "  cudnn-doctor smoke                      # the cuDNN a plain process loads\n\n"
        "  cudnn-doctor smoke --all                # every cuDNN copy on this machine\n\n"
        "  cudnn-doctor smoke --library /usr/lib/x86_64-linux-gnu/libcudnn.so.9 --device 1 --json"))(smoke)
