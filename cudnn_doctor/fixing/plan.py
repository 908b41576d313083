"""`fix`'s plan, pure: the errors' `Fix.commands` sorted into what fix runs and what it leaves to the user, merged into
one whole-environment plan in the right order (package changes, merged per tool and options, then environment
variables, which go last), each step saying what it changes. Nothing here reads the machine or runs anything."""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from ..versions import canonical_name
from .commands import ENV_LINE, Parsed, parse_command


@dataclass(frozen=True)
class Environment:
    """The Python environment fix changes: its prefix, kind and the tool its packages are changed with."""

    prefix: str
    kind: str  # "venv" or "conda"
    tool: str  # "pip" (its own python -m pip), "uv" (uv pip --python) or "conda" (conda ... -p PREFIX)
    writable: bool = True  # this user may change it (an environment owned by another user is left, named)
    # The user site its python sees (a venv made with --system-site-packages, a conda environment), and the
    # interpreter that owns that site: pip in a venv installs there with --user but never uninstalls there.
    user_site: str = ""
    base_python: str = ""
    # that interpreter is externally managed (PEP 668, Debian 12's python3): its pip changes the user site only with
    # --break-system-packages
    base_managed: bool = False
    # the shell fix runs in has it activated (VIRTUAL_ENV or CONDA_PREFIX names it): only then do its new shells
    # source the activate scripts fix writes variables into; one used from PATH alone never does
    active: bool = True
    # a shell rc file the user asked fix to write the variables into (fix --rc), instead of the activate scripts
    rc: str = ""

    @property
    def python(self) -> str:
        return self.prefix.rstrip("/") + "/bin/python"

    def pip_words(self) -> List[str]:
        """The words that start this environment's package tool for a pip subcommand."""
        if self.tool == "uv":
            return ["uv", "pip"]
        return [self.python, "-m", "pip"]

    def user_pip(self, action: str) -> List[str]:
        """The pip that acts on the user site, started for ``action``: its owner's, where fix found one (pip in a venv
        writes there with --user but never removes a release there, so an upgrade would leave two of one package),
        told to act where that owner is externally managed (it refuses "externally-managed-environment" otherwise,
        the user site's changes too)."""
        if not self.base_python:
            return [*self.pip_words(), action]
        told = ["--break-system-packages"] if self.base_managed else []
        return [self.base_python, "-m", "pip", action, *told]

    def with_python(self) -> List[str]:
        """uv needs to be told the environment after the subcommand; pip is the environment's own."""
        return ["--python", self.python] if self.tool == "uv" else []


@dataclass(frozen=True)
class Erring:
    """One finding fix is asked to take on: its id, what it says and its fix's commands, in order; ``site``: the
    site-packages folder the finding is about, where one is named (None: the machine, or unknown)."""

    id: str
    title: str
    commands: Tuple[str, ...]
    site: Optional[str] = None


@dataclass
class Step:
    """One thing fix runs: ``argv`` (no shell) for packages, ``lines`` (shell lines) for the environment's variables."""

    kind: str  # "packages", "removals", "links", "variables", "system" (root's, run only as root with --yes) or
    #            "environments" (a new venv made whole by its line, in bash: ``paths`` is its folder)
    shown: str  # as printed: the exact command
    changes: str  # what it changes, in words
    ids: List[str] = field(default_factory=list)
    argv: List[str] = field(default_factory=list)
    lines: List[str] = field(default_factory=list)
    requirements: List[str] = field(default_factory=list)  # packages steps: what pip is asked for
    pip_env: Dict[str, str] = field(default_factory=dict)  # packages steps: set for pip alone (PYTHONPATH=)
    link: str = ""  # links steps: the link made (absolute), pointing at ``target``, a name beside it
    target: str = ""
    paths: List[str] = field(default_factory=list)  # removals steps: what is removed (a glob for a dist-info)
    user: bool = False  # packages steps: run by the user site's owner, on the user site
    resolved: List[str] = field(default_factory=list)  # install steps: every project pip's dry run would install
    options: List[str] = field(default_factory=list)  # environments steps: its pip's options (PyTorch's own index)


