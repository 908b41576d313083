"""The documentation site (mkdocs.yml, docs/): it builds with `mkdocs build --strict`, and every shell example on
every page (and in the README) is checked against the real command line and, where it needs no GPU, root or
network, run against an empty machine root."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from clirunner import CliRunner
import doc_outputs
from doc_examples import (FENCE, SHELL_BLOCKS, check_invocation, invocations, output_blocks, resolve, root,
                          shown_lines, unmatched_line)

from cudnn_doctor.cli import app

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [REPO / "README.md"]
# Pages the other topics' owners write; the nav names them, so they must exist for --strict.
NAMED_PAGES = ("real-stacks.md", "knowledge.md", "architecture.md", "troubleshooting-the-doctor.md", "images.md",
               "theano.md")
LOG_PHRASES = ("lent H100", "tree of the morning", "seeds' manual", "this round", "the seed's", "OWNER/")
runner = CliRunner()


def _examples(fenced_only: bool = False) -> List[Tuple[str, str, List[str]]]:
    out = []
    for page in PAGES:
        for line, args in invocations(page.read_text(encoding="utf-8"), fenced_only):
            out.append((page.name, line, args))
    return out


EXAMPLES = _examples()  # in code blocks and in running text: checked against the command line
IDS = ["%s: %s" % (page, " ".join(args))[:80] for page, _, args in EXAMPLES]
RUNNABLE = _examples(fenced_only=True)  # the code blocks' examples: also run
RUN_IDS = ["%s: %s" % (page, " ".join(args))[:80] for page, _, args in RUNNABLE]

# What an example needs that a test machine may lack, by subcommand (the marking convention: such examples are
# checked against the command line like every other, and run only where the machine has what they need).
NEEDS = {
    "smoke": "a GPU",
    "bench": "a GPU",
    "update": "PyPI and NVIDIA's servers (its tests use recorded answers)",
    "pick": "a GPU, or a compute node's report (tests/pick run it on saved reports)",
    "fix": "a Python environment it may change (tests/fixing run it on venvs they build)",
}
# install and rollback run on a fake toolkit with fake cuDNN archives named as in the docs (gcc-built libraries);
# `install --version` downloads from NVIDIA's servers, and is only checked against the command line.


def _have_gpu() -> bool:
    return os.path.exists("/dev/nvidiactl") and shutil.which("nvidia-smi") is not None


# --- the site -----------------------------------------------------------------------------------------------


def test_mkdocs_build_strict(tmp_path):
    try:
        import material  # noqa: F401  (mkdocs-material, the theme mkdocs.yml names)
        import mkdocs  # noqa: F401
    except ImportError:
        pytest.skip("mkdocs-material is not installed: pip install \".[docs]\" (it is in the test extra too)")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=str(REPO), capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    print(proc.stderr[-1500:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    for page in DOCS.glob("*.md"):
        built = tmp_path / "site" / ("index.html" if page.stem == "index" else "%s/index.html" % page.stem)
        assert built.is_file(), page.name


def test_every_page_is_in_the_nav():
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]
    listed = set(re.findall(r":\s+([\w-]+\.md)\s*$", nav, re.M))
    assert listed == {p.name for p in DOCS.glob("*.md")}
    assert set(NAMED_PAGES) <= listed


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_working_log_language(page):
    text = page.read_text(encoding="utf-8")
    for phrase in LOG_PHRASES:
        assert phrase not in text, "%s says %r" % (page.name, phrase)


# --- the shell examples -------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_shell_blocks_parse(page, tmp_path):
    """Every sh/bash block is valid shell (the commands that are not cudnn-doctor's are checked this far)."""
    for m in FENCE.finditer(page.read_text(encoding="utf-8")):
        if m.group(1).strip() in SHELL_BLOCKS:
            script = tmp_path / "block.sh"
            script.write_text(m.group(2))
            proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
            assert proc.returncode == 0, "%s:\n%s\n%s" % (page.name, m.group(2), proc.stderr)


def test_the_docs_show_many_commands():
    assert len(EXAMPLES) >= 80, len(EXAMPLES)


def test_every_command_is_documented():
    shown = {a for _, _, args in EXAMPLES for a in args if a in root().commands}
    missing = set(root().commands) - shown
    assert not missing, "docs never show: %s" % ", ".join(sorted(missing))


@pytest.mark.parametrize("page, line, args", EXAMPLES, ids=IDS)
def test_every_command_shown_exists(page, line, args):
    check_invocation("%s: %s" % (page, line), args)


@pytest.fixture
def empty_machine(tmp_path, monkeypatch):
    """An empty machine root, a working folder for the files examples write, and a few reports for fleet."""
    root_dir = tmp_path / "root"
    (root_dir / "usr" / "lib").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "error.log").write_text("ImportError: Could not load library libcudnn_ops_infer.so.8\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    for node in ("gpu001", "gpu002"):
        result = runner.invoke(app, ["check", "--json", "--root", str(root_dir), "--node-name", node])
        (reports / ("%s.json" % node)).write_text(result.stdout)
    return root_dir, work, reports


def _runnable(args: List[str], root_dir: Path, work: Path, reports: Path) -> Tuple[Optional[List[str]], str]:
    """The example made to run here: its machine root, output files and report folders replaced by test ones."""
    cmd, rest, root_opts = resolve(args)
    if cmd is None:
        return (args if root_opts == ["--version"] else None), "a root option only (completion needs a shell)"
    name = cmd.name
    if name in NEEDS or "--smoke" in rest:
        return None, "needs %s" % NEEDS.get(name, "a GPU")
    if "--image" in rest:  # tests/image/test_image.py runs these on images it builds
        return None, "needs the container image it names"
    out: List[str] = []
    i = 0
    while i < len(rest):
        tok = rest[i]
        if tok in ("--root", "-o", "--output-file") and i + 1 < len(rest):
            i += 2
            if tok != "--root":
                out += ["--output-file", str(work / Path(rest[i - 1]).name)]
            continue
        if name == "fleet" and not tok.startswith("-") and (not out or not out[-1].startswith("--max-age")):
            tok = tok if tok == "-" else str(reports)
        out.append(tok)
        i += 1
    if name in ("check", "explain") and not ("explain" == name and "--no-check" in out):
        out += ["--root", str(root_dir)]
    return root_opts + [name] + out, ""


def _install_example(args: List[str], tmp_path: Path, monkeypatch) -> Tuple[Optional[List[str]], str]:
    """install/rollback examples on a fake CUDA 12.4 toolkit, the archive or wheel they name made in the
    working folder, the smoke test (a GPU's) left out; a rollback example follows an install of its own."""
    import archive_factory as af
    from kit import FakeMachine, have_gcc

    if "--version" in args:
        return None, "downloads the release from NVIDIA's servers"
    if not have_gcc():
        return None, "gcc is needed to build the fake cuDNN archives"
    machine = FakeMachine(tmp_path / "machine")
    home = str(machine.p(machine.toolkit("12.4.1")))
    monkeypatch.setenv("CUDA_HOME", home)  # the default target of an example without --cuda-home or --prefix
    downloads = Path.cwd()
    af.make("linux-xz", downloads, version="9.1.0", build="70", cuda="12")
    af.make("wheel", downloads, version="9.1.0.70", cuda_major=12)
    out = []
    it = iter(args)
    for tok in it:
        if tok == "--cuda-home":
            out += [tok, home]
            next(it)
        elif tok == "--prefix":
            out += [tok, str(tmp_path / "prefix")]
            next(it)
        else:
            out.append(tok)
    if out[0] == "install":
        return out + ["--no-smoke"], ""
    target = ["--prefix", out[out.index("--prefix") + 1]] if "--prefix" in out else ["--cuda-home", home]
    setup = runner.invoke(app, ["install", str(downloads / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"),
                                *target, "--no-smoke", "--no-check"])
    assert setup.exit_code == 0, setup.stderr
    return out, ""


@pytest.mark.parametrize("page, line, args", RUNNABLE, ids=RUN_IDS)
def test_every_example_runs(page, line, args, empty_machine, monkeypatch):
    root_dir, work, reports = empty_machine
    if args[0] in ("install", "rollback"):
        monkeypatch.setenv("CUDNN_DOCTOR_TEST_MACHINE_ROOT", str(root_dir))  # the after-install check's machine
        argv, why = _install_example(args, work.parent, monkeypatch)
    else:
        argv, why = _runnable(args, root_dir, work, reports)
    if argv is None:
        if why.startswith("needs") and "GPU" in why and _have_gpu():
            pytest.skip("run by the GPU tests (tests/gpu/) on a machine with a GPU")  # never faked here
        pytest.skip("%s: %s" % (line, why))
    stdin = None
    if argv[-1:] == ["-"] or " - " in " %s " % " ".join(argv):
        stdin = "".join((reports / r).read_text() for r in sorted(os.listdir(reports))) \
            if "fleet" in argv else "Could not load library libcudnn_ops_infer.so.8\n"
    saved = dict(os.environ)
    try:
        result = runner.invoke(app, argv, input=stdin)
    finally:  # root options (--debug, --color) export themselves for the run's children; not past this test
        os.environ.clear()
        os.environ.update(saved)
    # Judged (0, 1, or 4 for something unchecked), never a usage error (2) or the doctor failing (3).
    assert result.exit_code in (0, 1, 4), "%s: %s\n-> %r exit %s\n%s%s" % (
        page, line, argv, result.exit_code, result.stdout[-1500:], result.stderr[-1500:])
    if "--json" in argv:
        written = argv[argv.index("--output-file") + 1] if "--output-file" in argv else None
        assert json.loads(Path(written).read_text() if written else result.stdout)["schema_version"]
    if argv[0] in ("install", "rollback"):  # installed (or planned, or undone), not refused
        assert result.exit_code == 0, result.stdout[-1500:] + result.stderr[-1500:]
        if argv[0] == "install" and "--dry-run" not in argv:
            assert "Installed" in result.stdout + result.stderr, result.stdout[-1500:]


# --- what the pages promise, against the code ---------------------------------------------------------------


def _section(page: str, heading: str) -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_exit_code_table_matches_the_code():
    from cudnn_doctor import ui

    section = _section("json.md", "## Exit codes")
    for code in (ui.EXIT_OK, ui.EXIT_PROBLEMS, ui.EXIT_USAGE, ui.EXIT_DOCTOR_FAILED):
        assert re.search(r"^\| %d \|" % code, section, re.M), code


def test_require_keys_are_all_documented():
    policy = pytest.importorskip("cudnn_doctor.rules.policy")
    section = _section("check.md", "## Your job's requirements")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
    assert documented == set(policy.REQUIRE_KEYS)


def test_action_inputs_and_outputs_are_documented():
    import test_github_action as test_action

    action = test_action.load_action((REPO / "action.yml").read_text(encoding="utf-8"))
    page = (DOCS / "ci.md").read_text(encoding="utf-8")
    for name in list(action["inputs"]) + list(action["outputs"]):
        assert re.search(r"^\| `%s` \|" % re.escape(name), page, re.M), "docs/ci.md lacks the action's %s" % name


def test_matrix_and_explain_examples_are_many():
    """These read only the bundled data, so their examples run exactly as written (test_every_example_runs)."""
    assert sum(1 for _, _, a in EXAMPLES if a[:1] in (["matrix"], ["explain"])) >= 8


# --- what the pages show a command printing ------------------------------------------------------------------


SHOWN = [(page.name, line, body) for page in PAGES for line, body in output_blocks(page.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page, line, body", SHOWN, ids=["%s:%d" % (p, n) for p, n, _ in SHOWN])
def test_every_output_shown_is_what_the_command_prints(page, line, body, tmp_path):
    """Each block of output a page shows is the real output of the machine, report or command behind it
    (tests/doc_outputs.py), abridged at most: lines left out, and words where a line says ..., (...) or …"""
    shown = shown_lines(body)
    if not shown:
        return  # commands only: test_every_command_shown_exists checks them
    make, why = doc_outputs.producer(page, body)
    if make is None:
        assert why, "%s:%d shows output no test prints: add what prints it to tests/doc_outputs.py" % (page, line)
        pytest.skip(why)
    real = make(tmp_path)
    missing = unmatched_line(shown, real)
    assert missing is None, "%s:%d shows a line the program does not print:\n%s\nIt prints:\n%s" % (
        page, line, missing, real)


# What each command's documentation page is, for the lists of commands.
COMMAND_PAGES = {"check": "check.md", "pick": "pick.md", "fix": "fix.md", "explain": "explain.md", "matrix": "matrix.md",
                 "install": "install.md", "rollback": "install.md", "smoke": "smoke.md", "bench": "bench.md",
                 "fleet": "fleet.md", "update": "knowledge.md"}


def test_every_command_has_its_page():
    assert set(COMMAND_PAGES) == set(root().commands)


@pytest.mark.parametrize("where, text", [
    ("README.md's Documentation", (REPO / "README.md").read_text(encoding="utf-8").split("## Documentation", 1)[1]),
    ("docs/index.md", (DOCS / "index.md").read_text(encoding="utf-8")),
    ("docs/getting-started.md's Every command", _section("getting-started.md", "## Every command")),
    ("mkdocs.yml's nav", (REPO / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:", 1)[1]),
])
def test_every_list_of_commands_names_every_command(where, text):
    linked = set(re.findall(r"\(?(?:docs/)?([\w-]+\.md)", text))
    missing = sorted(c for c, page in COMMAND_PAGES.items() if page not in linked)
    assert not missing, "%s leaves out %s" % (where, ", ".join(missing))


@pytest.mark.parametrize("page", ["README.md", "getting-started.md"])
def test_the_section_marks_described_are_the_marks_printed(page):
    from cudnn_doctor.render.human import MARKS

    text = (REPO / page if page == "README.md" else DOCS / page).read_text(encoding="utf-8")
    prose = FENCE.sub("", text)
    described = set(re.findall(r"`(\[.\])`", prose))
    assert described == {mark for mark, _ in MARKS.values()}


def _help_exit_codes(name: str) -> set:
    text = " ".join(runner.invoke(app, [name, "--help"], terminal_width=400).stdout.split())
    paragraph = text.split("Exit codes:", 1)[1].split("Examples:", 1)[0]
    return {int(n) for n in re.findall(r"(?<![\w.>=-])(\d)(?![\w.])", paragraph)}


@pytest.mark.parametrize("name", sorted(set(root().commands) - {"install", "rollback"}))
def test_each_commands_exit_codes_are_in_its_help_and_in_json_md(name):
    """The codes a command's --help lists are the codes docs/json.md's table gives it."""
    row = re.search(r"^\| `%s` \|(.*)$" % name, _section("json.md", "## Exit codes"), re.M)
    assert row, "docs/json.md's exit-code table has no row for %s" % name
    cells = [c.strip() for c in row.group(1).split("|")[:3]]
    documented = {code for code, cell in enumerate(cells) if cell}
    documented |= {int(n) for n in re.findall(r"(\d): ", row.group(1))}  # `4: ...`, inside a cell
    in_help = _help_exit_codes(name) - {3}  # every command's, said once above the table
    assert in_help == documented, (name, in_help, documented)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_count_of_tests_that_goes_stale(page):
    """A page never says how many tests there are: the number is wrong by the next commit."""
    text = page.read_text(encoding="utf-8")
    if page.name == "README.md":  # its Tests section has another owner in issue 42, who removes its count
        text = re.sub(r"\n## Tests\n.*?(?=\n## |\Z)", "\n", text, flags=re.S)
    counts = re.findall(r"\b\d[\d,]* (?:tests|test cases)\b|\b\d+ passed\b", text)
    assert not counts, "%s counts tests: %s" % (page.name, counts)
