"""The `install` and `rollback` subcommands: a safe, verified, reversible cuDNN install."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from ..render.envelope import dumps, envelope
from ..render.install_human import plan_lines, result_lines, rollback_lines
from ..ui import EXIT_OK, EXIT_PROBLEMS, console, error_exit
from . import completion as values
from .options import seconds

HELP = """Install cuDNN from an NVIDIA archive, a URL, or a release number, and undo it with `rollback`.

SOURCE is a cuDNN tarball (.tar.xz, .tgz), a Windows .zip, an nvidia-cudnn-cuXX wheel, or an https
URL of one; or leave it out and pass --version 9.1.0 --cuda 12 to fetch NVIDIA's release.

Nothing is changed until the archive has been fully checked: unsafe members, a file that is not
cuDNN, a checksum mismatch, or a cuDNN built for a CUDA the toolkit cannot use each stop it with
one line. Files are staged next to the target, every replaced file is kept, and a journal lets the
next run undo an install that was killed part-way. A second install into the same toolkit fails at
once (or waits --lock-wait seconds).

After installing it loads the new library (a failed load check undoes the install and exits 1),
runs `check` on the result (--no-check skips it) and the cuDNN smoke test (--no-smoke skips it).
Exit status: 0 once the files are installed and load, even when `check` finds problems elsewhere
or the smoke test fails: those need a GPU and driver, which an install cannot fix (run
`cudnn-doctor smoke` after fixing them); 1 for a refusal or failure; 2 for a usage error.

Each install keeps what it replaced (about 1 GB for a full cuDNN) in the target's .cudnn-doctor
folder so `rollback` can restore it; the output says how much. `rollback --prune N` drops all but
the newest N of those backups.

Examples:

\b
  cudnn-doctor install cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz --dry-run
  sudo cudnn-doctor install --version 9.1.0 --cuda 12 --cuda-home /usr/local/cuda-12.4
  cudnn-doctor install nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl --prefix ~/cudnn
  sudo cudnn-doctor rollback --cuda-home /usr/local/cuda-12.4
