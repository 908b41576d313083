"""Every fix runnable as printed: no <placeholders>, no double slashes, and no command that assumes a path the
machine does not have (walks every rule over every scenario machine of the test kit)."""
from __future__ import annotations

import os
import re
import shlex
from typing import Dict, Iterable, List, Optional

import pytest

from cudnn_doctor.compat import load_compat
from cudnn_doctor.model import Finding
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import real_machine

PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9 ._-]*>")
DOUBLE_SLASH = re.compile(r"(?<![:/])//")
# Commands after one of these may use what it installs: their paths are not checked against the machine.
INSTALLS = re.compile(r"\b(apt|apt-get|dnf|yum|pip|conda|cudnn-doctor)\s+install\b")


def text_problems(f: Finding) -> List[str]:
    texts = [f.fix] + (list(f.remedy.commands) + [f.remedy.doctor, f.remedy.manual] if f.remedy else [])
    out = []
    for text in filter(None, texts):
        out += ["%s: placeholder %s in %r" % (f.id, m.group(0), text) for m in PLACEHOLDER.finditer(text)]
        if DOUBLE_SLASH.search(text):
            out.append("%s: double slash in %r" % (f.id, text))
    return out


def _words(command: str) -> Optional[List[str]]:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words[1:] if words and words[0] == "sudo" else words


def assumed_paths(commands: Iterable[str]) -> List[str]:
    """The paths these commands need to exist before they run (`cd`, `chmod`, `rm`, `ln` targets), absolute."""
    cwd: Optional[str] = None
    out: List[str] = []

    def where(path: str) -> Optional[str]:
        if path.startswith("/"):
            return os.path.normpath(path)
        return os.path.normpath(os.path.join(cwd, path)) if cwd and "$" not in path and "~" not in path else None

    for command in commands:
        if INSTALLS.search(command):
            break
        words = _words(command)
        if not words:
            continue
        args = [w for w in words[1:] if not w.startswith("-")]
        if words[0] == "cd" and args:
            cwd = where(args[0])
            out.append(cwd)
        elif words[0] == "chmod" and len(args) > 1:
            out += [where(a) for a in args[1:]]
        elif words[0] == "rm":
            out += [where(a) for a in args]
        elif words[0] == "ln" and len(args) == 2:
            target, name = args
            if not target.startswith("/") and name.startswith("/"):
                target = os.path.join(os.path.dirname(name), target)
            out.append(where(target))
    return [p for p in out if p]


def path_problems(f: Finding, root: str) -> List[str]:
    if not f.remedy:
        return []
    return ["%s: %r assumes %s, which does not exist in the machine" % (f.id, f.remedy.text, p)
            for p in assumed_paths(f.remedy.commands) if not os.path.lexists(root + p)]


# --- Facts scenarios (no files: placeholders and slashes) ---------------------------------------------------------


def _fact_scenarios() -> Dict[str, tuple]:
    import test_rules_scenarios as scenarios

    out = {name: (build, options) for name, (build, _, _, _, options) in scenarios.SCENARIOS.items()}
    out["policy-everything-unmet"] = (real_machine, {
        "requires": ["cuda>=14", "cudnn>=10", "driver>=999", "cc>=10", "toolkit>=14"], "target": "dl4j==1.0.0-beta6"})
    for target in ("torch", "tensorflow", "jax", "dl4j", "torch==2.5.1", "tensorflow==2.15.0"):
        out["for-" + target] = (real_machine, {"target": target})
    return out


FACT_SCENARIOS = _fact_scenarios()


@pytest.mark.parametrize("name", sorted(FACT_SCENARIOS))
def test_fixes_of_fact_scenarios_have_no_placeholders(name):
    build, options = FACT_SCENARIOS[name]
    findings, _ = evaluate(build(), RuleContext(compat=load_compat(), requires=list(options.get("requires", [])),
                                                target=options.get("target")))
    problems = [p for f in findings for p in text_problems(f)]
    assert problems == []


# --- Fake machines (real files: paths are checked too) ---------------------------------------------------------------


def _machine_scenarios() -> Dict[str, tuple]:
    import test_scenarios_machines as machines

    out = {name: (build, {}, args) for name, (build, args) in machines.PASSING.items()}
    out.update({name: (build, env, args) for name, (build, env, args, *_rest) in machines.FAILING.items()})
    return out


MACHINE_SCENARIOS = _machine_scenarios()


@pytest.mark.parametrize("name", sorted(MACHINE_SCENARIOS))
def test_fixes_on_scenario_machines_are_runnable(machine, check_json, name):
    build, env, args = MACHINE_SCENARIOS[name]
    build(machine)
    _, doc = check_json(machine, *args, env=env)
    findings = [Finding(id=f["id"], severity=f["severity"], title=f["title"], fix=f["fix"]) for f in doc["findings"]]
    for f, raw in zip(findings, doc["findings"]):
        if raw.get("remedy"):
            from cudnn_doctor.model import Fix

            f.remedy = Fix(**raw["remedy"])
    problems = [p for f in findings for p in text_problems(f) + path_problems(f, str(machine.root))]
    assert problems == []


# --- the walker itself --------------------------------------------------------------------------------------------


def test_walker_sees_what_a_shell_would_need():
    assert assumed_paths(["cd /usr/lib", "sudo ln -sf libcudnn.so.9.1.0 libcudnn.so.9", "sudo ldconfig"]) == [
        "/usr/lib", "/usr/lib/libcudnn.so.9.1.0"]
    assert assumed_paths(["sudo chmod a+r /a/b '/c d'"]) == ["/a/b", "/c d"]
    assert assumed_paths(['pip install "x"', "cd /site/nvidia/cuda_nvrtc/lib"]) == []  # installed first
    bad = Finding(id="CD999", severity="warning", title="t", fix="cd <folder> && sudo cp -P a /usr/lib//")
    assert len(text_problems(bad)) == 2
    assert not text_problems(Finding(id="CD999", severity="warning", title="t",
                                     fix='conda install "cudnn>=9.1,<10" from https://example.com/x'))
