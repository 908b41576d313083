"""The new environments a plan makes, one per framework, where the frameworks of one environment cannot share a cuDNN
(remedies/environments.separate_environments_fix): where each folder is, whether it is free, what a new shell that
activates it has, and taking it away at undo. fix creates each folder whole from its line, so the journal names the
folder before the line runs and undo removes it: a kill part-way leaves a folder the next `fix --undo` removes. The
environment the frameworks leave is not changed."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .environment import PIP_TIMEOUT, run

MARKER = ".cudnn-doctor-made"  # in each folder fix made: undo removes a folder only where this is
# pip settings that would send the new environment's pip elsewhere (a user's PIP_TARGET, PIP_PREFIX, PIP_USER)
_ELSEWHERE = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER")


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


def parents_to_make(named: Sequence[str], env: Mapping[str, str]) -> List[str]:
    """The folders above each new environment that are not there yet (~/venvs): made with it, taken away at undo."""
    out: List[str] = []
    for name in named:
        parent = os.path.dirname(folder(name, env))
        while parent and not os.path.lexists(parent) and parent not in out:
            out.append(parent)
            parent = os.path.dirname(parent)
    return out


def make(path: str, journal_id: str) -> None:
    """The folder itself, made by fix before its line runs (venv fills a folder that is there): exclusively, so a
    folder made in the meantime stops fix, and marked, so undo removes only what fix made."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkdir(path)
    with open(os.path.join(path, MARKER), "w", encoding="utf-8") as fh:
        fh.write(journal_id + "\n")


def run_line(argv: Sequence[str], env: Mapping[str, str], timeout: float = PIP_TIMEOUT) -> Tuple[int, str]:
    """A new environment's line in bash: its pip with the user's pip settings that point elsewhere left out; past its
    time, bash and every process it started (pip) are killed before fix undoes the folder, so nothing writes there
    after undo."""
    clean = {k: v for k, v in env.items() if k not in _ELSEWHERE}
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=clean, text=True, errors="replace")
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in [*_descendants(proc.pid), proc.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.communicate()
        return 124, "%s did not finish within %.0f s" % (argv[0], timeout)
    return proc.returncode, out or ""


def _descendants(pid: int) -> List[int]:
    """Every process below ``pid`` (from /proc: each one's parent), deepest first."""
    parents: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry, encoding="utf-8", errors="replace") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out: List[int] = []
    wave = [pid]
    while wave:
        wave = [child for child, parent in parents.items() if parent in wave]
        out = wave + out
    return out


def remove(folders: Sequence[str], parents: Sequence[str] = ()) -> Tuple[List[str], List[str]]:
    """Each folder fix made, taken away whole (undo, or a step that failed), then the folders above it fix made, if
    empty: (removed, what could not be removed). A folder without fix's marker (one made by someone else after fix
    was killed before it made its own), a link or a file is left as it is."""
    gone: List[str] = []
    problems: List[str] = []
    for path in folders:
        if not os.path.lexists(path):
            continue
        if os.path.islink(path) or not os.path.isfile(os.path.join(path, MARKER)):
            continue  # not fix's (made by someone else after a kill before fix made its own): left as it is
        try:
            shutil.rmtree(path)
        except OSError as exc:
            problems.append("%s could not be removed: %s" % (path, exc))
            continue
        gone.append(path)
    for parent in sorted(parents, key=len, reverse=True):
        try:
            os.rmdir(parent)  # only if empty: another environment the user made there stays
            gone.append(parent)
        except OSError:
            pass
    return gone, problems


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
