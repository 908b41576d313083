"""Fixes as they must be typed on the machine that runs them: no `sudo` for a root shell, and under --root the
loader cache and files of that root (`ldconfig -r ROOT`, ROOT/etc/ld.so.conf.d/...), decided from the facts."""
from __future__ import annotations

import dataclasses
import re
from typing import Optional, Sequence, Tuple

from ..model import Facts, Finding, Fix
from .shell import q

_SUDO = re.compile(r"\bsudo\s+(?:-E\s+)?")
_LDCONFIG = re.compile(r"\bldconfig\b(?!\s+-r\b)(?![.\w-])")
_LN = re.compile(r"^((?:sudo\s+)?ln(?:\s+-\w+)*\s+\S+)(.*)$")
# An absolute path of the machine's own tree, as a command argument (quoted or not).
_ABS = re.compile(r"(?<![\w=:$/.~-])(/(?:etc|usr|opt|lib|lib32|lib64|var|home|root|srv|sbin|bin|tmp)\b[^\s'\"|;&)`]*)")


def _paths_in_root(command: str, root: str) -> str:
    """A command with the paths it reads or writes moved inside `root`; what `echo` writes into a file and the
    environment a program inside the root gets (export) keep the root's own view."""
    if command.startswith(("export ", "unset ")):
        return command
    link = _LN.match(command)  # a link's target is what the link will say inside the root: kept as it is
    head, sep, tail = ((link.group(1), "", link.group(2)) if link else
                       command.partition("|") if command.startswith("echo ") else ("", "", command))
    base = root.rstrip("/")

    def inside(m: "re.Match[str]") -> str:  # a path already inside the root stays (the rewrite is idempotent)
        path = m.group(1)
        return path if path == base or path.startswith(base + "/") else base + path

    return head + sep + _ABS.sub(inside, tail)


# A command quoted inside prose ("copy it with `sudo cp -P a b`", "by hand: sudo cp -P ... && sudo ldconfig").
_PROSE_COMMAND = re.compile(r"\b((?:sudo\s+)?(?:cp|ln|rm|chmod|mkdir|cd|tee|mv|cudnn-doctor)\b[^`;&|)]*)")


def _prose_in_root(text: str, root: str) -> str:
    """The file arguments of commands written into a sentence, moved inside `root` like the commands'."""
    return _PROSE_COMMAND.sub(lambda m: _paths_in_root(m.group(1), root), text)


def _in_root(line: str, root: str) -> str:
    """The loader cache of `root`, not this machine's."""
    return _LDCONFIG.sub("ldconfig -r %s" % q(root), line)


_ON_HOST = "on the host"


def _split_host(text: str) -> Tuple[str, str]:
    at = text.lower().find(_ON_HOST)
    return (text, "") if at < 0 else (text[:at], text[at:])


def _as_root(line: str) -> str:
    return _SUDO.sub("", line)


# Commands that act on files by path, which can be pointed into a root from outside it. A fix with any other command
# (a package manager, a service, a driver tool) must run inside the root, as it is written.
_FILE_COMMANDS = {"cp", "ln", "rm", "chmod", "chown", "mkdir", "cd", "tee", "mv", "ldconfig", "echo", "cudnn-doctor",
                  "namei", "ls", "find", "export", "unset", "df"}


_SYSTEM_TOOL = re.compile(r"\b(?:apt|apt-get|dnf|yum|zypper|pip|pip3|conda|systemctl|modprobe|nvidia-[\w-]+|"
                          r"ubuntu-drivers|reboot|dpkg|rpm|docker)\s")


def _runs_from_outside(commands: Sequence[str], text: str) -> bool:
    if _SYSTEM_TOOL.search(text):  # said in words too: "... && sudo apt update && sudo apt install ..."
        return False
    for command in commands:
        for part in re.split(r"&&|\|\||\||;", command):
            words = [w for w in part.split() if w not in ("sudo", "-E")]
            if words and words[0] not in _FILE_COMMANDS:
                return False
    return True


def for_machine(fix: Optional[Fix], facts: Facts) -> Optional[Fix]:
    """`fix` rewritten for the machine the facts describe (unchanged where nothing applies)."""
    if fix is None:
        return None
    root = facts.host.root or "/"
    # An image's report (facts.image) names the image, not a folder: its fixes go into the image's build as written.
    under_root = (root != "/" and root.startswith("/") and getattr(facts, "image", None) is None
                  and _runs_from_outside(fix.commands, fix.text))
    as_root = facts.host.euid == 0
    if not under_root and not as_root:
        return fix

    # Words after "on the host" are for the machine outside a container: its user is not this run's.
    host_at = fix.text.lower().find(_ON_HOST)

    def line(text: str) -> str:
        here, there = _split_host(text)
        if under_root:
            here = _in_root(here, root)
        return (_as_root(here) if as_root else here) + there

    def command(c: str) -> str:
        at = fix.text.find(c)
        if host_at >= 0 and at > host_at:
            return c
        # Files are read and written inside the root: the fix runs outside it, as `ldconfig -r` does.
        return line(_paths_in_root(c, root) if under_root else c)

    commands = [command(c) for c in fix.commands]
    writes = [root.rstrip("/") + w if under_root and w.startswith("/") else w for w in fix.writes]
    text = fix.text
    for old, new in zip(fix.commands, commands):
        text = text.replace(old, new)
    manual = fix.manual
    if under_root:  # the by-hand way names the same files as the commands do
        here, there = _split_host(text)
        text = _prose_in_root(here, root) + there
        here, there = _split_host(manual)
        manual = _prose_in_root(here, root) + there
    text = line(text)
    doctor = dict(zip(fix.commands, commands)).get(fix.doctor, line(fix.doctor))
    return dataclasses.replace(fix, text=text, commands=commands, manual=line(manual), doctor=doctor,
                               writes=writes)


def finding_for_machine(finding: Finding, facts: Facts) -> Finding:
    """The finding with its fix as it must be typed on this machine."""
    remedy = for_machine(finding.remedy, facts)
    if remedy is finding.remedy:
        return finding
    return dataclasses.replace(finding, remedy=remedy)  # the JSON fix line follows the remedy
