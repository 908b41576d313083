"""One fix command read for `fix`: what it changes (a package of the environment, a file of it, a variable of its
shells, the machine) or why fix leaves it to the user. Pure: nothing here reads the machine or runs anything."""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

# The programs of the machine itself: a fix that names one changes the system, not the environment (root's work).
_SYSTEM = frozenset(("apt", "apt-get", "dnf", "yum", "zypper", "ldconfig", "chroot", "modprobe", "rmmod", "systemctl",
                     "reboot", "nvidia-smi", "nvidia-ctk", "dkms", "ubuntu-drivers", "tee", "update-alternatives",
                     "docker", "podman", "kubectl", "update-initramfs", "dracut", "mokutil", "sh", "bash"))
# The separate environments of frameworks that cannot share one (remedies/environments.separate_environments_fix):
# one line per framework, the new folder's pip installing it, then at most its unversioned libcudnn.so link and two
# lines appended to its own activate script. fix runs such a line whole, in bash, only in this shape: everything it
# writes is inside the new folder, so undo removes that folder.
_NEW_ENVIRONMENT = re.compile(r"python3?(\.\d+)? -m venv ")
# Each part of the line is the remedy's own template: the folder ~/venvs/NAME, its install words each a quoted
# requirement (or PyTorch's own index), the activate lines only the wheel folders put first and the shell's cuDNN
# folders taken off (plain paths). Nothing else the shell would expand (a brace, a glob, a newline) gets through.
_NAME = r"[A-Za-z0-9][A-Za-z0-9_+-]*(?:\.[A-Za-z0-9_+-]+)*"
_REQUIREMENT = r'"[A-Za-z0-9][A-Za-z0-9_.-]*(?:\[[a-z0-9_,-]+\])?(?:[=<>!~]=?[A-Za-z0-9_.*+]+,?)*"'
_PLAIN_PATH = r"/[A-Za-z0-9_./+-]+"
_NEW_ENVIRONMENT_LINE = re.compile(
    r"python3(?:\.\d+)? -m venv (?:--upgrade-deps )?(~/venvs/%s) && (?:PYTHONPATH= )?\1/bin/pip install "
    r"(?P<install>%s(?: %s)*(?: --index-url https://download\.pytorch\.org/whl/[a-z0-9]+)?)"
    r"(?: && ln -sf libcudnn\.so\.\d+ \$\(echo \1/lib/python3\*/site-packages/nvidia/cudnn/lib\)/libcudnn\.so)?"
    r"(?: && echo 'export LD_LIBRARY_PATH=\$\(echo \1/lib/python3\*/site-packages/nvidia/[a-z_]+/lib\)"
    r"(?::\$\(echo \1/lib/python3\*/site-packages/nvidia/[a-z_]+/lib\))*\$\{LD_LIBRARY_PATH:\+:\$LD_LIBRARY_PATH\}'"
    r" >> \1/bin/activate)?"
    r"(?: && printf '%%s\\n' 'export LD_LIBRARY_PATH=\"\$\(printf %%s \"\$\{LD_LIBRARY_PATH:-\}\" \| tr : '\"'\"'\\n'\"'\"' "
    r"\| grep -vxF(?: -e %s)+ \| paste -sd: -\)\"' >> \1/bin/activate)?" % (_NAME, _REQUIREMENT, _REQUIREMENT,
                                                                         _PLAIN_PATH))
_SHELL_SYNTAX = re.compile(r"&&|\|\||[;|`<>]|\$\(")  # a line the shell must read: fix cannot run it as words
# Quoted words: a requirement's < or > is the word's, not a redirection ("nvidia-cudnn-cu13<10.0,>=9.12"); a double
# quote holding $ or ` is still read by the shell, so it is not taken out.
_QUOTED = re.compile(r"'[^']*'|\"[^\"$`\\]*\"")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.S)
_PIP_VARIABLE = re.compile(r"PYTHONPATH|PYTHONNOUSERSITE|PIP_[A-Z0-9_]+")
ENV_LINE = re.compile(r"^(?:export ([A-Za-z_][A-Za-z0-9_]*)=.*|unset ([A-Za-z_][A-Za-z0-9_]*))$", re.S)
# pip options that take a value (the next word), so the value is not taken for a requirement.
_VALUE_OPTIONS = frozenset(("--target", "-t", "--index-url", "-i", "--extra-index-url", "--find-links", "-f",
                            "--constraint", "-c", "--requirement", "-r", "--prefix", "--root", "--platform",
                            "--python-version", "--implementation", "--abi", "--upgrade-strategy", "--python"))


