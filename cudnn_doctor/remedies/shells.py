"""One renderer per shell: how each shell quotes a word and runs commands one after another, and the Fix value
whose line shows them that way (sh for Linux, PowerShell and cmd for Windows)."""
from __future__ import annotations

import re
import shlex
from typing import Any, Callable, Dict, Sequence

from ..model import Fix


def sh_quote(word: Any) -> str:
    """A word quoted for a POSIX shell, so fixes survive spaces and metacharacters."""
    return shlex.quote(str(word))


def powershell_quote(word: Any) -> str:
    """A PowerShell single-quoted string (no expansion; a quote is doubled)."""
    return "'%s'" % str(word).replace("'", "''")


# How each shell runs commands in order, each only if the one before it succeeded (PowerShell 5 has no &&).
_SEQUENCE: Dict[str, Callable[[Sequence[str]], str]] = {
    "sh": lambda commands: " && ".join(commands),
    "powershell": lambda commands: "; ".join(commands),
    "cmd": lambda commands: " && ".join(commands),
}


def line(commands: Sequence[str], shell: str = "sh") -> str:
    """The commands as one line to type into ``shell``."""
    return _SEQUENCE[shell](commands)


# Programs whose command lines read the same in sh and PowerShell, given none of either shell's own syntax: a fix of
# only these is written for the Target's shell; anything else is sh's (its `sudo`, `export`, `$VAR`, redirections).
_EITHER_SHELL = ("pip", "pip3", "python", "python3", "py", "uv", "conda", "mamba", "nvidia-smi", "nvcc",
                 "cudnn-doctor", "docker", "git", "wsl")
_SHELL_SYNTAX = re.compile(r"[$`<>|&;~\n]|\\")
_QUOTED = re.compile(r"'[^'$`\\]*'|\"[^\"$`\\]*\"")  # quoted words both shells keep whole (no expansion inside)


def either_shell(commands: Sequence[str]) -> bool:
    """Whether every command reads the same in sh and in PowerShell (pip install "torch>=2.6", nvidia-smi -L)."""
    return bool(commands) and all(c.split(" ", 1)[0] in _EITHER_SHELL and not _SHELL_SYNTAX.search(_QUOTED.sub("", c))
                                  for c in commands)


def needs_root(commands: Sequence[str]) -> bool:
    """Whether some command raises its privileges (sudo and friends; an administrator shell says so in words)."""
    return any(word in ("sudo", "su", "pkexec") for c in commands
               for word in c.replace("|", " ").replace("&&", " ").split())


def command_fix(commands: Sequence[str], shell: str = "sh", text: str = "", manual: str = "",
                writes: Sequence[str] = (), doctor: str = "", root: bool = False,
                alternatives: Sequence[str] = ()) -> Fix:
    """A fix made of commands for ``shell``; its line is ``text``, else the commands as that shell runs them.
    ``root`` says the commands need an administrator shell where no word of theirs does (PowerShell has no sudo)."""
    return Fix(text=text or line(commands, shell) or manual, commands=list(commands),
               root=root or needs_root(commands),
               shell=shell if commands else "", doctor=doctor, manual=manual, writes=list(writes),
               alternatives=list(alternatives))
