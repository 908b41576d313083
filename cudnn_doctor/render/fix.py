"""`fix` for a terminal: the plan (each exact command and what it changes, what is left for the user and why), what
ran, the files written, and check's errors before and after. Lines only: the command prints them and decides the
exit code. It is handed fixing.plan.Plan values (a higher layer: read by their fields)."""
from __future__ import annotations

from typing import Any, Collection, Dict, List, Mapping, Optional, Sequence, Tuple


def plan_lines(plan: Any, titles: Dict[str, str]) -> List[str]:
    env = plan.environment
    lines: List[str] = []
    if env is not None:
        lines.append("Environment: %s (%s; packages with %s)" % (env.prefix, env.kind, env.tool))
    if plan.steps:
        lines.append("Plan (%d step%s, for %s):" % (len(plan.steps), "" if len(plan.steps) == 1 else "s",
                                                 ", ".join(dict.fromkeys(plan.taken))))
        for n, step in enumerate(plan.steps, 1):
            shown = step.shown.replace("\n", "\n     ")
            lines.append("  %d. %s" % (n, shown))
            lines.append("     %s   [%s]" % (step.changes, ", ".join(step.ids)))
    else:
        lines.append("Nothing fix can run here%s." % (" for %s" % ", ".join(titles) if titles else ""))
    if plan.left:
        lines.append("Left for you:")
        said = set()
        for fid, command, why, title in plan.left:
            if (fid, title) not in said:  # each finding once, by its own title (twins share an id)
                said.add((fid, title))
                lines.append("  %s  %s  (%s)" % (fid, title or titles.get(fid, ""), why))
            if command:
                lines.append("         %s" % command)
    return lines


def ran_lines(ran: Sequence[Tuple[str, int, str]], files: Sequence[str], journal: str,
              verb: str = "wrote") -> List[str]:
    lines = []
    for shown, code, tail in ran:
        lines.append("  %s %s" % ("ok" if code == 0 else "FAILED (exit %d):" % code, shown))
        if code != 0 and tail:
            lines += ["      " + t for t in tail.splitlines()]
    lines += ["  %s %s" % (verb, f) for f in files]
    if journal:
        lines.append("  journal: %s" % journal)
    return lines


def before_after_lines(before: Sequence[Tuple[str, str]], after: Collection[Tuple[str, str]],
                       taken: Sequence[str], moved: Collection[Tuple[str, str]] = (),
                       titles: Sequence[str] = ()) -> List[str]:
    """One line per error check reported before (id, title): gone, still there (taken on, or left for you), or left
    behind in the environment the frameworks moved out of. ``titles`` are the words check said before, one per
    entry: a release installed twice is matched without its environment but shown with it."""
    lines = ["Before -> after:"]
    for n, (fid, title) in enumerate(before):
        state = "still there" if (fid, title) in after else "gone"
        why = "" if state == "gone" else ("  (fix took it on)" if fid in taken else "  (left for you)")
        if state != "gone" and (fid, title) in moved:
            state, why = "moved out", "  (the frameworks run from the new environments below)"
        lines.append("  %s  %s -> %s%s" % (fid, titles[n] if n < len(titles) else title, state, why))
    return lines


def made_lines(made: Mapping[str, Sequence[Tuple[str, str]]], left: str) -> List[str]:
    """The new environments fix made, each as check judged it in a new shell that activates it."""
    if not made:
        return []
    lines = ["New environments (check, in a new shell that activates each):"]
    for path, errors in made.items():
        lines.append("  %s: %s" % (path, "; ".join("%s %s" % e for e in errors) if errors else "no error"))
    lines.append("Run each framework from its own: `. <folder>/bin/activate`. %s keeps its packages as they were; "
                 "`cudnn-doctor fix --undo` (in it) removes the new environments." % left)
    return lines


def variables_hint(lines: Sequence[str], environment: Optional[Any], active: bool = True) -> List[str]:
    if not lines or environment is None:
        return []
    if getattr(environment, "rc", ""):
        return ["New shells that read %s get the variables; in this shell: eval \"$(cudnn-doctor fix --shell)\"" % (
            environment.rc)]
    if not active:  # used from PATH: nothing sources its activate script
        how = ("conda activate %s" % environment.prefix if environment.kind == "conda"
               else ". %s/bin/activate" % environment.prefix.rstrip("/"))
        return ["%s is not activated in this shell, and the variables are in its activate script: new shells get "
                "them after `%s` (or run fix with --rc ~/.bashrc); in this shell: eval \"$(cudnn-doctor fix --shell)\""
                % (environment.prefix, how)]
    # a venv's bin/activate is bash's and zsh's; activate.fish and activate.csh are not written
    where = "New shells of %s" % environment.prefix if environment.kind == "conda" else \
        "New bash and zsh shells of %s (bin/activate; not activate.fish or .csh)" % environment.prefix
    return ["%s get the variables; in this shell: eval \"$(cudnn-doctor fix --shell)\"" % where]


def empty_payload() -> Dict[str, Any]:
    """Every field of fix's --json (schema/fix-v1.json), before the run fills them in."""
    return {"environment": None, "plan": [], "left": [], "taken": [], "not_taken": [], "before": [], "problem": None,
            "dry_run": False, "ran": [], "files": [], "journal": "", "remaining": [], "undone": False, "made": [],
            "warnings_new": []}


def environment_payload(environment: Any) -> Optional[Dict[str, str]]:
    if environment is None:
        return None
    return {"prefix": environment.prefix, "kind": environment.kind, "tool": environment.tool}


def plan_payload(plan: Any) -> Dict[str, Any]:
    return {"environment": environment_payload(plan.environment),
            "plan": [{"kind": s.kind, "command": s.shown, "changes": s.changes, "ids": list(s.ids)}
                     for s in plan.steps],
            "left": [{"id": fid, "command": command, "why": why, "title": title}  # twins share an id, not a title
                     for fid, command, why, title in plan.left],
            "taken": list(plan.taken), "not_taken": list(plan.not_taken)}


def ran_payload(ran: Sequence[Tuple[str, int, str]]) -> List[Dict[str, Any]]:
    return [{"command": shown, "exit_code": code, "output": tail} for shown, code, tail in ran]
