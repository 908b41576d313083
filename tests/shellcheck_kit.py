"""How a shell would read a printed fix: its simple commands and their words (bash's own parser decides the syntax),
which paths each command touches from where it runs, and what its first word resolves to under sudo or a user."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from typing import Iterable, List, Optional, Sequence

# sudo's default secure_path (Debian, Ubuntu, Fedora and RHEL sudoers): a venv's bin is never on it.
SECURE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The running kernel's interfaces: a --root tree's programs share them with the machine, so they are not outside it.
KERNEL_FILES = ("/dev/", "/proc/", "/sys/")
# Commands whose arguments are words written somewhere (a file's content, the value of a setting), not paths used.
CONTENT_WRITERS = {"echo", "printf", "export", "unset"}
_SEPARATORS = re.compile(r"&&|\|\||\||;")
_BACKTICKED = re.compile(r"`([^`]+)`")


def bash_accepts(command: str) -> bool:
    """bash -n: the line parses (quotes closed, no dangling &&)."""
    return subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0


def simple_commands(command: str) -> List[List[str]]:
    """The words of each simple command of a line (split where the shell would run the next one)."""
    out = []
    for part in _SEPARATORS.split(command):
        try:
            words = shlex.split(part.split(">")[0] if " > " in part else part)
        except ValueError:
            words = part.split()
        if words:
            out.append(words)
    return out


def without_sudo(words: Sequence[str]) -> List[str]:
    words = list(words)
    while words and words[0] == "sudo":
        words = words[1:]
        while words and words[0].startswith("-"):  # sudo's own options (-E, -n)
            words = words[1:]
    return words


def quoted_commands(text: str) -> List[str]:
    """Commands written into a fix's words between backticks."""
    return [m.group(1) for m in _BACKTICKED.finditer(text or "")]


def outside_root(command: str, root: str, doctor: Iterable[str] = ()) -> List[str]:
    """The paths a command run from the doctor's shell touches outside ``root`` (empty when it stays inside).

    Inside `chroot ROOT` every path is the root's own; `ln -s TARGET` stores TARGET as the link's text; `echo`,
    `printf` and `export` write words, not paths; the doctor's own start words are the program, not a file it
    acts on; the kernel's /dev, /proc and /sys are shared with the root."""
    base = root.rstrip("/")
    own = set(doctor)
    bad = []
    for words in simple_commands(command):
        words = without_sudo(words)
        if not words or words[0] in CONTENT_WRITERS or words[1:2] == ["="]:  # a value, or a line of a config file
            continue
        if words[0] == "chroot":
            if len(words) < 2 or words[1].rstrip("/") != base:
                bad.append("chroot into %s" % (words[1:2] or ["nothing"])[0])
            continue
        args = words[1:]
        if words[0] == "ln":
            plain = [w for w in args if not w.startswith("-")]
            args = plain[1:]  # the link's target is the text it will hold, read inside the root
        if words[0] == "grep":  # a pattern after -e is text matched, not a file read
            args = [w for i, w in enumerate(args) if not (i and args[i - 1] == "-e")]
        for word in [words[0]] + args:
            if word in own or "://" in word or "=" in word and not word.startswith("/"):  # a URL, an option
                continue
            # A word that is a path is one path (spaces and all, as the shell split it); else the paths after = or :.
            for path in [word] if word.startswith("/") else re.findall(r"(?<=[=:])(/[^\s:'\"]*)", word):
                if path.startswith(KERNEL_FILES) or path == base or path.startswith(base + "/"):
                    continue
                bad.append(path)
        if words[0] == "ldconfig" and "-r" not in words:
            bad.append("ldconfig without -r (the machine's own loader cache)")
    return bad


def resolves(word: str, path: str) -> Optional[str]:
    """What `command -v WORD` answers with this PATH (a builtin answers its own name), else None."""
    done = subprocess.run(["bash", "-c", 'command -v -- "$0"', word], capture_output=True, text=True,
                          env={"PATH": path})
    return done.stdout.strip() or None if done.returncode == 0 else None


def is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def ld_library_path_after(commands: Sequence[str], before: Sequence[str]) -> List[str]:
    """LD_LIBRARY_PATH's entries once a fix's lines that set it have run in sh, from ``before``."""
    lines = [c for c in commands if re.match(r"(export|unset) LD_LIBRARY_PATH\b", c)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **({"LD_LIBRARY_PATH": ":".join(before)} if before else {})}
    done = subprocess.run(["sh", "-ec", "%s\nprintf %%s \"${LD_LIBRARY_PATH-}\"" % "\n".join(lines)],
                          capture_output=True, text=True, env=env, check=True)
    return [e for e in done.stdout.split(":") if e]
