"""The plain `check` command lines, read without typer: cli.main runs them straight through check_run.run_check,
which saves importing typer and click and building the app (about 40 ms of each run's CPU).

Only lines whose every word is one of the options below, spelled as click reads them, are taken; anything else
(--help, an unknown or misspelt option, a missing value, a --timeout out of range, --debug, --image, -o, shell
completion) goes the typer way, which prints its usage errors and help as it always has. tests/commands/
test_plain_check.py holds the two readings equal on generated command lines.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .bounds import seconds_in_range
from .check_run import MIN_TIMEOUT, CheckOptions

FLAGS: Dict[str, Tuple[str, bool]] = {"--json": ("as_json", True), "--strict": ("strict", True),
                                      "--ready": ("ready", True), "--smoke": ("smoke", True),
                                      "--color": ("color", True), "--no-color": ("color", False)}
COUNTS = {"--verbose": "verbose", "--quiet": "quiet"}
SHORT_COUNTS = {"v": "verbose", "q": "quiet"}  # -vv is two -v and -vq one of each, as click reads them
VALUES = {"--root": "root", "--node-name": "node_name", "--format": "fmt", "--for": "target", "--timeout": "timeout"}
LISTS = {"--require": "require", "--skip": "skip", "--env": "env"}  # repeatable
ROOT_COLOR = {"--color": True, "--no-color": False}  # the app's own options before `check` that the plain path takes


def plain_check(args: List[str]) -> Optional[Tuple[Optional[bool], CheckOptions]]:
    """(the app's --color/--no-color, check's options) when ``args`` is a plain `check` line; None otherwise."""
    root_color: Optional[bool] = None
    i = 0
    while i < len(args) and args[i] in ROOT_COLOR:
        root_color = ROOT_COLOR[args[i]]
        i += 1
    if args[i:i + 1] != ["check"]:
        return None
    options = CheckOptions()
    words = iter(args[i + 1:])
    for word in words:
        name, eq, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        if name in FLAGS and not eq:
            setattr(options, *FLAGS[name])
        elif name in COUNTS and not eq:
            setattr(options, COUNTS[name], getattr(options, COUNTS[name]) + 1)
        elif len(word) > 1 and word[0] == "-" and all(c in SHORT_COUNTS for c in word[1:]):
            for c in word[1:]:
                setattr(options, SHORT_COUNTS[c], getattr(options, SHORT_COUNTS[c]) + 1)
        elif name in VALUES or name in LISTS:
            value = inline if eq else next(words, None)
            if value is None:
                return None
            if name in LISTS:
                getattr(options, LISTS[name]).append(value)
            elif name == "--timeout":
                try:
                    options.timeout = float(value)
                except ValueError:
                    return None
            else:
                setattr(options, VALUES[name], value)
        else:
            return None
    if not seconds_in_range(options.timeout, MIN_TIMEOUT):
        return None
    return root_color, options
