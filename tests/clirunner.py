"""typer's CliRunner with stdout and stderr kept apart on every Click version (8.1 mixes them by default)."""
from __future__ import annotations

import inspect

from typer.testing import CliRunner as _TyperRunner


class CliRunner(_TyperRunner):
    def __init__(self, **kwargs):
        # Click 8.2 always separates the streams and dropped the flag; 8.1 (Python 3.9) needs it.
        if "mix_stderr" in inspect.signature(_TyperRunner.__init__).parameters:
            kwargs.setdefault("mix_stderr", False)
        super().__init__(**kwargs)
