"""The Target a fix is built for and the words that differ by it: `sudo` (none for root), the files of a --root
tree named from outside it, the root's own programs run inside it (chroot), and this cudnn-doctor's own command."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator, Optional, overload

from ..model import WINDOWS_SHELL, Target
from .shells import powershell_quote, sh_quote

# Builders are called from every rule with values, not a target; the core names the target once per judgement
# (rules.evaluate, explain, the installer) instead of threading it through every builder's arguments. No default:
# a fix built where nobody named the machine would be written for `/` as a user, whatever the run was for.
_TARGET: ContextVar[Target] = ContextVar("fix_target")


class NoTarget(RuntimeError):
    """A fix was built outside `building_for`: nobody said which machine, user and shell it is for."""


@contextmanager
def building_for(target: Target) -> Iterator[Target]:
    """Fixes built inside this block are written for ``target``."""
    token = _TARGET.set(target)
    try:
        yield target
    finally:
        _TARGET.reset(token)


def target() -> Target:
    """The Target the fixes being built are for (the innermost `building_for`)."""
    try:
        return _TARGET.get()
    except LookupError:
        raise NoTarget("a fix was built outside remedies.acting.building_for: name the Target it is for (rules."
                       "evaluate, explain and pick do; smoke, bench and the installer use diagnose.fixes_here)") from None


def target_shell() -> str:
    """The shell of the Target being built for; "sh" where none is set (a shell line is the same on any root: only
    what acts on the machine has to name its Target)."""
    target_now = _TARGET.get(None)
    return target_now.shell if target_now is not None else "sh"


def on_windows() -> bool:
    """The fixes are for a Windows machine (PowerShell; no sudo: an Administrator shell is said in words)."""
    return target_shell() == WINDOWS_SHELL


def set_variable(name: str, value: object) -> str:
    """``name`` set for this shell and the programs it starts, as the Target's shell writes it."""
    return "$env:%s = %s" % (name, powershell_quote(value)) if on_windows() else "export %s=%s" % (
        name, sh_quote(value))


def unset_variable(name: str) -> str:
    return "Remove-Item Env:%s" % name if on_windows() else "unset %s" % name


def under_root() -> bool:
    """The fixes act on a tree mounted somewhere (--root), not on the machine the doctor runs on."""
    return target().root.rstrip("/") != ""


@overload
def at(path: str) -> str: ...


@overload
def at(path: None) -> None: ...


def at(path: Optional[str]) -> Optional[str]:
    """A file of the machine as a command run from outside its root names it (the same path on the live machine)."""
    base = target().root.rstrip("/")
    if not base or not path or not path.startswith("/") or path == base or path.startswith(base + "/"):
        return path
    return base + path


def sudo(command: str) -> str:
    """A command that needs root, for this user: `sudo COMMAND`, or the command alone for root and on Windows
    (PowerShell has no sudo: the builder says 'from an Administrator PowerShell' and marks the fix root)."""
    return command if target().as_root or on_windows() else "sudo " + command


def system(command: str, privileged: bool = True) -> str:
    """A program of the machine's own (a package manager, a service, a driver tool, pip in its environment): on the
    live machine as it is; under --root inside that root (`chroot ROOT ...`), where its paths are the root's.
    A command written with its `sudo` (as compat's tables write them) is privileged."""
    if command.startswith("sudo "):
        command, privileged = command[len("sudo "):], True
    if under_root():
        return sudo("chroot %s %s" % (sh_quote(target().root), command))
    return sudo(command) if privileged else command


def on_machine(command: str, privileged: bool = True) -> str:
    """A command for the running machine itself: its kernel modules, devices, services, GPUs, a reboot. The programs
    of a --root tree run on this kernel too, so it reads the same there (its file arguments go through `at`)."""
    return sudo(command) if privileged else command


def pip(arguments: str) -> str:
    """pip of the environment the fix is for (the user's own; inside the root under --root): `uv pip` where uv made
    it without pip, since a plain `pip` there would be some other Python's."""
    return system(target().pip + " " + arguments, privileged=False)


def conda(arguments: str) -> str:
    return system("conda " + arguments, privileged=False)


def ldconfig() -> str:
    """Rebuild the loader cache of the machine the fixes are for (`ldconfig -r ROOT` under --root)."""
    return sudo("ldconfig -r %s" % sh_quote(target().root) if under_root() else "ldconfig")


def doctor(arguments: str, privileged: bool = False) -> str:
    """This cudnn-doctor run with ``arguments``: under sudo by its absolute words (sudo's secure_path has no venv's
    bin), else plain `cudnn-doctor` where that name starts this program in the user's shell."""
    t = target()
    needs_sudo = privileged and not t.as_root
    words = " ".join(sh_quote(w) for w in t.doctor) if needs_sudo or not t.doctor_on_path else "cudnn-doctor"
    return ("sudo " if needs_sudo else "") + words + (" " + arguments if arguments else "")
