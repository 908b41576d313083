"""The `smoke` subcommand (being built; see the issue that owns it)."""
import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
