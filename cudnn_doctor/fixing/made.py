"""The new environments a plan makes, one per framework, where the frameworks of one environment cannot share a cuDNN
(remedies/environments.separate_environments_fix): where each folder is, whether it is free, what a new shell that
activates it has, and taking it away at undo. fix creates each folder whole from its line, so the journal names the
folder before the line runs and undo removes it: a kill part-way leaves a folder the next `fix --undo` removes. The
environment the frameworks leave is not changed."""
from __future__ import annotations

import os
import shutil
from typing import Dict, List, Mapping, Optional, Sequence

from .environment import run


def folder(named: str, env: Mapping[str, str]) -> str:
    """The absolute folder a line names (~/venvs/NAME), for the shell fix runs the line in: its HOME."""
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.normpath(os.path.join(home, named[2:]) if named.startswith("~/") else named)


def occupied(named: Sequence[str], env: Mapping[str, str]) -> Optional[str]:
    """Why fix cannot make them (one is there already: fix never writes into a folder it did not make), or None."""
    for name in named:
        path = folder(name, env)
        if os.path.lexists(path):
            return "%s is there already: fix makes a new environment only where nothing is (move it away, or run " \
                   "the line yourself)" % path
    return None


def remove(folders: Sequence[str]) -> List[str]:
    """Each folder fix made, taken away whole (undo, or a step that failed); the ones removed."""
    gone = []
    for path in folders:
        if os.path.lexists(path):
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
    return gone


def new_shell(made: str, env: Mapping[str, str], left: str) -> Dict[str, str]:
    """What a new shell that activates the made environment has: the shell's variables without the environment the
    frameworks left (``left``: its VIRTUAL_ENV or CONDA_PREFIX, its bin folder off PATH), then the made one's
    bin/activate sourced (its own LD_LIBRARY_PATH lines run on what the shell had)."""
    shell = {k: v for k, v in env.items() if not (k in ("VIRTUAL_ENV", "CONDA_PREFIX") and os.path.normpath(v) ==
                                                   os.path.normpath(left))}
    bin_left = os.path.join(os.path.normpath(left), "bin")
    shell["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                    if p and os.path.normpath(p) != bin_left)
    code, text = run(["bash", "-c", '. "$1/bin/activate" && env -0', "bash", made], shell, 30)
    if code != 0:
        activated = dict(shell, VIRTUAL_ENV=made, PATH=os.path.join(made, "bin") + os.pathsep + shell["PATH"])
    else:
        activated = dict(item.split("=", 1) for item in text.split("\0") if "=" in item)
    # The venv is made without --system-site-packages: its python sees no user site, so check judges it without one
    # (a user site's frameworks are another environment's, and one of the same name would take this one's findings)
    activated["PYTHONUSERBASE"] = os.path.join(made, NO_USER_SITE)
    return activated


NO_USER_SITE = "no-user-site"  # a folder that is not there: PYTHONUSERBASE for a python that sees no user site
