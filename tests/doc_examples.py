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