@dataclass(frozen=True)
class Parsed:
    kind: str  # "packages", "links", "removals", "variables", "system", "environments" (a new venv made whole),
    #            "checks" (read only: nothing to run) or "left"
    why: str = ""
    action: str = ""  # packages: install, uninstall
    options: Tuple[str, ...] = ()
    requirements: Tuple[str, ...] = ()
    line: str = ""
    variables: Tuple[Tuple[str, str], ...] = ()  # NAME=VALUE words before pip: its own environment
    link: str = ""  # `ln -sf TARGET LINK`: the link, and the name beside it that it points at
    target: str = ""
    paths: Tuple[str, ...] = ()  # removals: what `rm -rf` names (a dist-info's version may be a glob); environments:
    #                              the new folder, as the line names it (~/venvs/NAME)
    python: str = ""  # packages: the absolute interpreter whose pip it names (a user site's owner), "" for pip's own


def parse_command(command: str, as_root: bool) -> Parsed:
    """What one fix command is to fix: a package change of the environment, a variable, root's or the user's."""
    text = command.strip()
    if "..." in text:
        return Parsed("left", "it has a part only you can fill in (...)")
    if ENV_LINE.match(text):
        return Parsed("variables", line=text)
    if _NEW_ENVIRONMENT.match(text):
        made = _NEW_ENVIRONMENT_LINE.fullmatch(text)
        words = _install_words(made.group("install")) if made else None
        if made is None or words is None:
            return Parsed("left", "it makes a new environment in a way fix does not run")
        index = words.index("--index-url") if "--index-url" in words else len(words)
        return Parsed("environments", line=text, paths=(made.group(1),), options=tuple(words[index:index + 2]),
                      requirements=tuple(words[:index] + words[index + 2:]))
    if _SHELL_SYNTAX.search(_QUOTED.sub("''", text)):
        return Parsed("left", "it is shell syntax (a pipe, a list or a redirection) fix does not run")
    try:
        words = shlex.split(text)
    except ValueError:
        return Parsed("left", "its quoting does not parse")
    # `PYTHONPATH= pip install ...`: pip must not count a --target folder on PYTHONPATH as installed (draw 515-14).
    assigned = []
    while words and _ASSIGNMENT.fullmatch(words[0]):
        name, _, value = words.pop(0).partition("=")
        assigned.append((name, value))
    if not words:
        return Parsed("left", "it is empty")
    if assigned and (_pip_arguments(words) is None or any(not _PIP_VARIABLE.fullmatch(n) for n, _ in assigned)):
        return Parsed("left", "fix sets only PYTHONPATH, PYTHONNOUSERSITE and PIP_* for pip itself")
    if words[0] == "ln":
        return _link(words)
    if words[0] == "rm":
        return _removal(words)
    if words[0] == "sudo" or words[0] in _SYSTEM:
        return Parsed("system", "it changes the system, not the environment: run it as root" if not as_root else "")
    if words[0] in ("conda", "mamba", "micromamba"):
        return Parsed("left", "fix changes wheels with pip or uv; conda's own packages are yours to change with "
                               "conda (fix --undo could not put them back)")
    pip_args = _pip_arguments(words)
    if pip_args is None:
        return Parsed("left", "fix runs only the environment's package tool and its variables")
    if pip_args == ["check"]:
        # it reads and changes nothing (a layout that leaves the environment as it is names it): fix checks again
        # after its steps anyway (fix draw 301301-14: one such line beside a JAX swap left the whole finding)
        return Parsed("checks")
    if not pip_args or pip_args[0] not in ("install", "uninstall"):
        return Parsed("left", "fix runs pip install and pip uninstall only")
    options: List[str] = []
    reqs: List[str] = []
    rest = iter(pip_args[1:])
    for word in rest:
        if word.startswith("-"):
            options.append(word)
            if word in _VALUE_OPTIONS:
                options.append(next(rest, ""))
        else:
            reqs.append(word)
    if pip_args[0] == "uninstall" and "-y" not in options and "--yes" not in options:
        options.append("-y")  # fix asked before it ran: pip must not ask again
    return Parsed("packages", action=pip_args[0], options=tuple(options), requirements=tuple(reqs),
                   variables=tuple(assigned), python=words[0] if words[0].startswith("/") else "")


