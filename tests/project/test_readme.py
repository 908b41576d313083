"""The README: its opening block, real commands only, every command in its table, links that land in docs/, short,
and every command's help has examples."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from clirunner import CliRunner
from doc_examples import check_args, check_invocation, invocations, resolve, root

from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
ALL = invocations(README)
runner = CliRunner()
# Phrases of a working log, not of a manual: none may reach a user (README, docs/, the package's metadata).
LOG_PHRASES = ("lent H100", "tree of the morning", "seeds' manual", "this round", "the seed's", "OWNER/")


def test_opening_block_is_first_and_unchanged():
    first = re.search(r"^```sh\n(.*?)^```$", README, re.M | re.S)
    assert README.startswith("# cudnn-doctor\n\n```sh\n")
    assert first.group(1) == 'pip install . && cudnn-doctor check\npip install ".[test]" && python -m pytest -n auto --dist loadfile\n'


def test_readme_is_a_readme():
    assert len(README.splitlines()) <= 200
    for phrase in LOG_PHRASES:
        assert phrase not in README, phrase


@pytest.mark.parametrize("line, args", ALL, ids=[" ".join(a)[:60] for _, a in ALL])
def test_every_command_shown_exists(line, args):
    check_invocation(line, args)


def test_every_command_is_in_the_table():
    shown = {args[0] for _, args in ALL if args and not args[0].startswith("-")}
    missing = set(root().commands) - shown
    assert not missing, "README never shows: %s" % ", ".join(sorted(missing))


def test_links_land_on_docs_pages_and_their_sections():
    for target in re.findall(r"\]\(([^)]+)\)", README):
        if target.startswith("https://"):
            continue
        path, _, anchor = target.partition("#")
        page = REPO / path
        assert page.exists(), target
        if anchor:
            # Python-Markdown's toc slugs: punctuation dropped, lower case, runs of spaces and dashes to one dash.
            slugs = {re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower())
                     for h in re.findall(r"^#+ (.*)$", page.read_text(encoding="utf-8"), re.M)}
            assert anchor in slugs, (target, sorted(slugs))


def test_the_action_example_uses_this_checkout():
    uses = re.findall(r"uses: (\S+)", README)
    assert uses == ["./"] and (REPO / "action.yml").is_file()


# Commands whose help had no examples when this test was written; their owners were told. Remove a name once its
# help shows an example (the test then reports XPASS).
EXAMPLES_PENDING: set = set()
COMMANDS = [pytest.param(n, marks=pytest.mark.xfail(reason="help has no Examples section yet", strict=False))
            if n in EXAMPLES_PENDING else n for n in sorted(root().commands)]


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
    for name, cmd in root().commands.items():
        if not cmd.hidden:
            assert re.search(r"^\s+%s\s" % re.escape(name), result.stdout, re.M), name


def test_the_checker_catches_wrong_commands():
    """The README check is only worth something if it fails on a wrong option, value or subcommand."""
    for args in (["check", "--frobnicate"], ["check", "-x"], ["check", "--root"], ["explain", "a", "b"],
                 ["install", "a.tar.xz", "b.tar.xz"]):
        cmd, rest, _ = resolve(args)
        with pytest.raises(AssertionError):
            check_args(cmd, rest, "self-test")
    assert resolve(["nosuch"])[0] is None
    check_args(resolve(["check"])[0], ["-vv", "-qq", "--no-color", "--root=/x", "--require", "cc>=8"], "ok")
    found = invocations("```sh\npython3 -I dist/cudnn-doctor.pyz check --json\npip install cudnn-doctor\n```\n")
    assert [args for _, args in found] == [["check", "--json"]]
