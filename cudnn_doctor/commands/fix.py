"""The `fix` subcommand: check's errors (all, or the ids given) healed in the environment they are about, as one
merged plan (cudnn_doctor/fixing/plan.py), asked for unless --yes, journaled and run (fixing/apply.py), then judged
again by check: exit 0 only when the errors fix took on are gone. --undo puts the newest fix back."""
from __future__ import annotations

import os
import sys
from typing import Dict, List, Mapping, Optional, Tuple

import typer

from ..ui import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, error_exit

EXAMPLES = ("  cudnn-doctor fix --dry-run\n\n  cudnn-doctor fix --yes\n\n  cudnn-doctor fix CD704 --yes\n\n"
            "  eval \"$(cudnn-doctor fix --shell)\"\n\n  cudnn-doctor fix --undo --yes")


def register(app: typer.Typer) -> None:
    @app.command(
        "fix",
        help=(
            "Heal what check finds: the fixes of its errors (or of the ids given) merged into one plan for the "
            "active Python environment (package changes with its own pip, uv or conda, then environment variables "
            "written into its activate scripts), shown, asked for unless --yes, journaled under "
            "<env>/.cudnn-doctor/fix-journal, run, and judged again by check. Steps that need root run only as "
            "root with --yes; the rest are printed as left for you.\n\n"
            "Exit codes: 0 the errors fix took on are gone (or --dry-run, --shell, --undo done), 1 some remain or a "
            "step failed (what ran was undone), 2 bad input, or no terminal to ask on and no --yes.\n\n"
            "Examples:\n\n" + EXAMPLES
        ),
    )
    def fix(
        ids: List[str] = typer.Argument(None, metavar="[ID]...", help="Only these findings (id or alias)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan; change nothing."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Run the plan without asking."),
        undo: bool = typer.Option(False, "--undo", help="Put the environment back as the newest fix found it."),
        shell: bool = typer.Option(False, "--shell",
                                   help="Print the plan's variable lines as one line to eval in this shell."),
        rc: str = typer.Option("", "--rc", metavar="FILE",
                               help="Write the variable lines into this shell startup file (a marked block at its "
                                    "end, e.g. ~/.bashrc) instead of the environment's activate scripts: for an "
                                    "environment used without activating it, or a variable your shell sets."),
        root: str = typer.Option("/", "--root", metavar="DIR", help="Judge the tree under DIR; only prints."),
        env: List[str] = typer.Option([], "--env", metavar="NAME=VALUE",
                                      help="An environment variable of the inspected machine (repeatable), as "
                                           "check's --env: VIRTUAL_ENV names the environment to change."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (schema_version 1) at the end "
                                                           "and nothing else; never asks (pass --yes to run)."),
    ) -> None:
        from ..bounded_io import not_a_folder
        from .check_run import parse_env

        problem = not_a_folder(root)
        if problem:
            error_exit("--root %s %s" % (root, problem))
        rc = os.path.abspath(os.path.expanduser(rc)) if rc else ""
        if rc and (os.path.isdir(rc) or not os.path.isdir(os.path.dirname(rc))):
            error_exit("--rc %s: not a file in an existing folder" % rc)
        given = parse_env(env) or {}
        for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            if given.get(name) and not os.path.isdir(given[name]):
                error_exit("--env %s=%s: no such folder" % (name, given[name]))
        inspected: Dict[str, str] = dict(os.environ, **given)
        out = _Out(as_json)
        if undo:
            raise typer.Exit(_undo(inspected, yes, out, dry_run))
        raise typer.Exit(_fix(list(ids or []), dry_run or root != "/", yes, shell, root, given or None, inspected,
                              out, rc))


class _Out:
    """What fix says: lines for a terminal as it goes, or (--json) one envelope at the end with every field."""

    def __init__(self, as_json: bool) -> None:
        from ..render.fix import empty_payload

        self.as_json, self.data = as_json, empty_payload()

    def say(self, lines: List[str]) -> None:
        if not self.as_json and lines:
            sys.stdout.write("\n".join(lines) + "\n")

    def done(self, code: int) -> int:
        if self.as_json:
            from ..render.envelope import dumps, envelope

            sys.stdout.write(dumps(envelope("fix", code, **self.data)) + "\n")
        return code


def _undo(env: Mapping[str, str], yes: bool, out: _Out, dry_run: bool = False) -> int:
    from ..fixing.apply import FixStopped, journaled_on_path, undo_newest, undo_preview
    from ..fixing.environment import find_environment
    from ..render.fix import environment_payload, ran_lines, ran_payload

    environment = find_environment(env, [])
    on_path = journaled_on_path(env) if environment is None else None
    if on_path:  # fix found it from its errors' site (on PATH, not activated): the same one, by its journal
        environment = find_environment(dict(env, VIRTUAL_ENV=on_path), [])
    if environment is None:
        error_exit("which environment? activate it (or pass --env VIRTUAL_ENV=PATH) and run fix --undo again")
    out.data["environment"] = environment_payload(environment)
    if not yes or dry_run:  # what it will take back, before it asks
        out.say(undo_preview(environment))
    if dry_run:
        out.data["dry_run"] = True
        out.say(["(dry run: nothing was changed)"])
        return out.done(EXIT_OK)
    if not yes and not _ask("Put %s back as the newest fix found it?" % environment.prefix, out):
        return out.done(EXIT_USAGE)
    try:
        done = undo_newest(environment, env)
    except FixStopped as exc:
        out.data["problem"] = str(exc)
        out.say(["fix --undo: %s" % exc])
        return out.done(EXIT_PROBLEMS)
    out.data.update(undone=True, ran=ran_payload(done.ran), files=done.files + done.removed, journal=done.journal)
    out.say(["Undone in %s:" % environment.prefix] + ran_lines(done.ran, done.files, "", "put back")
            + ["  removed %s" % f for f in done.removed] + done.notes)
    return out.done(EXIT_OK)


def _ask(question: str, out: _Out) -> bool:
    if not sys.stdin.isatty() or out.as_json:
        out.data["problem"] = "no terminal to ask on: pass --yes"
        out.say(["No terminal to ask on: pass --yes to run it."])
        return False
    return typer.confirm(question, default=False)


def _fix(ids: List[str], dry_run: bool, yes: bool, shell: bool, root: str, given: Optional[Mapping[str, str]],
         env: Dict[str, str], out: _Out, rc: str = "") -> int:
    import dataclasses

    from .. import diagnose
    from ..fixing import gather
    from ..fixing.activate import shell_line
    from ..fixing.apply import interrupted
    from ..fixing.environment import find_environment
    from ..fixing.plan import build_plan
    from ..render.fix import plan_lines, plan_payload

    active = find_environment(env, []) if root == "/" else None
    if active is not None and interrupted(active) is not None:
        out.data["problem"] = "an earlier fix of %s was interrupted: run `cudnn-doctor fix --undo` first" % (
            active.prefix)
        out.say(["An earlier fix of %s was interrupted: run `cudnn-doctor fix --undo` first (it puts the "
                 "environment back as that fix found it)." % active.prefix])
        return out.done(EXIT_PROBLEMS)
    before = diagnose.diagnose(root, given)
    unknown = gather.unknown_ids(before.findings, ids)
    if unknown:
        from ..rules import known_id

        unnamed = [i for i in unknown if not known_id(i)]
        error_exit("no check is called %s (`cudnn-doctor check --list-checks` lists them)" % ", ".join(unnamed)
                   if unnamed else "check reports no %s here" % ", ".join(unknown))
    picked = gather.chosen(before.findings, ids)
    errs = gather.errings(picked, before.facts)
    environment = find_environment(env, [e.site for e in errs if e.site]) if root == "/" else None
    if environment is not None and rc:
        environment = dataclasses.replace(environment, rc=rc)
    # The machine's own steps run only as root and only with --yes (never behind a prompt); else they are left.
    as_root = diagnose.fix_target(before.facts).as_root and (yes or dry_run)
    plan = build_plan(errs, environment, as_root)
    if shell:
        if not plan.variable_lines:  # said on stderr: what eval reads stays empty
            sys.stderr.write("fix --shell: the plan sets no variable; `cudnn-doctor fix` runs its other steps\n")
        sys.stdout.write(shell_line(plan.variable_lines) + "\n" if plan.variable_lines else "")
        return EXIT_OK
    titles = {f.id: f.title for f in picked}
    problem = _dry_runs(plan, env) if root == "/" and picked else None
    out.data.update(plan_payload(plan), before=[{"id": f.id, "title": f.title} for f in picked], problem=problem,
                    dry_run=dry_run)
    out.say(plan_lines(plan, titles))
    if not picked:
        out.say(["check reports no error to fix."])
        return out.done(EXIT_OK)
    if problem:
        out.say(["%s: nothing was changed." % problem])
        return out.done(EXIT_PROBLEMS)
    if dry_run:
        out.say(["(dry run: nothing was changed)" if root == "/" else
                 "(--root: fix only prints; run these on that machine)"])
        return out.done(EXIT_OK)
    if plan.empty:  # nothing fix can run: the errors stay, each left for the user (a new user's trial: [] said)
        out.data["remaining"] = sorted({f.id for f in picked})
        return out.done(EXIT_PROBLEMS)
    if not yes and not _ask("Run this step?" if len(plan.steps) == 1 else "Run these %d steps?" % len(plan.steps), out):
        return out.done(EXIT_USAGE)
    return out.done(_run(plan, before, given, env, as_root, root, [i.upper() for i in ids], out))


def _dry_runs(plan, env: Mapping[str, str]) -> Optional[str]:
    """pip's dry run of each install: what it changes, version by version, or, said plainly before anything
    changes, why pip cannot (its index out of reach, no such release) or why a new environment cannot be made."""
    from ..fixing.environment import package_set, pip_dry_run
    from ..fixing.made import occupied
    from ..fixing.plan import with_versions

    busy = occupied(plan.made, env)
    if busy:
        return busy
    for step in [s for s in plan.steps if s.kind == "environments"]:
        # what the new environment's pip will be asked, resolved by this one's as if nothing were installed: its
        # index out of reach or a release that does not exist is said before anything changes
        problem, _ = pip_dry_run(plan.environment, step.requirements, [*step.options, "--ignore-installed"], env)
        if problem:
            return "%s (for %s)" % (problem, step.paths[0])
    installs = [s for s in plan.steps if s.kind == "packages" and "install" in s.argv[2:4]]
    if not installs or plan.environment.tool != "pip":
        return None
    before = package_set(plan.environment, env)
    for step in installs:
        options = [w for w in step.argv[step.argv.index("install") + 1:] if w not in step.requirements]
        problem, found = pip_dry_run(plan.environment, step.requirements, options, dict(env, **step.pip_env),
                                     step.argv[0])
        if problem:
            return problem
        with_versions(step, found, before)
    return None


def _run(plan, before, given: Optional[Mapping[str, str]], env: Dict[str, str], as_root: bool, root: str,
         asked: List[str], out: _Out) -> int:
    from ..fixing import gather
    from ..fixing.apply import FixStopped, run_plan
    from ..fixing.plan import build_plan
    from ..model import Severity
    from ..render.fix import before_after_lines, made_lines, plan_lines, ran_lines, ran_payload, variables_hint

    active = plan.environment.active or bool(plan.environment.rc)  # every new shell reads the rc file
    new_shell = _NewShell(env, given, active)
    lines: List[str] = []
    rounds, ran, files = [plan], [], []
    try:
        done = run_plan(plan, env, as_root)
        ran, files = done.ran, done.files
        lines += ["Ran:"] + ran_lines(done.ran, done.files, done.journal)
        after = new_shell.judge(plan, root)
        # A step can bring an error of its own (a newer cuDNN in the site whose sub-libraries an LD_LIBRARY_PATH copy
        # now shadows: realworld draw 515-5). One more round takes on what fix can of those, journaled as following
        # this one, so that one --undo takes both back.
        errors_before = {f.id for f in before.findings if f.severity == Severity.ERROR}
        brought = [f for f in gather.chosen(after.findings, []) if f.id not in errors_before]
        more = build_plan(gather.errings(brought, after.facts), plan.environment, as_root) if brought else None
        if more is not None and more.taken and not more.empty:
            lines += ["The fix brought %s; fix takes it on too:" % ", ".join(more.taken)]
            lines += plan_lines(more, {f.id: f.title for f in brought})
            done = run_plan(more, env, as_root, follows=done.journal)
            ran, files = ran + done.ran, files + done.files
            lines += ["Ran:"] + ran_lines(done.ran, done.files, done.journal)
            rounds.append(more)
            after = new_shell.judge(more, root)
    except FixStopped as exc:
        out.data["problem"] = str(exc)
        out.say(lines + ["fix stopped: %s" % exc])
        return EXIT_PROBLEMS
    out.data.update(ran=ran_payload(ran), files=files, journal=done.journal)
    taken = [i for r in rounds for i in r.taken]
    made = _judge_made(plan, env, before) if plan.made else {}
    out.data["made"] = [{"prefix": path, "errors": sorted({i for i, _ in errors})} for path, errors in made.items()]
    # The errors of the environment the frameworks left stay there (fix did not change it): moved, once every new
    # environment the plan made is free of errors
    # (id, title): a finding of the same id about a framework that was not moved stays (a reviewer's case)
    lines_made = {s.shown for s in plan.steps if s.kind == "environments"}
    moved = {_key(f) for f in before.findings if f.remedy and lines_made & set(f.remedy.commands)} \
        if made and not any(made.values()) else set()
    # A finding is its id and its words: one id reports each framework and wheel apart (CD702 for every pin), so a
    # status by id alone called one gone while another stayed (a new user's trial)
    errors_after = {_key(f) for f in after.findings if f.severity == Severity.ERROR or f.id in asked}
    shown_findings = [f for f in before.findings if f.id in plan.taken or f.id in plan.not_taken]
    shown_findings += [f for r in rounds[1:] for f in brought if f.id in r.taken]
    shown = [_key(f) for f in shown_findings]
    seen = {_key(f) for f in before.findings} | set(shown)
    new = [_key(f) for f in after.findings if f.severity == Severity.ERROR and _key(f) not in seen]
    stays = [pair for pair in shown if pair in errors_after and pair not in moved]
    out.data["remaining"] = sorted({i for i, _ in stays + new} | {i for e in made.values() for i, _ in e})
    lines += before_after_lines(shown, errors_after, taken, moved, titles=[f.title for f in shown_findings])
    lines += made_lines(made, plan.environment.prefix)
    if new:
        lines.append("New after the fix: %s (`cudnn-doctor check` says why; `cudnn-doctor fix --undo` puts the "
                     "environment back)" % "; ".join("%s %s" % pair for pair in new))
    # a warning the fix brought is said too, though it does not fail the run (a new user's trial: cuDNN 8 for a second
    # framework brought CD602, its NVRTC link, unsaid)
    # by id: a warning the environment had, reworded by the fix (CD505's "via LD_LIBRARY_PATH" becoming "via
    # ld.so.cache" on the H200), is not a new one
    warned = {f.id for f in before.findings}
    warnings_new = [_key(f) for f in after.findings if f.severity == Severity.WARNING and f.id not in warned]
    out.data["warnings_new"] = sorted({i for i, _ in warnings_new})
    if warnings_new:
        lines.append("New warnings after the fix: %s (`cudnn-doctor check` says why and how)" % "; ".join(
            "%s %s" % pair for pair in warnings_new))
    lines += variables_hint([v for r in rounds for v in r.variable_lines], plan.environment, active)
    out.say(lines)
    # what it took on must be gone, and no error of a kind the environment did not have may come (a new user's trial:
    # an uninstall that took another wheel's files with it left torch without cuDNN, CD704, and fix had said 0); an
    # error of a kind it had, reworded (a count of files in its title), is not a new one
    brought_new = {i for i, _ in new} - {f.id for f in before.findings if f.severity == Severity.ERROR}
    return EXIT_PROBLEMS if brought_new or any(made.values()) or any(i in taken for i, _ in stays + new) \
        else EXIT_OK


def _judge_made(plan, env: Mapping[str, str], before) -> Dict[str, List[Tuple[str, str]]]:
    """Each new environment the plan made, judged by check as a new shell that activates it sees it: its errors
    (id, title) about its own site; where check cannot tell the site (a framework of the same name elsewhere), any
    about a framework it holds; and the machine's that were not there before (a missing driver that was, is the
    machine's, left as it was). An error about another site is that environment's: the one the frameworks left, or
    a user site the new venv does not see."""
    from .. import diagnose
    from ..fixing import gather, made
    from ..model import Severity

    had = {_key(f) for f in before.findings if f.severity == Severity.ERROR}
    judged: Dict[str, List[Tuple[str, str]]] = {}
    for named in plan.made:
        path = made.folder(named, env)
        report = diagnose.diagnose("/", made.new_shell(path, env, plan.environment.prefix))
        chosen = gather.chosen(report.findings, [])
        held = {n for fw in report.facts.python.frameworks if (fw.location or "").startswith(path + os.sep)
                for n in (fw.name, "%s %s" % (fw.name, fw.version))}
        judged[path] = []
        for finding, erring in zip(chosen, gather.errings(chosen, report.facts)):
            about = (finding.evidence or {}).get("framework") if isinstance(finding.evidence, dict) else None
            if (erring.site or "").startswith(path + os.sep) or erring.site is None and (
                    about in held if about else _key(erring) not in had):
                judged[path].append(_key(erring))
    return judged


class _NewShell:
    """The environment as a new shell of it sees it after each round: the variables its activate script now sets,
    where that script runs; an environment used from PATH without activating it never runs it, so it is judged
    without them."""

    def __init__(self, env: Mapping[str, str], given: Optional[Mapping[str, str]], active: bool) -> None:
        self.shell = dict(env)  # what the lines are evaluated with
        self.inspected = dict(given if given is not None else os.environ)  # what check is handed
        self.active = active

    def judge(self, plan, root: str):
        from .. import diagnose
        from ..fixing.apply import variables_after

        for name, value in (variables_after(plan.variable_lines, self.shell) if self.active else {}).items():
            for view in (self.shell, self.inspected):
                if value is None:
                    view.pop(name, None)
                else:
                    view[name] = value
        return diagnose.diagnose(root, self.inspected)


def _key(f) -> Tuple[str, str]:
    """A finding as fix matches it before and after: its id and its words, less the environment a title names only
    while the same release is installed in another one too (a fix that changes that other copy rewords it)."""
    from ..queries import without_environment  # why: every command's module is imported at start-up, fix's too

    return f.id, without_environment(f.title)