@dataclass
class Plan:
    """The merged plan: steps to run in order, what is left to the user and why, and which findings fix takes on."""

    environment: Optional[Environment]
    steps: List[Step] = field(default_factory=list)
    # (finding id, command or "", why it is left, the finding's title: two findings of one id, twins in two
    # environments, are told apart by it)
    left: List[Tuple[str, str, str, str]] = field(default_factory=list)
    taken: List[str] = field(default_factory=list)  # ids whose every command is in the steps
    not_taken: List[str] = field(default_factory=list)  # ids left whole (some command fix cannot run)

    @property
    def variable_lines(self) -> List[str]:
        return [line for s in self.steps if s.kind == "variables" for line in s.lines]

    @property
    def made(self) -> List[str]:
        """The folders of the new environments the plan makes, as its lines name them (~/venvs/NAME)."""
        return [p for s in self.steps if s.kind == "environments" for p in s.paths]

    @property
    def empty(self) -> bool:
        return not self.steps


def build_plan(errors: Sequence[Erring], environment: Optional[Environment], as_root: bool) -> Plan:
    """One plan for every finding: a finding is taken on when fix can run all its commands in ``environment``
    (root's only ``as_root``), else left whole with why; taken findings' package changes are merged per tool,
    action and options (identical commands once), and variable lines come after them, each once, in order."""
    plan = Plan(environment)
    packages: Dict[Tuple[str, Tuple[str, ...], Tuple[Tuple[str, str], ...]], Step] = {}
    variables = Step("variables", "", "")
    system: List[Step] = []
    links: List[Step] = []
    removals: List[Step] = []
    made: List[Step] = []
    gone: Set[str] = set()
    for err in errors:
        parsed = [(c, parse_command(c, as_root)) for c in err.commands]
        why = _left_why(err, parsed, environment, as_root)
        if why is not None:
            plan.not_taken.append(err.id)
            why = next((p.why for _, p in parsed if p.why), why)  # the first command fix cannot run says why
            plan.left.extend((err.id, c, why, err.title) for c, _ in parsed)
            if not parsed:
                plan.left.append((err.id, "", why, err.title))
            continue
        plan.taken.append(err.id)
        touched = {a: {project_name(r) for _, p in parsed if p.kind == "packages" and p.action == a for r in p.requirements}
                   for a in ("install", "uninstall")}
        gone |= touched["uninstall"] - touched["install"]  # a swap of one project (out, then in again) stays
        for command, p in parsed:
            if p.kind == "packages":
                assert environment is not None  # _left_why refuses package steps without one
                # The owner's own option comes from the environment (its marker file), and only for its pip
                options = tuple(o for o in p.options if o != "--break-system-packages")
                if p.action == "uninstall" and (_user_site_fix(err, environment) or p.python):
                    # pip uninstall has no --user: pip in a venv never removes from the user site ("outside
                    # environment"), so the site's owner runs it (draw 20261130-1: a JAX build left in place)
                    options += ("--user",)
                step = packages.get((p.action, options, p.variables))
                if step is None:
                    step = packages[(p.action, options, p.variables)] = Step("packages", "", "",
                                                                              pip_env=dict(p.variables))
                step.requirements.extend(r for r in p.requirements if r not in step.requirements)
                step.argv = [p.action, *options]
                _add_id(step, err.id)
            elif p.kind == "links":
                if not any(s.link == p.link for s in links):
                    links.append(Step("links", command, "links %s to %s" % (p.link, p.target), link=p.link,
                                      target=p.target))
                _add_id(next(s for s in links if s.link == p.link), err.id)
            elif p.kind == "removals":
                same = next((s for s in removals if s.paths == list(p.paths)), None)
                if same is None:
                    same = Step("removals", command, "removes %s (a `pip install --target` copy)"
                                % ", ".join(p.paths), paths=list(p.paths))
                    removals.append(same)
                _add_id(same, err.id)
            elif p.kind == "environments":
                same = next((s for s in made if s.shown == command), None)
                if same is None:
                    same = Step("environments", command, "makes the new environment %s, which the frameworks run "
                                "from after this (the one they leave keeps its packages)" % p.paths[0],
                                argv=["bash", "-c", command], paths=list(p.paths), requirements=list(p.requirements),
                                options=list(p.options))
                    made.append(same)
                _add_id(same, err.id)
            elif p.kind == "checks":
                continue  # read only: the check after the steps asks the same
            elif p.kind == "variables":
                if p.line not in variables.lines:
                    variables.lines.append(p.line)
                _add_id(variables, err.id)
            else:
                same = next((s for s in system if s.shown == command), None)
                if same is None:
                    same = Step("system", command, "the machine (as root)", argv=["sh", "-c", command])
                    system.append(same)
                _add_id(same, err.id)
    ordered = _removals_first(list(packages.values()), gone)
    for step in ordered:
        _finish_packages(step, environment)
    # a --target copy's removal, uninstalls and installs first, new environments, the machine's own after, then
    # links to the files they put in place
    plan.steps = [*removals, *ordered, *made, *system, *links]
    if variables.lines:
        variables.shown = "\n".join(variables.lines)
        variables.changes = _variables_changes(environment, variables.lines)
        plan.steps.append(variables)  # variables last: they point at what the steps above put in place
    return plan


