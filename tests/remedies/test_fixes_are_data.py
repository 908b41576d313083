"""Fixes are data (issue 42): every command a fix names is one of its `commands` (or `alternatives`, another way),
so `--json` carries it and the Target (sudo, --root, this doctor's start words) shapes it; no command hides in a
sentence. The walk runs every rule over every built-facts scenario (for a user on / and for root under --root),
smoke's fix for every status and explain over its corpus, and records what each builder in cudnn_doctor/remedies
returned (a profile hook sees every return, the parts a fix is composed of too); the builders no walk reaches are
read instead (a command written into stated's or advice's words, or a plain part of say). compat's fix rows are
checked the same way: commands in `commands`, words in `words`, which names each command only by its place."""
from __future__ import annotations

import functools
import inspect
import os
import re
import sys
from typing import Callable, Dict, List, Set

import pytest

import cudnn_doctor.remedies as remedies_package
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Fix, Target
from cudnn_doctor.remedies.acting import building_for
from cudnn_doctor.rules import RuleContext, evaluate

REMEDIES = os.path.dirname(inspect.getfile(remedies_package))

# What a command looks like inside words: shown in backticks, or a program a fix runs named with its arguments.
COMMAND_LIKE = re.compile(
    r"`[^`\s\x00-][^`\x00]*`"
    r"|\bsudo \S"
    r"|\b(?:python3? -m )?(?:pip3?|conda|mamba|apt|apt-get|dnf|yum|zypper) (?:install|uninstall|remove|update|upgrade)\b"
    r"|\bexport [A-Za-z_]+="
    r"|\bunset [A-Z_]{2,}\b"
    r"|\bldconfig\b"
    r"|\bcudnn-doctor (?:check|smoke|install|bench|explain|matrix|pick|update|uninstall|fleet)\b"
    r"|\bnvidia-smi -\w"
    r"|\b(?:modprobe|rmmod|systemctl|mokutil|update-initramfs|ubuntu-drivers|nvidia-ctk|apt-mark|namei|findmnt) "
    r"|\bwsl --shutdown\b"
    r"|\$env:|\[Environment\]::")


def prose_commands(fix: Fix) -> List[str]:
    """The command-like text of ``fix``'s line that is not one of its commands or alternatives (nor its cudnn-doctor
    command). An option shown alone (`--gpus all`) is part of a command, not one."""
    rest = fix.text
    for command in sorted({c for c in list(fix.commands) + list(fix.alternatives) + [fix.doctor] if c}, key=len,
                          reverse=True):
        rest = rest.replace(command, "\x00")
    rest = re.sub(r"`[^`]*\x00[^`]*`", "\x00", rest)  # a command shown in backticks, with its neighbours
    return [m.group(0) for m in COMMAND_LIKE.finditer(rest)]


# --- the walk: which builder returned which fixes ------------------------------------------------------------------


def _builders() -> Dict[object, str]:
    """The code object of every function in cudnn_doctor/remedies that says it returns a Fix -> its name."""
    import importlib
    import pkgutil

    import cudnn_doctor.remedies as package

    out: Dict[object, str] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module("cudnn_doctor.remedies." + info.name)
        for name, func in vars(module).items():
            if inspect.isfunction(func) and func.__module__ == module.__name__ and \
                    func.__annotations__.get("return") in ("Fix", "Optional[Fix]"):
                out[func.__code__] = "%s.%s" % (info.name, name)
    return out


BUILDERS = _builders()
# The primitives compose fixes out of their parts; the parts are judged, and what a composition says is judged in the
# builder that called it.
PRIMITIVES = {"shell.run", "shell.stated", "shell.advice", "shell.say", "shell.or_else", "shell.then", "shell.noted",
              "shell.capitalized", "shells.command_fix"}


class Walk:
    def __init__(self) -> None:
        self.seen: Dict[str, List[Fix]] = {}

    def __call__(self, frame, event, arg):
        if event == "return" and isinstance(arg, Fix):
            name = BUILDERS.get(frame.f_code)
            if name is not None:
                self.seen.setdefault(name, []).append(arg)

    def run(self, func: Callable[[], object]) -> None:
        old = sys.getprofile()
        sys.setprofile(self)
        try:
            func()
        finally:
            sys.setprofile(old)


def _rules_over_scenarios() -> None:
    from test_fixes_runnable import FACT_SCENARIOS

    compat = load_compat()
    for target in (Target(), Target(root="/mnt/other root", as_root=True)):
        for build, options in FACT_SCENARIOS.values():
            evaluate(build(), RuleContext(compat=compat, requires=list(options.get("requires", [])),
                                          target=options.get("target"), fix_target=target))


def _smoke_statuses() -> None:
    from cudnn_doctor.remedies.doctor import smoke_status_fix

    compat = load_compat()
    with building_for(Target()):
        for name in compat.status_entries():
            smoke_status_fix(compat, name)


def _explain_corpus() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "explain"))
    import explain_grading as grading

    for split in grading.SPLITS:
        for case in grading.cases(split):
            grading.run_explain(case["text"])


def _explain_families() -> None:
    """The family tests' own texts too: a family's other branches (a release the wheel index does not hold, a text
    with no release) are reached there, not in the corpus."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "explain"))
    from test_fresh_families import FAMILIES

    from cudnn_doctor.explain import explain

    for row in FAMILIES:
        explain(row[1], check=False)


def _explain_launchers() -> None:
    """The real texts of the breadth sweeps' tests (launchers, serving stacks, cluster logs, misread statuses)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "explain"))
    from test_launch_answers import CASES as LAUNCH
    from test_misread_statuses import CASES as STATUSES

    from cudnn_doctor.explain import explain

    for row in list(LAUNCH) + list(STATUSES):
        explain(row[1], check=False)


