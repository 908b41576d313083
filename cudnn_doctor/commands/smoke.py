"""The `smoke` subcommand: run a real convolution through cuDNN and check it against the CPU."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Tuple

import typer

from ..render.envelope import dumps, envelope
from ..ui import EXIT_DOCTOR_FAILED, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, console, error_exit
from .options import seconds

if TYPE_CHECKING:
    from ..smoke import SmokeResult


def _load_facts():
    """The `check` probes, imported only when no --library was given (they take a while)."""
    from ..diagnose import collect_facts

    return collect_facts(root="/", env=None)


def _loader_facts(root: str = "/"):
    """Only what the loader resolves for the cuDNN sonames and libcuda.so.1: a fraction of `check`'s probes."""
    from ..host import Host
    from ..model import Facts
    from ..probes.loader import LoaderView
    from ..smoke.choose import SONAMES

    facts = Facts()
    view = LoaderView(Host(root))
    for name in SONAMES + ("libcuda.so.1",):
        facts.loader.resolved[name] = view.resolve(name)
    return facts


def _validate_library(path: str) -> None:
    if not os.path.lexists(path):
        error_exit("--library %s: no such file" % path, EXIT_USAGE)
    if os.path.isdir(path):
        error_exit("--library %s is a folder; give the library file, e.g. %s/libcudnn.so.9" % (path, path), EXIT_USAGE)
    from ..bounded_io import NotRegularFile, open_regular

    try:
        with open_regular(path) as fh:  # a FIFO here would block the open until a writer came
            magic = fh.read(4)
    except NotRegularFile as exc:
        error_exit("--library %s is a %s, not a library file" % (path, exc.kind), EXIT_USAGE)
    except OSError as exc:
        error_exit("--library %s cannot be read: %s" % (path, exc.strerror or exc), EXIT_USAGE)
    if magic != b"\x7fELF":
        error_exit("--library %s is not a shared library (no ELF header)" % path, EXIT_USAGE)


def _discover(all_copies: bool, driver_given: bool = False) -> Tuple[List[str], Optional[str], str]:
    """(libraries to test, libcuda to use, why none were found)."""
    from ..smoke.choose import choose_libraries, driver_library

    try:
        # The copy a plain process loads needs only the loader's view; every probe only for --all or to say why.
        facts = None if all_copies else _loader_facts()
        libraries = choose_libraries(facts, all_copies=all_copies) if facts is not None else []
        if not libraries:
            facts = _load_facts()
            libraries = choose_libraries(facts, all_copies=all_copies)
    except ImportError as exc:
        error_exit("cannot look for cuDNN copies (%s); pass --library PATH" % exc, EXIT_DOCTOR_FAILED)
    why = ""
    driver = driver_library(facts)
    if driver is None and not driver_given and "libcuda.so.1" in facts.loader.resolved:
        # The layer below cuDNN is missing: no convolution can run, whatever cuDNN there is (or is not).
        why = ("no NVIDIA driver was found (libcuda.so.1 is not on the loader's search path), so no GPU can run "
               "the test: install the NVIDIA driver, or start the container with `--gpus all`; then run "
               "`cudnn-doctor check`%s" % ("" if libraries else ", which also says how to install cuDNN"))
        return [], None, why
    if not libraries:
        if facts.cudnn:
            count = len(facts.cudnn)
            why = ("no cuDNN is on the loader's search path, but %d %s found elsewhere: test with "
                   "`cudnn-doctor smoke --all` or `--library PATH`" % (count, "copy was" if count == 1 else "copies were"))
        else:
            why = "no cuDNN library was found; install one with `cudnn-doctor install`"
    return libraries, driver, why


def _details(result: "SmokeResult") -> List[str]:
    lines = []
    parts = []
    if result.cudart_version:
        parts.append("built for CUDA %s" % result.cudart_version)
    if result.driver_library:
        drv = "driver %s" % result.driver_library
        if result.driver_cuda_version:
            drv += " (CUDA %s)" % result.driver_cuda_version
        parts.append(drv)
    if result.total_ms is not None:
        parts.append("%.0f ms in all" % result.total_ms)
    if parts:
        lines.append(" · ".join(parts))
    if not result.ok or result.fallback:
        if result.error_message and result.error_message not in result.summary:
            lines.append("error: %s" % result.error_message)
        if result.cudnn_answer not in (None, "CUDNN_STATUS_SUCCESS") and result.status_api != "cudnn":
            said = result.cudnn_answer
            if result.cudnn_answer_detail:
                said += " (%s)" % result.cudnn_answer_detail
            lines.append("cuDNN's cudnnCreate: %s" % said)
        if result.diagnosis:
            lines.append("why: %s" % result.diagnosis)
        if result.fix:
            lines.append("fix: %s" % result.fix)
    return lines


def _render(results, problem: str) -> None:
    from rich.text import Text  # imported here: every command's start-up would pay for it otherwise

    from ..render.human import MARKS

    out = console()
    lines = [("error", problem, [])] if problem else []
    lines += [("ok" if r.ok and not r.fallback else "warning" if r.ok else "error", r.summary, _details(r))
              for r in results]
    for state, summary, details in lines:
        mark, style = MARKS[state]
        head = Text()
        head.append(mark, style=style)
        head.append(" " + summary)
        out.print(head)
        for line in details:
            out.print(Text("    " + line))


def smoke(
    library: Optional[str] = typer.Option(None, "--library", metavar="PATH",
                                          help="Test this cuDNN library file instead of the one the loader picks."),
    device: int = typer.Option(0, "--device", min=0, metavar="N", help="CUDA device index (after CUDA_VISIBLE_DEVICES)."),
    all_copies: bool = typer.Option(False, "--all", help="Test every cuDNN copy found on this machine."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    timeout: float = typer.Option(60.0, "--timeout", callback=seconds(1.0), metavar="S", help="Seconds allowed per library."),
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
        _validate_library(library)
        libraries, driver = [library], driver_lib
    else:
        libraries, driver, problem = _discover(all_copies, driver_given=bool(driver_lib))
        driver = driver_lib or driver
    results = [run_smoke(lib, device=device, timeout=timeout, driver_library=driver) for lib in libraries]
    code = EXIT_OK if results and all(r.ok for r in results) else EXIT_PROBLEMS
    if as_json:
        payload = {"results": [r.to_dict() for r in results]}
        if problem:
            payload["problem"] = problem
        typer.echo(dumps(envelope("smoke", code, **payload)))
    else:
        _render(results, problem)
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
