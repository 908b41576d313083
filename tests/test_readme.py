"""The README shows only real commands and options, keeps its opening block, and every command's help has examples."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import typer
from clirunner import CliRunner

from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
OUTPUT_BLOCKS = ("text", "json", "console-output")  # shown output, not commands
runner = CliRunner()


def _root() -> Any:
    """The click group typer builds from the app (typer may vendor its own click, so no isinstance checks)."""
    return typer.main.get_command(app)


# --- pulling invocations out of the README ---------------------------------------------------------


def _code() -> Iterator[Tuple[str, str]]:
    """(language, text) of every fenced block, then ("inline", span) of every inline code span outside them."""
    fences = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.M | re.S)
    for m in fences.finditer(README):
        yield m.group(1).strip(), m.group(2)
    prose = fences.sub("", README)
    for m in re.finditer(r"`([^`\n]+)`", prose):
        yield "inline", m.group(1)


def _shell_lines(text: str) -> Iterator[str]:
    joined = re.sub(r"\\\n", " ", text)  # backslash continuations
    for line in joined.splitlines():
        line = re.sub(r"^\s*(?:RUN\s+|-\s+(?=\S))", "", line)  # Dockerfile RUN, YAML list items
        if line.strip():
            yield line


def _from_line(line: str, shown: str, found: List[Tuple[str, List[str]]]) -> None:
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
            _from_line(tok, shown, found)
            continue
        start = None
        segment = tokens[:i]
        for j in range(i - 1, -1, -1):
            if tokens[j] and all(c in "();<>|&" for c in tokens[j]):
                segment = tokens[j + 1:i]
                break
        if tok == "cudnn-doctor" and "pip" not in segment:  # not `pip install cudnn-doctor`
            start = i + 1
        elif tok == "cudnn_doctor" and i >= 2 and tokens[i - 1] == "-m":
            start = i + 1
        if start is None:
            continue
        args = []
        for t in tokens[start:]:
            if t and all(c in "();<>|&" for c in t):
                break
            args.append(t)
        if not args or args[0].isupper():  # a bare mention, or `cudnn-doctor COMMAND --help`
            continue
        found.append((shown, args))


def invocations() -> List[Tuple[str, List[str]]]:
    """Every `cudnn-doctor ...` (or `python -m cudnn_doctor ...`) in the README: (source line, arguments)."""
    found: List[Tuple[str, List[str]]] = []
    for lang, text in _code():
        if lang in OUTPUT_BLOCKS:
            continue
        for line in _shell_lines(text):
            _from_line(line, line.strip(), found)
    return found


ALL = invocations()


def _check_args(cmd: Any, args: List[str], where: str) -> None:
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


def _resolve(args: List[str]) -> Tuple[Any, List[str], List[str]]:
    """(subcommand, its arguments, root options) for an argument list."""
    root = _root()
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 1
    return (root.commands.get(args[i]) if i < len(args) else None), args[i + 1:], args[:i]


# --- the tests ---------------------------------------------------------------------------------


def test_opening_block_is_first_and_unchanged():
    first = re.search(r"^```sh\n(.*?)^```$", README, re.M | re.S)
    assert README.startswith("# cudnn-doctor\n\n```sh\n")
    assert first.group(1) == 'pip install . && cudnn-doctor check\npip install ".[test]" && python -m pytest\n'


def test_the_readme_shows_many_commands():
    assert len(ALL) >= 30, ALL


@pytest.mark.parametrize("line, args", ALL, ids=[" ".join(a)[:60] for _, a in ALL])
def test_every_command_shown_exists(line, args):
    cmd, rest, root_opts = _resolve(args)
    _check_args(_root(), root_opts, line)
    if not root_opts or any(o in ("--debug",) for o in root_opts):
        assert cmd is not None, "%s: no such subcommand (have: %s)" % (line, ", ".join(sorted(_root().commands)))
    if cmd is not None:
        _check_args(cmd, rest, line)


def test_every_command_is_documented():
    shown = {args[0] for _, args in ALL if args and not args[0].startswith("-")}
    shown |= {a for _, args in ALL for a in args if a in _root().commands}
    missing = set(_root().commands) - shown
    assert not missing, "README never shows: %s" % ", ".join(sorted(missing))


def test_matrix_and_explain_examples_run():
    """These read only the bundled data, so the README's examples can run here exactly as written."""
    ran = 0
    for line, args in ALL:
        if args[:1] == ["matrix"] or (args[:1] == ["explain"] and "--no-check" in args and "--file" not in args):
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (line, result.output)
            ran += 1
    assert ran >= 4


def test_check_policy_examples_parse(tmp_path, monkeypatch):
    """--require/--for examples, run against an empty fake root: judged (0/1), never a usage error (2)."""
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # examples write reports (--junit-xml cudnn-doctor.xml) to the current folder
    ran = 0
    for line, args in ALL:
        if args[:1] == ["check"] and ("--require" in args or "--for" in args) and "--root" not in args:
            result = runner.invoke(app, args + ["--root", str(tmp_path), "-qq"])
            assert result.exit_code in (0, 1), (line, result.output)
            ran += 1
    assert ran >= 5


def test_exit_code_table_matches_the_code():
    from cudnn_doctor import ui

    section = README.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in (ui.EXIT_OK, ui.EXIT_PROBLEMS, ui.EXIT_USAGE, ui.EXIT_DOCTOR_FAILED):
        assert re.search(r"^\| %d \|" % code, section, re.M), code


def test_action_inputs_and_outputs_are_documented():
    import test_action

    action = test_action.load_action((REPO / "action.yml").read_text(encoding="utf-8"))
    for name in list(action["inputs"]) + list(action["outputs"]):
        assert "`%s`" % name in README, "README does not mention the action's %s" % name


# Commands whose help had no examples when this test was written; their owners were told. Remove a name once its
# help shows an example (the test then reports XPASS).
EXAMPLES_PENDING: set = set()
COMMANDS = [pytest.param(n, marks=pytest.mark.xfail(reason="help has no Examples section yet", strict=False))
            if n in EXAMPLES_PENDING else n for n in sorted(_root().commands)]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_help_has_examples(name):
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0
    assert re.search(r"^\s*Examples?:", result.stdout, re.M), "`cudnn-doctor %s --help` has no Examples section" % name
    assert re.search(r"^\s+(sudo )?cudnn-doctor %s\b" % name, result.stdout, re.M), \
        "`cudnn-doctor %s --help` shows no example of itself" % name


def test_root_help_lists_every_command_with_examples():
    result = runner.invoke(app, ["--help"])
    assert "Examples" in result.stdout
    for name, cmd in _root().commands.items():
        if not cmd.hidden:
            assert re.search(r"^\s+%s\s" % re.escape(name), result.stdout, re.M), name


def test_the_checker_catches_wrong_commands():
    """The README check is only worth something if it fails on a wrong option, value or subcommand."""
    for args in (["check", "--frobnicate"], ["check", "-x"], ["check", "--root"], ["explain", "a", "b"],
                 ["install", "a.tar.xz", "b.tar.xz"]):
        cmd, rest, _ = _resolve(args)
        with pytest.raises(AssertionError):
            _check_args(cmd, rest, "self-test")
    assert _resolve(["nosuch"])[0] is None
    _check_args(_resolve(["check"])[0], ["-vv", "-qq", "--no-color", "--root=/x", "--require", "cc>=8"], "ok")


def test_require_keys_are_all_documented():
    policy = pytest.importorskip("cudnn_doctor.rules.policy")
    section = README.split("## Policies: `--require` and `--for`", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert documented == set(policy.REQUIRE_KEYS)