WALKS = (_rules_over_scenarios, _smoke_statuses, _explain_corpus, _explain_families, _explain_launchers)


@functools.lru_cache(maxsize=None)
def walked() -> Dict[str, List[Fix]]:
    walk = Walk()
    for step in WALKS:
        walk.run(step)
    return walk.seen


def test_no_fix_keeps_a_command_in_its_words():
    problems: Dict[str, Set[str]] = {}
    for name, fixes in walked().items():
        if name in PRIMITIVES:
            continue
        for fix in fixes:
            found = prose_commands(fix)
            if found:
                problems.setdefault(name, set()).add("%s   <- %s" % (fix.text, ", ".join(found)))
    assert not problems, "%d builders keep commands in prose:\n%s" % (len(problems), "\n".join(
        "%s: %s" % (name, sorted(texts)[0]) for name, texts in sorted(problems.items())))


# --- compat's fix rows ---------------------------------------------------------------------------------------------


def test_toml_fix_rows_keep_commands_out_of_their_words():
    compat = load_compat()
    # the status table's rows and the fixes of the checks compat/checks.toml declares
    rows = {**compat.status_entries(), **{"checks.%s" % c.alias: dict(c.fix) for c in compat.declared_checks()}}
    # a row's words for Windows (its PowerShell commands) are a row too
    rows.update({"%s.on_windows" % n: e["on_windows"] for n, e in compat.status_entries().items() if "on_windows" in e})
    assert any(n.endswith(".on_windows") for n in rows)
    problems = []
    for name, entry in rows.items():
        if "same_as" in entry:
            continue
        assert "fix" not in entry, "%s: a fix row is `commands` and `words`, not `fix`" % name
        commands, words = entry.get("commands", []) + entry.get("alternatives", []), entry.get("words", "")
        bare = re.sub(r"`[^`]*\x00[^`]*`", "\x00", re.sub(r"\{\d+\}", "\x00", words))
        problems += ["%s: %r in its words" % (name, m.group(0)) for m in COMMAND_LIKE.finditer(bare)]
        used = {int(n) for n in re.findall(r"\{(\d+)\}", words)}
        if used != set(range(len(commands))):
            problems.append("%s: its words name commands %s of %d" % (name, sorted(used), len(commands)))
    assert problems == []


# --- the detector itself -------------------------------------------------------------------------------------------


def test_the_detector_sees_commands_left_in_words():
    from cudnn_doctor.remedies import advice, run

    with building_for(Target()):
        assert prose_commands(advice("Run `cudnn-doctor check` for the cause.")) == ["`cudnn-doctor check`"]
        assert prose_commands(advice("remove it and run sudo ldconfig")) == ["sudo l"]
        assert prose_commands(run("sudo ldconfig", "nvidia-smi", text="Run `sudo ldconfig`, then `nvidia-smi`")) == []
        assert prose_commands(advice("Install the NVIDIA driver, then reboot.")) == []


def test_the_walk_reaches_the_builders():
    """Every builder the walk never calls is one no scenario reaches yet: they are named here so that the list only
    shrinks (a new builder is reached by a scenario, or added to a walk above)."""
    reached = set(walked())
    unreached = sorted(set(BUILDERS.values()) - reached - PRIMITIVES)
    assert len(unreached) <= UNREACHED_AT_MOST, unreached


# 211 of the builders no walk above reaches yet (bench's, the installer's, Windows', node's, ...): the static check
# below reads their words instead, and this number only goes down.
UNREACHED_AT_MOST = 211


# --- every builder, read: what the walk cannot reach ----------------------------------------------------------------

# The primitives whose result is a command line: passed into words (stated, advice) or as a plain part of say, that
# command would be in the words only.
COMMAND_PRIMITIVES = {"doctor", "sudo", "system", "on_machine", "ldconfig", "pip", "conda", "prepend_ld_path",
                      "export_path_line"}


def _words_calls(path: str):
    """(line, what is wrong) for each call in ``path`` that writes a command into words."""
    import ast

    source = open(path).read()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id in ("stated", "advice"):
            inner = list(ast.walk(node))
        elif node.func.id == "say":
            inner = [n for a in node.args[1:] if isinstance(a, ast.Call) for n in [a]]
        else:
            continue
        literal = " ".join(n.value for n in inner if isinstance(n, ast.Constant) and isinstance(n.value, str)) \
            if node.func.id != "say" else ""
        found = [m.group(0) for m in COMMAND_LIKE.finditer(literal)]
        found += ["%s()" % n.func.id for n in inner if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                  and n.func.id in COMMAND_PRIMITIVES]
        if found:
            yield node.lineno, found


def test_no_builder_writes_a_command_into_words():
    """Every builder in cudnn_doctor/remedies, reached or not: a command goes through run/said/command_fix (or a run
    part of say), never into stated's or advice's words."""
    import glob

    problems = ["%s:%d %s" % (os.path.relpath(path, REMEDIES), line, found)
                for path in sorted(glob.glob(os.path.join(REMEDIES, "*.py"))) for line, found in _words_calls(path)]
    assert problems == []