def _left_why(err: Erring, parsed: Sequence[Tuple[str, Parsed]], environment: Optional[Environment],
              as_root: bool) -> Optional[str]:
    """Why fix leaves a finding whole (None: it takes it on)."""
    if not err.commands:
        return "its fix is words, not commands"
    if all(p.kind == "checks" for _, p in parsed):
        return "its fix changes nothing (it says to leave the environment as it is)"
    if any(p.kind == "left" for _, p in parsed):
        return "some of its commands are for you to run"
    if any(p.kind == "system" for _, p in parsed) and not as_root:
        return "it needs root"
    if any(p.kind in ("packages", "variables", "links", "removals", "environments") for _, p in parsed):
        if environment is None:
            return "no Python environment to change was named or found (activate it, or set VIRTUAL_ENV)"
        others = [p.python for _, p in parsed if p.python and not _same_interpreter(p.python, environment.base_python)]
        if others:
            return "it runs %s, another environment's pip" % others[0]
        if _user_site_fix(err, environment):
            return None if environment.writable else "%s is not yours to change" % environment.prefix
        if err.site is not None and not _inside(err.site, environment.prefix):
            return "it is about another environment (%s): run fix with that one active" % err.site
        if not environment.writable:
            return "%s is not yours to change (another user owns it): run fix as its owner" % environment.prefix
        ends = [e for _, p in parsed if p.kind == "links" for e in (p.link, p.target) if e.startswith("/")]
        outside = [e for e in ends if not _inside(e, environment.prefix)
                   and not (environment.user_site and _inside(e, environment.user_site))]
        if outside:
            return "it links %s, outside the environment" % outside[0]
    return None


def _same_interpreter(named: str, base: str) -> bool:
    """Whether a fix's absolute python is the user site's owner fix found (pyvenv.cfg's `executable`, or `home`'s
    python3: the same bin folder)."""
    return bool(base) and (named == base or os.path.dirname(named) == os.path.dirname(base))


def _user_site_fix(err: Erring, environment: Environment) -> bool:
    """A finding about the user site this environment's python sees: a framework there runs with this python, so
    its fix (`pip install --user`, or a wheel in the environment and its folder on LD_LIBRARY_PATH) is this
    environment's to run."""
    return bool(err.site and environment.user_site and _inside(err.site, environment.user_site))


def user_steps(plan: "Plan") -> bool:
    """Whether a step of the plan installs into the user site."""
    return any(s.kind == "packages" and s.user for s in plan.steps)


def _inside(path: str, prefix: str) -> bool:
    p, base = path.rstrip("/"), prefix.rstrip("/")
    return p == base or p.startswith(base + "/")


def _add_id(step: Step, fid: str) -> None:
    if fid not in step.ids:
        step.ids.append(fid)


