"""Command-line entry point: parse options, hand work to a command module, turn crashes into exit 3."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, List, Optional

from . import __version__
from .ui import EXIT_DOCTOR_FAILED, ROOT_OPTIONS, RootFlags, ascii_safe_streams

if TYPE_CHECKING:
    import typer  # imported when the app is built, after the early native child has started

    from .host import NativeSession

# Subcommand -> the module that registers it (and any others it defines). A run imports only the module of the
# command it names: each module pulls in what its command needs, and `check` is run thousands of times a day.
COMMANDS = {"check": "check", "matrix": "matrix", "explain": "explain", "smoke": "smoke", "install": "install",
            "rollback": "install", "bench": "bench", "fleet": "fleet", "update": "update",
            "pick": "pick", "fix": "fix"}
# order in --help
MODULE_ORDER = ("check", "pick", "fix", "matrix", "explain", "smoke", "install", "bench", "fleet", "update")


ROOT_FLAGS = ("--debug", "--color", "--no-color")  # options of the app itself, before the command
PROG_NAME = "cudnn-doctor"
COMPLETE_VAR = "_CUDNN_DOCTOR_COMPLETE"  # click's shell-completion request: _{PROG_NAME}_COMPLETE


class Interrupted(Exception):
    """A Ctrl-C inside a command, carried past typer (which would end the run with a silent exit 130) to main."""


def _wants_json(args: List[str]) -> bool:
    """Whether a command line asks for --json (after `--`, a word is an argument, not an option)."""
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _json_errors_group():
    """The app's group: a command run with --json that stops on bad input (a usage error, or an error_exit) also
    prints the versioned envelope with that error on stdout, so a CI step that parses stdout gets one object."""
    import typer
    from typer.core import TyperGroup

    click_error = _click_error()

    class JsonErrorsGroup(TyperGroup):
        def invoke(self, ctx):
            # What follows the root options: [command, its arguments...] (click keeps the first apart).
            rest = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]
            command = rest[0] if rest and rest[0] in COMMANDS else None
            try:
                return super().invoke(ctx)
            except click_error as exc:
                code, message = exc.exit_code, exc.format_message()
                if command and _wants_json(rest):
                    _print_error_envelope(command, code, message)
                raise
            except typer.Exit as stop:
                if command:
                    _envelope_if_json(command, rest, stop)
                raise
            except KeyboardInterrupt:
                raise Interrupted() from None

    return JsonErrorsGroup


def _click_error() -> type:
    """click's exception class, whether typer uses the click package or (typer 0.2x) a copy of its own."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _envelope_if_json(command: str, rest: List[str], stop: Exception) -> None:
    """A command stopped by ui.error_exit (a typer.Exit carrying its message) under --json: the error envelope."""
    message = getattr(stop, "message", None)  # set by ui.error_exit
    if message and _wants_json(rest):
        _print_error_envelope(command, getattr(stop, "exit_code"), message)


def _print_error_envelope(command: str, code: int, message: str) -> None:
    import typer

    from .render.envelope import dumps, envelope

    typer.echo(dumps(envelope(command, code, error=message)))


