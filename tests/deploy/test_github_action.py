"""The composite GitHub Action (action.yml): parsed without PyYAML, and its steps run locally the way a runner would."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

REPO = Path(__file__).resolve().parents[2]
ACTION = REPO / "action.yml"
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


# --- a small YAML reader: the subset action.yml is written in -----------------------------------
# Block mappings, block lists of mappings, `|` block scalars, plain and quoted scalars, comments.


def _scalar(text: str) -> Any:
    text = text.strip()
    if text[:1] in ("'", '"'):
        quote = text[0]
        end = text.index(quote, 1) if quote == '"' else _single_quote_end(text)
        rest = text[end + 1:].strip()
        assert not rest or rest.startswith("#"), "unexpected text after a quoted scalar: %r" % text
        body = text[1:end]
        return body.replace("''", "'") if quote == "'" else body.replace('\\"', '"').replace("\\\\", "\\")
    text = re.split(r"\s+#", text, maxsplit=1)[0].strip()
    return {"true": True, "false": False, "null": None, "~": None, "": None}.get(text, text)


def _single_quote_end(text: str) -> int:
    i = 1
    while True:
        i = text.index("'", i)
        if text[i + 1:i + 2] == "'":
            i += 2
            continue
        return i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _meaningful(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("#")


def _block(lines: List[str], i: int, indent: int) -> Tuple[Any, int]:
    while i < len(lines) and not _meaningful(lines[i]):
        i += 1
    if i >= len(lines) or _indent(lines[i]) < indent:
        return None, i
    indent = _indent(lines[i])
    if lines[i].lstrip().startswith("- "):
        items = []
        while i < len(lines):
            if not _meaningful(lines[i]):
                i += 1
                continue
            if _indent(lines[i]) != indent or not lines[i].lstrip().startswith("- "):
                break
            # "- key: value" opens a mapping whose keys sit two columns to the right of the dash.
            lines[i] = " " * (indent + 2) + lines[i].lstrip()[2:]
            item, i = _block(lines, i, indent + 2)
            items.append(item)
        return items, i
    out: Dict[str, Any] = {}
    while i < len(lines):
        line = lines[i]
        if not _meaningful(line):
            i += 1
            continue
        if _indent(line) < indent:
            break
        assert _indent(line) == indent, "bad indentation at line: %r" % line
        m = re.match(r"^\s*([A-Za-z0-9_.-]+):(?:\s+(.*))?$", line)
        assert m, "not a mapping entry: %r" % line
        key, rest = m.group(1), (m.group(2) or "").strip()
        i += 1
        if rest in ("|", "|-"):
            body: List[str] = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
                body.append(lines[i])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            cut = min((_indent(b) for b in body if b.strip()), default=0)
            text = "\n".join(b[cut:] for b in body)
            out[key] = text + ("\n" if rest == "|" and text else "")
        elif rest and not rest.startswith("#"):
            out[key] = _scalar(rest)
        else:
            out[key], i = _block(lines, i, indent + 1)
    return out, i


def load_action(text: str) -> Dict[str, Any]:
    doc, _ = _block(text.splitlines(), 0, 0)
    return doc


@pytest.fixture(scope="module")
def action() -> Dict[str, Any]:
    return load_action(ACTION.read_text(encoding="utf-8"))


# --- running the steps like a runner ------------------------------------------------------------


class Runner:
    """Runs action.yml's composite steps with `${{ }}` expressions filled in, as GitHub's runner would."""

    def __init__(self, action: Dict[str, Any], work: Path, with_: Dict[str, str], action_path: Path,
                 env: Dict[str, str], outputs: Optional[Dict[str, Dict[str, str]]] = None) -> None:
        self.action, self.work, self.action_path, self.env = action, work, action_path, env
        self.inputs = {k: str(v.get("default") or "") for k, v in action["inputs"].items()}
        unknown = set(with_) - set(self.inputs)
        assert not unknown, "inputs not declared in action.yml: %s" % unknown
        self.inputs.update(with_)
        self.steps: Dict[str, Dict[str, str]] = dict(outputs or {})
        self.summary = work / "step_summary.md"
        self.path_file = work / "github_path"
        self.summary.touch()
        self.path_file.touch()
        self.logs: Dict[str, subprocess.CompletedProcess] = {}

    def expand(self, text: str) -> str:
        def one(m: "re.Match[str]") -> str:
            expr = m.group(1)
            parts = expr.split(".")
            if parts[0] == "inputs" and len(parts) == 2:
                return self.inputs[parts[1]]
            if expr == "github.action_path":
                return str(self.action_path)
            if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
                return self.steps.get(parts[1], {}).get(parts[3], "")
            raise AssertionError("expression the test runner does not know: %s" % expr)

        return EXPR.sub(one, text)

    def run_step(self, step: Dict[str, Any]) -> subprocess.CompletedProcess:
        assert step["shell"] == "bash"
        out_file = self.work / ("output-%s" % step["id"])
        out_file.write_text("")
        env = dict(self.env)
        env.update({k: self.expand(str(v)) for k, v in (step.get("env") or {}).items()})
        env.update(GITHUB_ACTIONS="true", GITHUB_OUTPUT=str(out_file), GITHUB_STEP_SUMMARY=str(self.summary),
                   GITHUB_PATH=str(self.path_file), GITHUB_ENV=str(self.work / "github_env"),
                   GITHUB_ACTION_PATH=str(self.action_path), RUNNER_TEMP=str(self.work / "runner_temp"))
        (self.work / "runner_temp").mkdir(exist_ok=True)
        script = self.work / ("step-%s.sh" % step["id"])
        script.write_text(self.expand(step["run"]))
        # GitHub runs `shell: bash` as: bash --noprofile --norc -eo pipefail {0}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env,
                              cwd=str(self.work), capture_output=True, text=True, timeout=300)
        self.steps[step["id"]] = _read_outputs(out_file.read_text())
        self.logs[step["id"]] = proc
        return proc

    def run(self, only: Optional[str] = None) -> int:
        for step in self.action["runs"]["steps"]:
            if only and step["id"] != only:
                continue
            proc = self.run_step(step)
            if proc.returncode != 0:
                return proc.returncode
        return 0

    def outputs(self) -> Dict[str, str]:
        return {k: self.expand(str(v["value"])) for k, v in self.action["outputs"].items()}


def _read_outputs(text: str) -> Dict[str, str]:
    """$GITHUB_OUTPUT: name=value lines, or name<<DELIM ... DELIM blocks."""
    out: Dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delim:
                body.append(lines[i])
                i += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


SHIM = r'''#!%(python)s
"""cudnn-doctor for the action tests: only injected findings, a recorded argv, or a forced crash."""
import json, os, sys
if os.environ.get("CD_TEST_ARGV"):
    with open(os.environ["CD_TEST_ARGV"], "w") as fh:
        json.dump(sys.argv[1:], fh)
import importlib, importlib.util
from cudnn_doctor import rules
from cudnn_doctor.model import Finding, Severity
from cudnn_doctor.remedies import stated
# Only the injected findings: these tests are about the action, not about which rules exist today.
if importlib.util.find_spec("cudnn_doctor.rules.registry") is not None:
    importlib.import_module("cudnn_doctor.rules.registry")
rules.RULES[:] = []
for n, sev in enumerate(filter(None, os.environ.get("CD_TEST_FINDINGS", "").split(","))):
    rid = "CD99%%d" %% n
    def judge(facts, ctx, rid=rid, sev=sev):
        return [Finding(id=rid, severity=Severity(sev), title="Injected " + sev + ", 100%%, a: b",
                        detail="line one\nline two", remedy=stated("do the thing"))]
    rules.rule(rid, "injected-" + sev, "injected", section="doctor")(judge)
if os.environ.get("CD_TEST_CRASH"):
    import cudnn_doctor.diagnose as check
    def boom(*args, **kwargs):
        raise RuntimeError("probe exploded")
    check.collect_facts = boom
from cudnn_doctor.cli import main
main()
'''


def _base_env(pythonpath: bool = True) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = str(REPO)
    return env


@pytest.fixture
def fake_root(tmp_path) -> Path:
    import kit

    m = kit.FakeMachine(tmp_path / "root")
    m.mkdir("/usr/lib")
    return m.root


@pytest.fixture
def check_step(action, tmp_path):
    """Run only the check step, with `steps.install.outputs.path` pointing at the test shim."""
    shim = tmp_path / "bin" / "cudnn-doctor"
    shim.parent.mkdir()
    shim.write_text(SHIM % {"python": sys.executable})
    shim.chmod(0o755)

    def run(with_: Dict[str, str], **env: str) -> Tuple[int, Runner]:
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        base = _base_env()
        base.update(env)
        runner = Runner(action, work, with_, REPO, base, outputs={"install": {"path": str(shim)}})
        code = runner.run(only="check")
        return code, runner

    return run


# --- the file itself ----------------------------------------------------------------------------


def test_parser_agrees_with_pyyaml_when_available(action):
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(ACTION.read_text(encoding="utf-8")) == action


def test_action_shape(action):
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"require", "for", "strict", "root", "args", "version"}
    assert set(action["outputs"]) >= {"verdict", "exit-code"}
    for name, spec in action["inputs"].items():
        assert spec.get("description"), "input %s has no description" % name
        assert spec.get("required") is False and "default" in spec, name
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash" and step.get("id") and step.get("name")


def test_inputs_reach_scripts_through_env_only(action):
    """No `${{ }}` inside a run script (an input could inject shell code); every input is used."""
    used = set()
    for step in action["runs"]["steps"]:
        assert "${{" not in step["run"], "step %s pastes an expression into its script" % step["id"]
        for value in (step.get("env") or {}).values():
            used.update(m.group(1).split(".", 1)[1] for m in EXPR.finditer(str(value))
                        if m.group(1).startswith("inputs."))
    assert used == set(action["inputs"])


def test_step_scripts_parse(action, tmp_path):
    for step in action["runs"]["steps"]:
        script = tmp_path / ("%s.sh" % step["id"])
        script.write_text(step["run"])
        proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_mini_parser_on_tricky_yaml():
    doc = load_action('a: "x: y # not a comment"\nb: plain # comment\nc: |\n  one\n\n  two\nd:\n  - k: v\n'
                      '    n: 1\n  - k: w\ne: \'it\'\'s\'\n')
    assert doc == {"a": "x: y # not a comment", "b": "plain", "c": "one\n\ntwo\n",
                   "d": [{"k": "v", "n": "1"}, {"k": "w"}], "e": "it's"}


# --- the steps, run --------------------------------------------------------------------------


def test_install_step_for_real_then_check(action, tmp_path, fake_root):
    """The install step's own command: a venv and `pip install` of the action's checkout, then check with it."""
    checkout = tmp_path / "action"
    checkout.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, checkout / name)
    for name in ("cudnn_doctor", "compat", "schema"):
        shutil.copytree(REPO / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    work = tmp_path / "work"
    work.mkdir()
    runner = Runner(action, work, {"root": str(fake_root), "python": sys.executable}, checkout,
                    _base_env(pythonpath=False))
    code = runner.run()
    install = runner.logs["install"]
    assert install.returncode == 0, install.stdout + install.stderr
    exe = Path(runner.steps["install"]["path"])
    assert os.access(str(exe), os.X_OK) and "cudnn-doctor " in install.stdout
    assert runner.path_file.read_text().strip() == str(exe.parent)
    out = runner.outputs()
    assert out["exit-code"] == str(code) and code in (0, 1)
    assert out["verdict"] in ("ok", "warning", "error") and out["path"] == str(exe)
    assert (out["verdict"] == "error") == (code == 1)
    lines = runner.logs["check"].stdout.splitlines()
    assert lines[-1].startswith("cudnn-doctor: %s (" % out["verdict"])
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines[:-1])
    assert "## cudnn-doctor: %s" % out["verdict"] in runner.summary.read_text()


def test_warning_passes_unless_strict(check_step, fake_root):
    code, runner = check_step({"root": str(fake_root)}, CD_TEST_FINDINGS="warning")
    out = runner.outputs()
    assert code == 0 and out == dict(out, verdict="warning", errors="0", warnings="1")
    stdout = runner.logs["check"].stdout
    # The annotation escapes its newlines and %, so the whole finding stays one workflow command.
    assert "::warning title=CD990 injected-warning::Injected warning, 100%25, a: b%0Aline one%0Aline two%0A" \
           "Fix: do the thing\n" in stdout
    assert "| warning | CD990 |" in runner.summary.read_text()

    code, runner = check_step({"root": str(fake_root), "strict": "true"}, CD_TEST_FINDINGS="warning")
    assert code == 1 and runner.outputs()["exit-code"] == "1" and runner.outputs()["verdict"] == "warning"


def test_error_fails_the_step_with_an_annotation(check_step, fake_root):
    code, runner = check_step({"root": str(fake_root)}, CD_TEST_FINDINGS="error,warning")
    out = runner.outputs()
    assert code == 1 and out == dict(out, verdict="error", errors="1", warnings="1")
    assert re.search(r"^::error title=CD99\d injected-error::Injected error", runner.logs["check"].stdout, re.M)


def test_inputs_become_arguments(check_step, fake_root, tmp_path):
    argv = tmp_path / "argv.json"
    junit = tmp_path / "reports" / "doctor.xml"
    code, runner = check_step({"root": str(fake_root), "require": "cudnn>=9\ndriver>=535   cc>=7.0\n",
                               "for": "dl4j==1.0.0-beta6", "args": "-v --junit-xml %s" % junit},
                              CD_TEST_ARGV=str(argv))
    assert code in (0, 1), runner.logs["check"].stderr
    args = json.loads(argv.read_text())
    assert args[:4] == ["check", "--format", "github", "--root"]
    assert [args[i + 1] for i, a in enumerate(args) if a == "--require"] == ["cudnn>=9", "driver>=535", "cc>=7.0"]
    assert args[args.index("--for") + 1] == "dl4j==1.0.0-beta6"
    assert args[-3:] == ["-v", "--junit-xml", str(junit)] and junit.is_file()
    assert "--strict" not in args


def test_glob_characters_in_inputs_stay_literal(check_step, fake_root, tmp_path):
    argv = tmp_path / "argv.json"
    (tmp_path / "work_glob_bait").mkdir()
    check_step({"root": str(fake_root), "require": "cuda>=1*"}, CD_TEST_ARGV=str(argv))
    args = json.loads(argv.read_text())
    assert args[args.index("--require") + 1] == "cuda>=1*"


def test_usage_error_and_doctor_failure(check_step, tmp_path, fake_root):
    code, runner = check_step({"root": str(tmp_path / "missing")})
    assert code == 2 and runner.outputs()["verdict"] == "usage-error"
    stderr = runner.logs["check"].stderr  # one line naming the bad --root, whatever its wording
    assert stderr.startswith("cudnn-doctor: error: --root ") and "missing" in stderr and len(stderr.splitlines()) == 1

    code, runner = check_step({"root": str(fake_root)}, CD_TEST_CRASH="1")
    assert code == 3 and runner.outputs()["verdict"] == "failed" and runner.outputs()["exit-code"] == "3"
    assert "internal error" in runner.logs["check"].stderr and "Traceback" not in runner.logs["check"].stderr


# --- the workflow the documentation shows ---------------------------------------------------------------------


def _documented_workflow() -> Dict[str, Any]:
    page = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"^```yaml\n(jobs:\n.*?)^```$", page, re.M | re.S)
    assert block, "docs/ci.md shows no workflow"
    return load_action(block.group(1))


def test_no_placeholder_owner_anywhere_a_user_reads():
    for path in [REPO / "README.md", ACTION] + sorted((REPO / "docs").glob("*.md")):
        assert "OWNER/" not in path.read_text(encoding="utf-8"), path.name


def test_documented_uses_resolves_to_this_action():
    """`uses: ./` is the root of the workflow's checkout: this repository, whose action.yml is the one tested here."""
    steps = _documented_workflow()["jobs"]["train"]["steps"]
    local = [s for s in steps if str(s.get("uses", "")).startswith("./")]
    assert [s["uses"] for s in local] == ["./"]
    assert (REPO / local[0]["uses"] / "action.yml").resolve() == ACTION.resolve()
    assert set(local[0]["with"]) <= set(load_action(ACTION.read_text(encoding="utf-8"))["inputs"])


