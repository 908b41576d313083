"""Pulling `cudnn-doctor ...` invocations out of Markdown (README.md, docs/*.md) and checking them against the CLI."""
from __future__ import annotations

import re
import shlex
from typing import Any, Dict, Iterator, List, Tuple

import typer

from cudnn_doctor.cli import app

OUTPUT_BLOCKS = ("text", "json", "console-output")  # shown output, not commands
SHELL_BLOCKS = ("sh", "bash", "shell")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.M | re.S)


def root() -> Any:
    """The click group typer builds from the app (typer may vendor its own click, so no isinstance checks)."""
    return typer.main.get_command(app)


def code(text: str) -> Iterator[Tuple[str, str]]:
    """(language, text) of every fenced block, then ("inline", span) of every inline code span outside them."""
    for m in FENCE.finditer(text):
        yield m.group(1).strip(), m.group(2)
    prose = FENCE.sub("", text)
    for m in re.finditer(r"`([^`\n]+)`", prose):
        yield "inline", m.group(1)


def shell_lines(text: str) -> Iterator[str]:
    joined = re.sub(r"\\\n", " ", text)  # backslash continuations
    for line in joined.splitlines():
        line = re.sub(r"^\s*(?:RUN\s+|-\s+(?=\S))", "", line)  # Dockerfile RUN, YAML list items
        if line.strip():
            yield line


def _is_doctor(tokens: List[str], i: int) -> bool:
    """tokens[i] starts cudnn-doctor: the command, `python -m cudnn_doctor`, or `python3 [-I] FILE.pyz`."""
    tok = tokens[i]
    if tok == "cudnn-doctor":
        segment = tokens[:i]
        for j in range(i - 1, -1, -1):
            if tokens[j] and all(c in "();<>|&" for c in tokens[j]):
                segment = tokens[j + 1:i]
                break
        return "pip" not in segment  # not `pip install cudnn-doctor`
    if tok == "cudnn_doctor":
        return i >= 2 and tokens[i - 1] == "-m"
    return tok.endswith("cudnn-doctor.pyz") and i >= 1 and (tokens[i - 1] == "-I" or "python" in tokens[i - 1])


def from_line(line: str, shown: str, found: List[Tuple[str, List[str]]]) -> None:
    if "cudnn-doctor" not in line and "cudnn_doctor" not in line:
        return
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.commenters = "#"
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: not a shell line (prose in an inline span)
        return
    for i, tok in enumerate(tokens):
        if " " in tok and "cudnn" in tok:  # a script inside a word: sh -c '... && cudnn-doctor check'
            from_line(tok, shown, found)
            continue
        if not _is_doctor(tokens, i):
            continue
        args = []
        for t in tokens[i + 1:]:
            if t and all(c in "();<>|&" for c in t):
                break
            args.append(t)
        if not args or args[0].isupper():  # a bare mention, or `cudnn-doctor COMMAND --help`
            continue
        found.append((shown, args))


def invocations(text: str, fenced_only: bool = False) -> List[Tuple[str, List[str]]]:
    """Every `cudnn-doctor ...` (or `python -m cudnn_doctor ...`, or the zipapp) in the text: (line, arguments).
    fenced_only: the examples of code blocks, not the commands named in running text."""
    found: List[Tuple[str, List[str]]] = []
    for lang, body in code(text):
        if lang in OUTPUT_BLOCKS or (fenced_only and lang == "inline"):
            continue
        for line in shell_lines(body):
            from_line(line, line.strip(), found)
    return found


def check_args(cmd: Any, args: List[str], where: str) -> None:
    """Every option exists, takes a value when given one, and positionals do not outnumber the arguments."""
    opts: Dict[str, Any] = {"-h": None, "--help": None}  # the app's help_option_names
    positionals = []
    for p in cmd.params:
        if p.param_type_name == "argument":
            positionals.append(p)
            continue
        for name in list(p.opts) + list(getattr(p, "secondary_opts", [])):
            opts[name] = p
    given = 0
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok.startswith("--"):
            name = tok.split("=", 1)[0]
            assert name in opts, "%s: `%s` has no option %s" % (where, cmd.name, name)
            p = opts[name]
            if p is not None and not getattr(p, "is_flag", False) and not getattr(p, "count", False) \
                    and "=" not in tok:
                assert i < len(args), "%s: %s needs a value" % (where, name)
                i += 1
        elif tok.startswith("-") and tok != "-":
            for ch in tok[1:]:
                assert "-" + ch in opts, "%s: `%s` has no option -%s" % (where, cmd.name, ch)
                p = opts["-" + ch]
                if p is not None and not getattr(p, "is_flag", False) and not getattr(p, "count", False):
                    assert i < len(args), "%s: -%s needs a value" % (where, ch)
                    i += 1
                    break
        else:
            given += 1
    room = sum(p.nargs if p.nargs > 0 else 10 ** 6 for p in positionals)
    assert given <= room, "%s: too many arguments for `%s`: %r" % (where, cmd.name, args)


def resolve(args: List[str]) -> Tuple[Any, List[str], List[str]]:
    """(subcommand, its arguments, root options) for an argument list."""
    group = root()
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1
    return (group.commands.get(args[i]) if i < len(args) else None), args[i + 1:], args[:i]


def check_invocation(line: str, args: List[str]) -> None:
    """The subcommand exists and every option given to it, or to the root, is real."""
    cmd, rest, root_opts = resolve(args)
    check_args(root(), root_opts, line)
    if not root_opts or any(o in ("--debug",) for o in root_opts):
        assert cmd is not None, "%s: no such subcommand (have: %s)" % (line, ", ".join(sorted(root().commands)))
    if cmd is not None:
        check_args(cmd, rest, line)


# --- output the pages show ----------------------------------------------------------------------------------

SHOWN_BLOCKS = ("text", "console", "console-output")  # blocks that show what a command prints
ELISION = re.compile(r"\(\.\.\.\)|\.\.\.|…")  # words a shown line leaves out


def output_blocks(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, body) of every block that shows a command's output (its `$ ` lines are the commands)."""
    for m in FENCE.finditer(text):
        if m.group(1).strip() in SHOWN_BLOCKS:
            yield text[:m.start()].count("\n") + 1, m.group(2)


def shown_lines(body: str) -> List[str]:
    """The block's lines of output: not its `$ ` command lines, not blank lines."""
    return [line for line in body.splitlines() if line.strip() and not line.startswith("$ ")]


def line_matches(shown: str, real: str) -> bool:
    """``shown`` is ``real``, or ``real`` with words left out where ``shown`` says ..., (...) or …"""
    parts = ELISION.split(shown)
    real = real.rstrip()
    if len(parts) == 1:
        return shown.rstrip() == real
    first, last = parts[0].rstrip(), parts[-1].strip()
    if not real.startswith(first):
        return False
    pos = len(first)
    for part in (p.strip() for p in parts[1:-1]):
        found = real.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return not last or (real.endswith(last) and real.rfind(last) >= pos)


def unmatched_line(shown: List[str], real: str) -> "str | None":
    """None when every shown line is a line of ``real``, in order (an abridged output leaves lines out); else the
    first shown line that is not."""
    lines = real.splitlines()
    i = 0
    for want in shown:
        while i < len(lines) and not line_matches(want, lines[i]):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None