"""

def _progress_callback(enabled: bool):
    """(download update, stage update, stop): one bar on stderr over downloading, unpacking and verifying, only
    when stderr is a terminal (pipes and CI logs stay clean)."""
    if not enabled or not sys.stderr.isatty():
        return None, None, lambda: None
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeElapsedColumn, TransferSpeedColumn

    bar = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                   TransferSpeedColumn(), TimeElapsedColumn(), console=console(stderr=True), transient=True)
    task = bar.add_task("downloading", total=None)
    bar.start()

    def update(done: int, total: Optional[int]) -> None:
        bar.update(task, completed=done, total=total)

    def stage(what: str, done: int) -> None:
        # Unpacking has no total in advance (a .tar.xz is read once, front to back): the bar pulses and counts.
        bar.update(task, description=what if len(what) <= 60 else what[:57] + "...", completed=done, total=None)

    return update, stage, bar.stop


def _interrupted(signalled, command: str) -> None:
    """One line for an install or rollback stopped by SIGINT, SIGTERM or SIGHUP, and the shell's 128+N code."""
    from ..install.errors import interruption

    refusal = interruption(signalled, command)
    error_exit(str(refusal), refusal.code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command("install", help=HELP)
    def install_command(
        source: Optional[str] = typer.Argument(None, metavar="SOURCE", help="Archive file, wheel or https URL."),
        cuda_home: Optional[str] = typer.Option(None, "--cuda-home", metavar="DIR",
                                                help="Toolkit to install into (default: $CUDA_HOME, $CUDA_PATH, "
                                                     "/usr/local/cuda)."),
        prefix: Optional[str] = typer.Option(None, "--prefix", metavar="DIR",
                                             help="Install into DIR/include and DIR/lib instead of a toolkit."),
        sha256: Optional[str] = typer.Option(None, "--sha256", metavar="HEX", help="Expected SHA-256 of the archive."),
        version: Optional[str] = typer.Option(None, "--version", metavar="X.Y.Z", autocompletion=values.cudnn_versions,
                                               help="cuDNN release to fetch, e.g. 9.1.0."),
        cuda: Optional[str] = typer.Option(None, "--cuda", metavar="N", autocompletion=values.cuda_majors,
                                            help="CUDA major of the build to fetch, e.g. 12."),
        manifest_url: Optional[str] = typer.Option(None, "--manifest-url", metavar="URL",
                                                   help="redistrib_<version>.json to resolve --version with "
                                                        "(default: NVIDIA's)."),
        force: bool = typer.Option(False, "--force", help="Install even if the CUDA build, platform or "
                                   "load check does not fit."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show every file and where it goes; change nothing."),
        no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the cuDNN smoke test after installing."),
        no_check: bool = typer.Option(False, "--no-check", help="Skip running `check` on the result."),
        as_json: bool = typer.Option(False, "--json", help="Print the plan/result as one JSON object."),
        allow_http: bool = typer.Option(False, "--allow-http", help="Allow a plain-http download; needs --sha256."),
        lock_wait: float = typer.Option(0.0, "--lock-wait", metavar="S", show_default=False, callback=seconds(0.0),
                                        help="Seconds to wait for another install into "
                                        "the same target (default: fail at once)."),
    ) -> None:
        from ..install import Refusal, Request, run_install
        from ..install.errors import unexpected_failure
        from ..install.signals import Interrupted, interrupt_on_signals

        if cuda_home and prefix:
            error_exit("--cuda-home and --prefix exclude each other; pass one of them", 2)
        if source and version:
            error_exit("give either SOURCE or --version/--cuda, not both", 2)
        req = Request(source=source, version=version, cuda=cuda, manifest_url=manifest_url, cuda_home=cuda_home,
                      prefix=prefix, sha256=sha256, force=force, dry_run=dry_run, smoke=not no_smoke,
                      allow_http=allow_http, lock_wait=lock_wait, env=dict(os.environ), check=not no_check)
        progress, req.on_stage, stop = _progress_callback(not as_json)
        try:
            with interrupt_on_signals():
                report = run_install(req, progress=progress)
        except Interrupted as signalled:
            stop()
            _interrupted(signalled, "install")
            return
        except Refusal as refusal:
            stop()
            error_exit(str(refusal), refusal.code)
            return
        except OSError as exc:  # the engine reports its own OS errors as refusals; this is the last resort
            stop()
            error_exit(str(unexpected_failure("install", exc)), EXIT_PROBLEMS)
            return
        stop()
        code = report.refusal_code or EXIT_OK
        if as_json:
            typer.echo(dumps(envelope("install", code, **report.to_dict())))
        else:
            out = console()
            lines = plan_lines(report.plan, True) if report.dry_run else result_lines(report)
            for line in lines:
                out.print(line, markup=False, highlight=False, soft_wrap=True)  # commands stay whole
            if report.dry_run and not report.refusal:
                out.print("Dry run: nothing was changed.", markup=False)
        if report.refusal:
            error_exit(report.refusal, code)
        raise typer.Exit(code)

    @app.command("rollback", help=ROLLBACK_HELP)
    def rollback_command(
        cuda_home: Optional[str] = typer.Option(None, "--cuda-home", metavar="DIR",
                                                help="Toolkit (default: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)."),
        prefix: Optional[str] = typer.Option(None, "--prefix", metavar="DIR", help="The --prefix DIR of the install."),
        force: bool = typer.Option(False, "--force", help="Roll back even if files changed since the install; "
                                   "the changed files are moved into .cudnn-doctor/set-aside, not deleted."),
        prune: Optional[int] = typer.Option(None, "--prune", min=0, metavar="KEEP", help="Roll nothing back; "
                                            "drop the backups of all but the newest KEEP installs."),
        as_json: bool = typer.Option(False, "--json", help="Print the result as one JSON object."),
        lock_wait: float = typer.Option(0.0, "--lock-wait", metavar="S", show_default=False, callback=seconds(0.0),
                                        help="Seconds to wait for a running install (default: fail at once)."),
    ) -> None:
        from ..install import Refusal, run_rollback
        from ..install.errors import unexpected_failure
        from ..install.signals import Interrupted, interrupt_on_signals

        if cuda_home and prefix:
            error_exit("--cuda-home and --prefix exclude each other; pass one of them", 2)
        try:
            with interrupt_on_signals():
                report = run_rollback(cuda_home, prefix, dict(os.environ), lock_wait, force=force, prune_keep=prune)
        except Interrupted as signalled:
            _interrupted(signalled, "rollback")
            return
        except Refusal as refusal:
            error_exit(str(refusal), refusal.code)
            return
        except OSError as exc:
            error_exit(str(unexpected_failure("rollback", exc)), EXIT_PROBLEMS)
            return
        if as_json:
            typer.echo(dumps(envelope("rollback", EXIT_OK, **report)))
            raise typer.Exit(EXIT_OK)
        out = console()
        for line in rollback_lines(report):
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_OK)


ROLLBACK_HELP = ("Undo the last `cudnn-doctor install` into a toolkit or prefix, byte for byte (links and modes "
                 "too); repeat to undo earlier installs. Also repairs an install that was killed part-way.\n\n"
                 "It refuses, changing nothing, when a file the install placed was changed since (say by apt or "
                 "a manual copy); --force rolls back anyway and moves such files into the target's "
                 ".cudnn-doctor/set-aside folder. --prune KEEP rolls nothing back: it frees the space of old "
                 "backups (each install keeps what it replaced, about 1 GB for a cuDNN), keeping the newest KEEP "
                 "installs undoable.\n\nExamples:\n\n"
                 "  sudo cudnn-doctor rollback --cuda-home /usr/local/cuda-12.4\n\n"
                 "  sudo cudnn-doctor rollback --cuda-home /usr/local/cuda-12.4 --prune 1\n\n"
                 "  cudnn-doctor rollback --prefix ~/cudnn --json")