def _new_app() -> "typer.Typer":
    import typer

    return typer.Typer(
        cls=_json_errors_group(),
        name="cudnn-doctor",
        help=(
            "Check an NVIDIA CUDA/cuDNN stack before a framework crashes on it, and install cuDNN safely.\n\n"
            "Examples:\n\n"
            "  cudnn-doctor check          # what is installed, what loads, what is wrong\n\n"
            "  cudnn-doctor check --json   # the same as JSON, for CI and bug reports\n\n"
            "  cudnn-doctor matrix --cuda 12.4\n\n"
            "  cudnn-doctor explain \"Could not load library libcudnn_ops_infer.so.8\""
        ),
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def _version_text() -> str:
    return "cudnn-doctor %s" % __version__


def _root_callback():
    """The app's own options; typer's Option defaults need typer, so the function is made with the app."""
    import typer

    def version_callback(value: bool) -> None:
        if value:
            typer.echo(_version_text())
            raise typer.Exit(0)

    def root(
        ctx: typer.Context,
        version: bool = typer.Option(
            False, "--version", callback=version_callback, is_eager=True, help="Print the version and exit."
        ),
        debug: bool = typer.Option(False, "--debug", help="Show a traceback if the doctor itself fails."),
        color: Optional[bool] = typer.Option(None, "--color/--no-color",
                                             help="Force colour on or off for every command."),
    ) -> None:
        """Check an NVIDIA CUDA/cuDNN stack before a framework crashes on it."""
        # The flags travel as values, not through os.environ (which every child process would inherit): --debug is
        # read from argv by main(), --color by ui.console() from ui.ROOT_OPTIONS while this command runs.
        token = ROOT_OPTIONS.set(RootFlags(debug=debug, color=color))
        ctx.call_on_close(lambda: ROOT_OPTIONS.reset(token))

    root.__annotations__["ctx"] = typer.Context  # the class itself: the string would be looked up in this module
    return root


def build_app(only: Optional[str] = None) -> "typer.Typer":
    """The typer app with every command, or with just the module of command ``only`` (what `main` runs)."""
    import importlib

    new = _new_app()
    new.callback()(_root_callback())
    modules = (COMMANDS[only],) if only in COMMANDS else MODULE_ORDER
    for name in modules:
        importlib.import_module("cudnn_doctor.commands." + name).register(new)
    return new


def _command_named(argv: List[str]) -> Optional[str]:
    """The subcommand argv names, after the root options; None for --help, --version or nothing."""
    for arg in argv:
        if arg in ROOT_FLAGS:
            continue
        return arg if arg in COMMANDS else None
    return None


app: typer.Typer  # declared only: the first `cli.app` reaches __getattr__, which builds it and binds the name


def __getattr__(name: str) -> typer.Typer:
    # `from cudnn_doctor.cli import app` (tests, completions) gets the app with every command, built on first use.
    if name == "app":
        global app
        app = build_app()
        return app
    raise AttributeError(name)


# `check` options after which the run needs no native child of this process's environment (or none at all).
NO_EARLY_CHILD = ("--env", "--image", "--list-checks", "--help", "-h") + ROOT_FLAGS


def _option_value(args: List[str], name: str) -> Optional[str]:
    """The value given to ``name`` (`--root X` or `--root=X`), or None."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _early_native(args: List[str]) -> Optional["NativeSession"]:
    """For a plain `check`: the run's native child, started before typer and the command's imports so that its
    interpreter and NVML's start overlap with them (the probes take it when it suits: Host.native_session); with
    --ready, the GPUs' kernel runs too, the slowest task of all."""
    if _command_named(args) != "check" or any(a.split("=", 1)[0] in NO_EARLY_CHILD for a in args):
        return None
    from .host import Host, early_tasks, ready_task

    root = _option_value(args, "--root")
    host = Host(root or "/")
    session = host.native_session()  # the machine the run checks: the probes take it only if it matches
    session.start()
    if root is None and hasattr(os, "fork"):  # a live Linux machine: the driver and node probes' calls, by soname
        ready = "--ready" in (args[:args.index("--")] if "--" in args else args)
        node = None
        if ready:  # the GPUs the driver lists, read as the node probe reads them
            from .probes.node import listed_gpus  # why: the probes package, before the child starts, only for --ready

            node = ready_task("libcuda.so.1", listed_gpus(host))
        session.speculate(([node] if node else []) + early_tasks(ready))  # readiness first: NVML's tasks wait for it
    return session


def _leave(code: int) -> None:
    """End the process as sys.exit would (other threads waited for, atexit's functions run, stdout and stderr
    flushed) but skip the interpreter's teardown: freeing every module and object of a finished run costs 20-30 ms,
    a tenth of `check`, and nothing is left to close (files are written in with-blocks, the native child has
    ended). A flush that fails returns, and sys.exit then reports it as before."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)


def main(argv: Optional[List[str]] = None) -> None:
    """Console-script entry: the doctor's own failures exit 3 with one line, not a traceback; Ctrl-C exits 130
    with one line."""
    try:
        _main(argv)
    except SystemExit as stop:
        if argv is None and isinstance(stop.code, int) and _command_named(sys.argv[1:]) == "check":
            _leave(stop.code)  # the whole process was this check: end it without the interpreter's teardown
        raise


def _main(argv: Optional[List[str]]) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:]) or os.environ.get("CUDNN_DOCTOR_DEBUG")
    ascii_safe_streams()  # before anything prints: an ASCII terminal gets ASCII marks, not UnicodeEncodeError
    early = None
    try:
        args = list(argv if argv is not None else sys.argv[1:])
        early = _early_native(args)
        # The early child travels as the click context's object: `check` hands it to the probes.
        build_app(_command_named(args))(args=args, prog_name=PROG_NAME, standalone_mode=True, obj=early)
    except SystemExit:
        raise  # an install or rollback stopped by a signal says its own line (what it left) and exits 128+N
    except (KeyboardInterrupt, Interrupted):
        _say_interrupted()
        sys.exit(130)
    except Exception as exc:  # the doctor itself failed; say so plainly
        if debug:
            raise
        sys.stderr.write(
            "cudnn-doctor: internal error: %s: %s (run again with --debug for a traceback, "
            "and report it with the output of `cudnn-doctor check --json`)\n" % (type(exc).__name__, exc)
        )
        sys.exit(EXIT_DOCTOR_FAILED)
    finally:
        if early is not None:
            early.close()  # a run that stopped before its probes leaves no child behind (a no-op after them)


def _say_interrupted() -> None:
    try:
        sys.stderr.write("cudnn-doctor: interrupted\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed under us: the exit code still says it
        pass