def test_documented_workflow_runs_as_written(action, tmp_path, fake_root):
    """The docs' job, step by step as a runner would: checkout (this tree), the action with the documented inputs
    (installed for real from the checkout), then the next step reading the action's outputs. The machine checked
    is an empty fake root rather than the runner's own (the one input added)."""
    steps = _documented_workflow()["jobs"]["train"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    doctor, after = steps[1], steps[2]
    checkout = tmp_path / "workspace"
    checkout.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE", "action.yml"):
        shutil.copy2(REPO / name, checkout / name)
    for name in ("cudnn_doctor", "compat", "schema"):
        shutil.copytree(REPO / name, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    work = checkout  # a workflow's steps run in the checkout (GITHUB_WORKSPACE)
    with_ = {k: str(v) for k, v in doctor["with"].items()}
    with_.update(root=str(fake_root), python=sys.executable)
    runner = Runner(load_action((checkout / doctor["uses"] / "action.yml").read_text(encoding="utf-8")), work, with_,
                    checkout / doctor["uses"], _base_env(pythonpath=False))
    code = runner.run()
    assert runner.logs["install"].returncode == 0, runner.logs["install"].stderr[-2000:]
    check = runner.logs["check"]
    args_seen = check.stdout + check.stderr
    assert "usage" not in args_seen.lower(), args_seen  # the documented require/for/args are all accepted
    assert (work / "cudnn-doctor.xml").is_file()  # args: -v --junit-xml cudnn-doctor.xml
    outputs = runner.outputs()
    assert outputs["exit-code"] == str(code) and outputs["verdict"] == "error"  # an empty root has no driver
    # The next step, `if: always()`, with the action's outputs filled in as the runner fills them.
    assert after.get("if") == "always()"
    script = EXPR.sub(lambda m: outputs[m.group(1).split(".")[-1]] if m.group(1).startswith("steps.doctor.outputs.")
                      else m.group(0), after["run"])
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], capture_output=True,
                          text=True, cwd=str(work))
    assert proc.stdout.strip() == "verdict error, exit %d" % code
