"""The `bench` subcommand: how fast cuDNN is on this GPU, against plain CUDA, the CPU, the datasheet and torch."""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Dict, List, Optional

import typer

from ..model import Severity
from ..render.envelope import dumps, envelope
from ..ui import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, console, error_exit
from . import completion as values
from .libraries import validate_library
from .options import seconds

MIB = 1 << 20


def _plan(quick: bool, shapes: List[str], dtypes: List[str], no_cpu: bool, workspace_mib: Optional[int]):
    from ..bench.run import BenchPlan
    from ..bench.shapes import DTYPES, QUICK_LAYERS, parse_shape, resnet50

    try:
        custom = [parse_shape(s) for s in shapes]
    except ValueError as exc:
        error_exit(str(exc), EXIT_USAGE)
    for d in dtypes:
        if d not in DTYPES:
            error_exit("--dtype %s: choose from %s" % (d, ", ".join(DTYPES)), EXIT_USAGE)
    layers = custom or resnet50(64)
    if quick and not custom:
        layers = [s for s in layers if s.name in QUICK_LAYERS]
    default_dtypes = ["fp16"] if quick else list(DTYPES)
    plan = BenchPlan(layers=layers, dtypes=list(dtypes) or default_dtypes, cpu=not no_cpu,
                     workspace_limit=workspace_mib * MIB if workspace_mib else None)
    if quick:
        plan.directions = ["fwd"]
        plan.budget_s, plan.target_ms, plan.seed_target_ms, plan.cpu_budget_s = 4.0, 3.0, 5.0, 1.0
        plan.graph_compile = False  # an engine that compiles its kernel costs about a second: not in seconds
    return plan


# --- rendering ---------------------------------------------------------------------------------------------

def _progress_display(total: int):
    """A rich progress bar on a terminal's stderr; None when piped (CI logs stay clean)."""
    if not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                   TimeElapsedColumn(), console=console(stderr=True), transient=True)
    task_id = bar.add_task("starting", total=max(1, total))

    def update(state: Dict[str, Any]) -> None:
        bar.update(task_id, completed=state.get("done", 0), description=str(state.get("stage") or ""))
    return bar, update


def bench(
    library: Optional[str] = typer.Option(None, "--library", metavar="PATH", help="Benchmark this cuDNN library."),
    device: int = typer.Option(0, "--device", min=0, metavar="N", help="CUDA device index."),
    quick: bool = typer.Option(False, "--quick", help="A few seconds: the small network and three layers, forward."),
    shapes: List[str] = typer.Option([], "--shape", metavar="N,C,H,W,K,R,S[,stride[,pad]]",
                                     help="Your own convolution layer instead of ResNet-50's (repeatable)."),
    dtypes: List[str] = typer.Option([], "--dtype", metavar="TYPE", autocompletion=values.dtypes,
                                     help="fp32, tf32, fp16 or bf16 (repeatable)."),
    no_cpu: bool = typer.Option(False, "--no-cpu", help="Skip the CPU baseline."),
    workspace_mib: Optional[int] = typer.Option(None, "--workspace-limit", min=0, metavar="MIB",
                                                help="Workspace cuDNN may use while searching algorithms "
                                                     "(default: 4 GiB or half the free memory)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    timeout: float = typer.Option(60.0, "--timeout", callback=seconds(5.0), metavar="S",
                                  help="Seconds allowed in all; layers not reached by then are listed as skipped."),
    nvrtc: Optional[str] = typer.Option(None, "--nvrtc", metavar="PATH", help="libnvrtc for the no-cuDNN path."),
    driver_lib: Optional[str] = typer.Option(None, "--driver-library", hidden=True, metavar="PATH"),
    seed_batch: int = typer.Option(32, "--seed-batch", hidden=True, min=1, metavar="N"),
) -> None:
    """Measure cuDNN on this GPU: a small network on the CPU / plain CUDA / cuDNN, and ResNet-50's layers."""
    from ..bench.run import run_bench

    started = time.monotonic()
    plan = _plan(quick, shapes, dtypes, no_cpu, workspace_mib)
    plan.budget_s = plan.budget_s if quick else max(1.0, timeout - 10.0)
    plan.seed_batch = seed_batch
    if driver_lib and not os.path.exists(driver_lib):
        error_exit("--driver-library %s: no such file" % driver_lib, EXIT_USAGE)
    if nvrtc and not os.path.exists(nvrtc):
        error_exit("--nvrtc %s: no such file" % nvrtc, EXIT_USAGE)
    if library:
        validate_library(library)
    from ..which_cudnn import CannotTest, bench_libraries

    try:
        lib, driver, nvrtc_path = bench_libraries(library, nvrtc)
    except CannotTest as stop:
        error_exit(stop.message, stop.code)
    bar, update = (None, None) if as_json else _progress_display(plan.total_steps())
    if bar is not None:
        bar.start()
    try:
        raw = run_bench(lib, plan, device=device, driver_library=driver_lib or driver, nvrtc_library=nvrtc_path,
                        timeout=timeout, on_progress=update)
    finally:
        if bar is not None:
            bar.stop()
    if (raw.get("error") or {}).get("api") in ("cuda", "loader") and "name" not in (raw.get("device") or {}):
        err = raw["error"]
        error_exit("no usable NVIDIA GPU: %s %s" % (err.get("func", ""), err.get("message") or
                                                     "returned %s" % err.get("code")), EXIT_PROBLEMS)
    from ..bench.report import build_result

    from ..diagnose import fixes_here

    with fixes_here():  # the findings' fixes are typed on this machine, by the user who ran bench
        result = build_result(raw, plan, time.monotonic() - started, os.environ)
    failed = result.error is not None or any(f.severity == Severity.ERROR for f in result.findings)
    code = EXIT_PROBLEMS if failed else EXIT_OK
    if as_json:
        typer.echo(dumps(envelope("bench", code, **result.to_dict())))
    else:
        from ..render.bench_human import render_bench

        render_bench(result, console())
        if result.error is not None:
            err = result.error
            what = ("the child crashed (%s)" % err["crashed"] if err.get("crashed") else
                    "it ran out of time (%ss)" % err["timeout"] if err.get("timeout") else
                    "%s %s" % (err.get("func", ""), err.get("message") or err.get("detail") or err.get("code", "")))
            sys.stderr.write("cudnn-doctor: error: bench stopped at %s: %s\n" % (err.get("stage") or "start", what))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("bench", help=(
        "Measure how fast cuDNN runs on this GPU: a small network's training step on the CPU, on the GPU "
        "without cuDNN and with cuDNN, ResNet-50's convolution layers per data type with cuDNN's chosen "
        "algorithms, their "
        "workspace and the no-workspace alternative, against the GPU's datasheet peak. Every first result is "
        "checked against the CPU.\n\n"
        "Exit codes: 0 measured, 1 no GPU, no cuDNN or a wrong result, 2 bad input.\n\n"
        "Examples:\n\n"
        "  cudnn-doctor bench                       # about a minute\n\n"
        "  cudnn-doctor bench --quick --json        # a few seconds, for CI\n\n"
        "  cudnn-doctor bench --shape 32,256,28,28,256,3,3,1,1 --dtype fp16"))(bench)
