"""A fix as a value (`Fix`) and the target it is built for (`Target`): what remedies build and renderers say, kept
apart from the facts so that model.py holds what the probes see (model re-exports both)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple


@dataclass(frozen=True)
class Fix:
    """A remedy as a value: the commands that repair a finding, with what they need and touch.

    Built by cudnn_doctor.remedies, said by the renderers. `text` is the one line the report prints after "Fix:";
    the other fields let tools check, render per shell or run the repair without parsing that line: every command
    the line names is in `commands` or `alternatives` (tests/remedies/test_fixes_are_data.py)."""

    text: str = ""  # the advice as one line, commands shown as they are to be typed
    commands: List[str] = field(default_factory=list)  # shell commands, in order, each runnable as printed
    root: bool = False  # some command needs root (it says `sudo`)
    shell: str = ""  # the shell the commands are written for: "sh" (any POSIX shell), "cmd", "powershell"; "" none
    doctor: str = ""  # the cudnn-doctor command that makes the repair itself, where there is one
    manual: str = ""  # the manual alternative (or the only way, where no command can do it)
    writes: List[str] = field(default_factory=list)  # files the commands would create or rewrite
    alternatives: List[str] = field(default_factory=list)  # another way's commands, said after: run instead, not after

    def __bool__(self) -> bool:
        return bool(self.text or self.commands)


# The shell every fix for a Windows machine is written in, the Target's there: cmd is never a target (its setx cuts
# PATH at 1024 characters; it cannot edit the machine PATH safely), and PowerShell 5.1 ships with every Windows.
WINDOWS_SHELL = "powershell"


@dataclass(frozen=True)
class Target:
    """Where and how a fix runs, so builders write it right the first time: the root it acts in (--root), whether
    the user is root (no sudo), the shell, and how this cudnn-doctor is started here (sudo's secure_path holds no
    venv's bin, and a zipapp has no command at all)."""

    root: str = "/"  # the machine's root as the doctor sees it; "/" is the machine it runs on
    as_root: bool = False  # the user is root: commands need no sudo
    shell: str = "sh"  # "sh" (Linux, any POSIX shell) or WINDOWS_SHELL
    doctor: Tuple[str, ...] = ("cudnn-doctor",)  # the words that start this cudnn-doctor from any shell, sudo's too
    doctor_on_path: bool = True  # a plain `cudnn-doctor` in the user's own shell starts this one
    pip: str = "pip"  # the active environment's package tool ("uv pip" in a venv uv made without pip)

    SHELLS = ("sh", WINDOWS_SHELL)

    def __post_init__(self) -> None:
        if self.shell not in self.SHELLS:
            raise ValueError("Target.shell must be one of %s, not %r" % (", ".join(self.SHELLS), self.shell))
