"""The `matrix` subcommand: parse the question, ask the knowledge (cudnn_doctor/knowledge: lookup.py, pair.py)
without probing, and hand the answer to its renderer (render/matrix.py) or the JSON envelope."""
from __future__ import annotations

import sys
from typing import Optional

import typer

from ..ui import EXIT_PROBLEMS, EXIT_OK, error_exit


def register(app: typer.Typer) -> None:
    @app.command(
        "matrix",
        help=(
            "Look up the compatibility knowledge, without probing this machine. Every row names its source.\n\n"
            "Exit codes: 0 answered (a pair, or a GPU with a driver, CUDA or cuDNN, that does not work exits 1), "
            "2 bad input.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor matrix --cuda 12.4                    # cuDNN builds for CUDA 12.4 and its drivers\n\n"
            "  cudnn-doctor matrix --cudnn 9.1.0                  # its CUDA builds, driver and GPU needs\n\n"
            "  cudnn-doctor matrix --cuda 12.4 --cudnn 9.1.0      # does this pair work? (add --driver, --gpu, "
            "--cc)\n\n"
            "  cudnn-doctor matrix --driver 418.39                # which CUDA releases that driver can run\n\n"
            "  cudnn-doctor matrix --cuda 12.8 --driver 550 --gpu 'RTX 5090'  # that CUDA with that driver and GPU\n\n"
            "  cudnn-doctor matrix --gpu B200 --driver 550           # can this driver run this GPU, and which CUDA\n\n"
            "  cudnn-doctor matrix --gpu 'RTX 4090' --cuda 12.8      # does CUDA 12.8 build for it; which driver\n\n"
            "  cudnn-doctor matrix --gpu 'GTX 1080' --cudnn 9.11     # does cuDNN 9.11 ship code for it\n\n"
            "  cudnn-doctor matrix --for dl4j --json              # Deeplearning4j's CUDA/cuDNN pairs"
        ),
    )
    def matrix(
        cuda: Optional[str] = typer.Option(None, "--cuda", metavar="X.Y", help="A CUDA release, e.g. 12.4."),
        cudnn: Optional[str] = typer.Option(None, "--cudnn", metavar="X.Y.Z", help="A cuDNN release, e.g. 9.1.0."),
        driver: Optional[str] = typer.Option(None, "--driver", metavar="VERSION",
                                             help="A driver, e.g. 535.104.05, or a branch, e.g. 580."),
        gpu: Optional[str] = typer.Option(None, "--gpu", metavar="NAME",
                                          help="A GPU by name, e.g. 'H100': with --driver, --cuda or --cudnn, "
                                               "or alone."),
        cc: Optional[str] = typer.Option(None, "--cc", metavar="N.M",
                                         help="A GPU's compute capability, e.g. 8.6 (instead of --gpu)."),
        framework: Optional[str] = typer.Option(None, "--for", metavar="FRAMEWORK[==VERSION]",
                                                help="dl4j, tensorflow, torch or jax, optionally ==VERSION."),
        platform: str = typer.Option("linux", "--platform", metavar="linux|windows",
                                     help="Which driver column to use (default linux)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1)."),
    ) -> None:
        # The pair question: cuDNN with CUDA, or CUDA with a driver (`--cuda 12.8 --driver 550`), each with a GPU;
        # otherwise a GPU with a driver, a CUDA or a cuDNN (or by itself) is the one-GPU question.
        pair = bool(cuda and (cudnn or driver))
        one_gpu = bool((gpu or cc) and not pair)
        asked = [(k, v) for k, v in (("cuda", cuda), ("cudnn", cudnn), ("driver", driver), ("for", framework)) if v]
        if (pair or one_gpu) and framework:
            error_exit("--for cannot be combined with --cuda, --cudnn, --driver, --gpu or --cc")
        if not (pair or one_gpu) and len(asked) != 1:
            error_exit("give one of --cuda, --cudnn, --driver or --for, or --cuda with --cudnn (a pair question), "
                       "or --gpu with any of them")
        if platform not in ("linux", "windows"):
            error_exit("--platform must be linux or windows, not %r" % platform)
        from ..knowledge import load_compat

        compat = load_compat()
        kind, value = ("pair", "") if pair else (("gpu", "") if one_gpu else asked[0])
        try:
            if pair and cuda:
                data = compat.pair_lookup(cuda, cudnn, driver, platform, gpu, cc)
            elif one_gpu:
                data = compat.lookups.gpu_lookup(gpu, cc, driver, cuda, cudnn, platform)
            elif kind == "cuda":
                data = compat.cuda_lookup(value, platform)
            elif kind == "cudnn":
                data = compat.cudnn_lookup(value, platform)
            elif kind == "driver":
                data = compat.driver_lookup(value, platform)
            else:
                data = compat.framework_lookup(value)
        except ValueError as exc:
            error_exit(str(exc))
        code = EXIT_PROBLEMS if (pair or one_gpu) and data["ok"] is False else EXIT_OK
        if as_json:
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("matrix", code, **data)) + "\n")
        else:
            from ..render.matrix import render_gpu, render_matrix, render_pair
            from ..ui import console

            if pair:
                render_pair(data, console())
            elif one_gpu:
                render_gpu(data, console())
            else:
                render_matrix(kind, data, console())
        raise typer.Exit(code)