def _install_words(text: str) -> Optional[List[str]]:
    """A new environment's `pip install` words (the template above lets through only quoted requirements and PyTorch's
    own index); None where the shell could not split them."""
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _link(words: Sequence[str]) -> Parsed:
    """`ln -sf NAME /abs/LINK`: a link to a file beside it (Paddle's unversioned libcudnn.so, CD707), or `ln -sf
    /abs/FILE /abs/LINK` (another cuDNN major's files linked into the folder the frameworks search), which fix makes
    through its journal when both are in the environment; any other ln is the user's."""
    flags, operands = _flags_and_operands(words)
    if sorted(flags) != ["f", "s"] or len(operands) != 2 or not operands[1].startswith("/") or (
            "/" in operands[0] and not operands[0].startswith("/")):
        return Parsed("left", "fix makes only `ln -sf NAME /path/LINK` or `ln -sf /path/FILE /path/LINK`")
    target = os.path.normpath(operands[0]) if operands[0].startswith("/") else operands[0]
    return Parsed("links", target=target, link=os.path.normpath(operands[1]))


# What `rm -rf` fix runs: an NVIDIA wheel's payload and its record in one `pip install --target` folder, which pip
# cannot uninstall (no environment of its own holds it); anything else rm names is the user's to run.
_PAYLOAD = re.compile(r"(/.+)/nvidia/[a-z0-9_]+")
_RECORD = re.compile(r"(/.+)/nvidia_[a-z0-9_]+-(?:[0-9][0-9.a-z]*|\*)\.dist-info")


def _removal(words: Sequence[str]) -> Parsed:
    """`rm -rf DIR/nvidia/cudnn DIR/nvidia_cudnn_cu12-*.dist-info`: a wheel in a `--target` folder on PYTHONPATH
    (remedies/environments.beside_framework), which fix removes through its journal so undo puts it back."""
    flags, named = _flags_and_operands(words)
    operands = [os.path.normpath(w) if w.startswith("/") else w for w in named]
    found = [_PAYLOAD.fullmatch(o) or _RECORD.fullmatch(o) for o in operands]
    if sorted(flags) != ["f", "r"] or not found or not all(found) or len({m.group(1) for m in found if m}) != 1:
        return Parsed("left", "fix removes only an NVIDIA wheel's files from a `pip install --target` folder")
    return Parsed("removals", paths=tuple(operands))


def _flags_and_operands(words: Sequence[str]) -> Tuple[str, List[str]]:
    """A command's single-letter flags, run together (`-s -f` and `-sf` alike), and its other words."""
    return ("".join(w[1:] for w in words[1:] if w.startswith("-")),
            [w for w in words[1:] if not w.startswith("-")])


def _pip_arguments(words: Sequence[str]) -> Optional[List[str]]:
    """The words after `pip` in `pip ...`, `pip3 ...`, `python3 -m pip ...` or `uv pip ...`; None for another
    program (a path to some other environment's pip is another environment: not this one's to run)."""
    first = words[0]
    if first in ("pip", "pip3"):
        return list(words[1:])
    if re.fullmatch(r"(/\S+/)?python(3(\.\d+)?)?", first) and list(words[1:3]) == ["-m", "pip"]:
        return list(words[3:])  # an absolute python: the user site's owner (plan checks it is this one's)
    if first == "uv" and words[1:2] == ["pip"]:
        return list(words[2:])
    return None