def _removals_first(steps: List[Step], gone: Set[str]) -> List[Step]:
    """Every uninstall before every install (each fix removes a wheel before it installs the one that replaces it,
    and merging keeps that order only this way), and no install of a project ``gone`` (one a fix removes and does
    not put back): a reinstall of it is moot, and put first it wrote files into the folder the removal then
    empties (draw 291129-43: CD402's reinstall of a cu13 wheel beside CD501's swap to cu12, one nvidia/cudnn
    folder). The same requirement twice installs once."""
    removals = [s for s in steps if s.argv[0] == "uninstall"]
    installs: List[Step] = []
    for step in (s for s in steps if s.argv[0] != "uninstall"):
        done = {r for s in installs for r in s.requirements}
        kept = [r for r in step.requirements if project_name(r) not in gone and r not in done]
        if kept:
            step.requirements[:] = kept
            installs.append(step)
            continue
        # its finding is taken on by the step that installs the same, else by the removal
        owner = next((s for s in installs if set(step.requirements) & set(s.requirements)), None)
        owner = owner or (removals[0] if removals else None)
        if owner is not None:
            for i in step.ids:
                _add_id(owner, i)
    return removals + installs


def project_name(requirement: str) -> str:
    """The canonical project name of a pip requirement (``name[extra]==1.0``, ``name>=2``, ``name @ url``)."""
    return canonical_name(re.split(r"[\s\[<>=!~;@]", requirement.strip(), maxsplit=1)[0])


def _finish_packages(step: Step, environment: Optional[Environment]) -> None:
    assert environment is not None
    action, options = step.argv[0], step.argv[1:]
    step.user = "--user" in options and bool(environment.base_python) and environment.tool == "pip"
    if step.user and action == "uninstall":
        options = [o for o in options if o != "--user"]
    step.argv = ([*environment.user_pip(action), *options, *step.requirements] if step.user else
                 [*environment.pip_words(), action, *environment.with_python(), *options, *step.requirements])
    step.shown = " ".join(["%s=%s" % (n, shlex.quote(v)) for n, v in step.pip_env.items()]
                          + [shlex.quote(w) for w in step.argv])
    verb = "installs" if action == "install" else "removes"
    targets = [options[i + 1] for i, w in enumerate(options[:-1]) if w in ("--target", "-t")]
    where = targets[0] if targets else (environment.user_site if step.user and environment.user_site
                                        else environment.prefix)
    step.changes = "%s %s in %s" % (verb, ", ".join(step.requirements), where)


def _variables_changes(environment: Optional[Environment], lines: Sequence[str]) -> str:
    matches = [m for m in (ENV_LINE.match(line) for line in lines) if m]
    exported = sorted({m.group(1) for m in matches if m.group(1)})
    unset = sorted({m.group(2) for m in matches if m.group(2)} - set(exported))
    said = " and ".join(([("sets " + ", ".join(exported))] if exported else [])
                        + ([("unsets " + ", ".join(unset))] if unset else []))
    if environment is not None and environment.rc:
        return "%s in %s (a marked block at its end): every new shell that reads it gets them" % (said, environment.rc)
    where = ("%s/bin/activate (a marked block)" % environment.prefix if environment and environment.kind == "venv"
             else "%s/etc/conda/activate.d and deactivate.d" % environment.prefix if environment else "?")
    if environment is not None and not environment.active:
        # used from PATH (draw 20261205-10): its activate script is not what this shell's variables come from
        return ("%s in %s: only shells that activate this environment get them (this one did not; `--rc ~/.bashrc` "
                "writes them where every new shell reads them)" % (said, where))
    return "%s for new shells of this environment, in %s" % (said, where)


def variable_names(lines: Sequence[str]) -> List[str]:
    """The variables these export/unset lines change, in order of first change."""
    out: List[str] = []
    for line in lines:
        m = ENV_LINE.match(line)
        name = (m.group(1) or m.group(2)) if m else None
        if name and name not in out:
            out.append(name)
    return out


def with_versions(step: Step, installs: Sequence[Tuple[str, str]], before: Optional[Dict[str, str]]) -> None:
    """Say exactly what an install step changes, from pip's own dry run: each package old -> new, or added."""
    if not installs:
        step.changes = "%s: nothing (pip's dry run: already installed)" % step.changes
        return
    step.resolved = [canonical_name(name) for name, _ in installs]
    parts = []
    into = any(w in ("--target", "-t") for w in step.argv)  # another folder: the site's versions say nothing of it
    for name, version in installs:
        old = None if into else (before or {}).get(name)
        parts.append("%s %s -> %s" % (name, old, version) if old and old != version else
                     "%s %s (reinstalled)" % (name, version) if old else "%s %s (added)" % (name, version))
    step.changes = "%s: %s" % (step.changes, "; ".join(parts))
