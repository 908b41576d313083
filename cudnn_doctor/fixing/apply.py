"""Runs a fix plan in its environment, journaled first, and undoes it. The installer's transaction (install/journal.py,
install/transaction.py) keeps the files: the journal, with the package set's exact versions, is on disk (written to
a temporary file, fsync'd, renamed) with status "applying" before pip changes a package; the activate scripts are
staged and put in place by renames after the packages, so a kill leaves each file old or new, and `fix --undo`
reinstalls the recorded versions and puts the files back from the journal, even after a kill in the middle."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple, Union

from ..install import hooks
from ..install.journal import TXN, StateLock, discard, history_entries, read_journal, write_journal
from ..install.transaction import apply as apply_files, commit, dest_path, new_txn, undo as undo_files
from . import activate, folders, made, shared, stash, strays
from .environment import conda_export, package_set, run, tail
from .plan import Environment, Plan, project_name, user_steps, variable_names
from .restore import reinstall, restore_packages, restore_user_site

STATE = ".cudnn-doctor/fix-journal"  # under the environment's prefix


class FixStopped(Exception):
    """fix could not go on; the message says what the environment holds now."""


@dataclass
class Outcome:
    """What a run or an undo did: each step's command, status and output tail, and the files written."""

    ran: List[Tuple[str, int, str]] = field(default_factory=list)
    files: List[str] = field(default_factory=list)
    removed: List[str] = field(default_factory=list)  # an undo's files that fix had added, taken away (not in files)
    journal: str = ""
    notes: List[str] = field(default_factory=list)


def state_dir(environment: Environment) -> str:
    return os.path.join(environment.prefix, *STATE.split("/"))


def journaled_on_path(env: Mapping[str, str]) -> Optional[str]:
    """The prefix of the first environment on PATH (a folder of PATH whose parent holds a fix journal): where `fix`
    found the environment its errors were about when it is on PATH without being activated (no VIRTUAL_ENV), so
    `fix --undo` in the same shell finds the same one."""
    for folder in env.get("PATH", "").split(os.pathsep):
        prefix = os.path.dirname(os.path.abspath(folder)) if folder else ""
        if prefix and os.path.isdir(os.path.join(prefix, *STATE.split("/"))):
            return prefix
    return None


def interrupted(environment: Environment) -> Optional[dict]:
    """The journal of a fix that was killed part-way (its txn folder still there), or None."""
    folder = os.path.join(state_dir(environment), TXN)
    return read_journal(folder) if os.path.isdir(folder) else None


def _file_changes(plan: Plan) -> List[Tuple[str, Union[bytes, str]]]:
    """(path, new bytes) of every file the plan's variables go into, and (path, target name) of each link it
    makes."""
    links: List[Tuple[str, Union[bytes, str]]] = [(s.link, s.target) for s in plan.steps if s.kind == "links"]
    return links + _variable_files(plan)


def _variable_files(plan: Plan) -> List[Tuple[str, Union[bytes, str]]]:
    lines = plan.variable_lines
    env = plan.environment
    if not lines or env is None:
        return []
    if env.rc:
        try:
            with open(env.rc, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            text = ""
        except (OSError, UnicodeDecodeError) as exc:
            raise FixStopped("--rc %s cannot be read: %s" % (env.rc, exc))
        return [(env.rc, activate.rc_text(text, lines).encode())]
    if env.kind == "venv":
        path = os.path.join(env.prefix, "bin", "activate")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        new = activate.venv_activate(text, lines)
        if new is None:
            raise FixStopped("%s has no deactivate function: fix does not know where its variables go" % path)
        return [(path, new.encode())]
    base = os.path.join(env.prefix, "etc", "conda")
    on = os.path.join(base, "activate.d", activate.CONDA_SCRIPT)
    earlier = _conda_lines(on)
    up, down = activate.conda_scripts([line for line in earlier if line not in lines] + list(lines))
    return [(on, up.encode()), (os.path.join(base, "deactivate.d", activate.CONDA_SCRIPT), down.encode())]


def _conda_lines(path: str) -> List[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return [line for line in fh.read().splitlines()
                    if line and not line.startswith("#") and not line.startswith('if [ -n "${')]
    except OSError:
        return []


def _stage(folder: str, changes: List[Tuple[str, Union[bytes, str]]]) -> Tuple[List[dict], List[dict]]:
    """Writes each new file (bytes) or link (its target, a str) under the transaction's staging folder; the
    journal's dirs and ops for them."""
    dirs: List[dict] = []
    index: Dict[str, int] = {}
    ops = []
    for n, (path, data) in enumerate(changes):
        parent = os.path.dirname(path)
        chain = []
        p = parent
        while p not in index and not os.path.isdir(p):
            chain.append(p)
            p = os.path.dirname(p)
        if p not in index:
            index[p] = len(dirs)
            dirs.append({"path": p, "existed": True, "mode": stat.S_IMODE(os.stat(p).st_mode), "new_mode": None})
        for missing in reversed(chain):
            index[missing] = len(dirs)
            dirs.append({"path": missing, "existed": False, "mode": None, "new_mode": 0o755})
        staged = "files/%d" % n
        target = os.path.join(folder, "staging", "files", str(n))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if isinstance(data, str):
            os.symlink(data, target)  # moved into place as it is: a link to the name beside it
        else:
            with open(target, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            old_mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o644
            os.chmod(target, old_mode)
        ops.append({"dir": index[parent], "rel": os.path.basename(path), "staged": staged,
                    "action": "replace" if os.path.lexists(path) else "new",
                    "kind": "symlink" if isinstance(data, str) else "file", "role": "files"})
    return dirs, ops


def run_plan(plan: Plan, env: Mapping[str, str], as_root: bool, follows: str = "") -> Outcome:
    """Journal, then the package steps, then root's (only ``as_root``), then the files; committed as the newest
    entry of the environment's fix journal. A failing step undoes everything done so far and raises FixStopped.
    ``follows``: the entry of the same fix's first round (what that round brought, taken on): undo takes both."""
    environment = plan.environment
    assert environment is not None
    out = Outcome()
    sdir = state_dir(environment)
    with StateLock(sdir):
        if os.path.isdir(os.path.join(sdir, TXN)):
            raise FixStopped("an earlier fix of %s was interrupted: run `cudnn-doctor fix --undo` first"
                             % environment.prefix)
        folder, journal = new_txn(sdir, {"environment": environment.prefix, "kind": environment.kind,
                                         "tool": environment.tool, "follows": os.path.basename(follows)})
        try:
            busy = made.occupied(plan.made, env)
            if busy:
                raise FixStopped("%s; nothing was changed" % busy)
            before = package_set(environment, env)
            if before is None and any(s.kind == "packages" for s in plan.steps):
                raise FixStopped("the environment's package list could not be read (%s -m pip list): nothing "
                                 "was changed" % environment.python)
            dirs, ops = _stage(folder, _file_changes(plan))
            removing = {id(s): folders.matching(s.paths) for s in plan.steps if s.kind == "removals"}
            kept = folders.keep(folder, [t for step in plan.steps if step.kind == "packages"
                                         for t in folders.targets(step.argv)]
                                + [p for paths in removing.values() for p in paths])
            user_site = environment.user_site if user_steps(plan) else ""
            sites = shared.sites(environment.prefix) + ([user_site] if user_site else [])
            common = shared.keep(folder, sites)  # pip removes them with either owner
            # each release pip may take away, for an undo that needs no index; every NVIDIA wheel too, since they
            # write the same nvidia/ paths over each other (a new user's trial: cu12's install over cu13's files)
            user_before = package_set(environment, env, user_site) if user_site else None
            if user_site and user_before is None:
                raise FixStopped("the user site's package list could not be read (%s -m pip list --path %s): "
                                 "nothing was changed" % (environment.python, user_site))
            pip_steps = [s for s in plan.steps if s.kind == "packages"]  # without one, pip changes nothing to keep
            # the user site's NVIDIA wheels too: a --user install writes over their shared files (draw 20261205-42:
            # cuDNN 8's CUDA 11 wheel was reinstalled by name at undo, and pip wrote its RECORD anew)
            wheels = stash.keep(folder, sites, {project_name(r) for s in pip_steps for r in [*s.requirements,
                                                                                            *s.resolved]}
                                | {n for n in {**(before or {}), **(user_before or {})} if n.startswith("nvidia-")
                                   and pip_steps})
            present = strays.keep(folder, sites)  # a pip killed part-way leaves unlisted files
            journal.update(status="applying", packages_before=before, conda_export=conda_export(environment, env),
                           sites=sites, user_site=user_site, user_before=user_before,
                           base_python=environment.base_python, base_managed=environment.base_managed,
                           steps=[s.shown for s in plan.steps], dirs=dirs, ops=ops, targets=kept, shared=common,
                           stash=wheels, made=[made.folder(m, env) for m in plan.made],
                           made_parents=made.parents_to_make(plan.made, env))
            write_journal(folder, journal)  # before anything changes: what --undo needs
            hooks.point("fix-after-journal")
            for step in plan.steps:
                if step.kind in ("variables", "links") or (step.kind == "system" and not as_root):
                    continue
                if step.kind == "removals":
                    folders.remove(removing[id(step)])
                    out.ran.append((step.shown, 0, "removed " + (", ".join(removing[id(step)]) or "nothing")))
                    hooks.point("fix-after-step-%d" % len(out.ran))
                    continue
                if step.kind == "environments":
                    made.make(made.folder(step.paths[0], env), os.path.basename(folder))
                    code, text = made.run_line(step.argv, env)
                else:
                    code, text = run(step.argv, dict(env, **step.pip_env))
                out.ran.append((step.shown, code, tail(text)))
                hooks.point("fix-after-step-%d" % len(out.ran))
                if code != 0:
                    raise FixStopped("`%s` failed (exit %d)%s" % (step.shown, code, _reason(text)))
            shared.put_back(folder, common, sites)
            # a wheel still installed whose files pip removed with another that listed them: its own again
            for site, owners in shared.owners_of_gone(sites, present).items():
                out.ran.append(reinstall(environment, journal, site, owners, env))
                command, code, text = out.ran[-1]
                if code != 0:
                    raise FixStopped("`%s` failed (exit %d)%s" % (command, code, _reason(text)))
            if _gone_since_staged(journal):
                write_journal(folder, journal)  # what undo does for each file must say what apply found
            apply_files(folder, journal)
            out.files = [os.path.join(journal["dirs"][op["dir"]]["path"], op["rel"]) for op in ops]
            journal["packages_after"] = package_set(environment, env)
            out.journal = commit(sdir, folder, journal)
            stash.prune(sdir)
        except BaseException as exc:
            if journal.get("status") != "applying":
                discard(sdir, folder)  # nothing outside the journal was touched
                raise
            if not isinstance(exc, (FixStopped, OSError)):
                raise  # Ctrl-C: the journal stays, and `fix --undo` finishes the way back
            try:
                _undo_entry(environment, folder, journal, env, interrupted=True)
            except FixStopped as again:
                raise FixStopped("%s; undoing it failed too: %s" % (exc, again)) from None
            discard(sdir, folder)
            raise FixStopped("%s; everything fix had changed was undone" % exc) from None
    return out


def _gone_since_staged(journal: dict) -> bool:
    """A file a link replaces that a package step removed (an uninstalled wheel's libcudnn.so.8, whose name the
    other major's link then takes: draw 20261129-9) is new when the link is placed, not replaced: nothing to keep a
    copy of, and undo removes the link before pip puts the wheel's own file back. Whether any op changed."""
    changed = False
    for op in journal["ops"]:
        if op["action"] == "replace" and not os.path.lexists(dest_path(journal, op)):
            op["action"], changed = "new", True
    return changed


def _reason(text: str) -> str:
    """The tool's own words on why it failed, so that a stopped fix says it ("No space left on device", "No matching
    distribution found"): pip's last ERROR line, or the last line of a traceback it printed after "ERROR: Exception:"."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:") and line != "ERROR: Exception:"]
    said = (errors or lines)[-1:]
    return ": %s" % said[0][:400] if said else ""


def undo_newest(environment: Environment, env: Mapping[str, str]) -> Outcome:
    """Puts the environment back as the newest fix (or an interrupted one) found it: files byte for byte, every
    package at its recorded version (reinstalled with --no-deps --force-reinstall), what fix added removed."""
    out = Outcome()
    sdir = state_dir(environment)
    if not os.path.isdir(sdir):
        raise FixStopped("cudnn-doctor has no record of a fix in %s" % environment.prefix)
    with StateLock(sdir):
        txn = os.path.join(sdir, TXN)
        entries = history_entries(sdir)
        folder: Optional[str] = txn if os.path.isdir(txn) else (entries[-1] if entries else None)
        journal = read_journal(folder) if folder else None
        if folder is None or journal is None:
            if folder:
                discard(sdir, folder)  # killed before its journal said anything was changing
            raise FixStopped("cudnn-doctor has no record of a fix in %s" % environment.prefix)
        if journal.get("status") == "staging":
            discard(sdir, folder)
            out.notes.append("an interrupted fix had changed nothing; its record was removed")
            return out
        while True:
            journal["status"] = "rolling-back"
            write_journal(folder, journal)
            ran, files, removed = _undo_entry(environment, folder, journal, env, interrupted=folder == txn)
            out.ran, out.files, out.removed = out.ran + ran, out.files + files, out.removed + removed
            discard(sdir, folder)
            out.journal = folder
            # A follow-up round's entry: the round before it is the same fix, undone with it (after a kill between
            # the two, the next --undo finds that one newest and finishes).
            entries = history_entries(sdir)
            if not journal.get("follows") or not entries or os.path.basename(entries[-1]) != journal["follows"]:
                break
            folder = entries[-1]
            journal = read_journal(folder)
            if journal is None:
                break
    try:
        os.rmdir(os.path.dirname(sdir))  # .cudnn-doctor, when the journal was all it held: as fix found it
    except OSError:
        pass
    return out


def undo_preview(environment: Environment) -> List[str]:
    """What `fix --undo` would take back, read from the newest journal (nothing changes): the steps that fix ran and
    the package versions and files it changed; empty where there is no record."""
    sdir = state_dir(environment)
    txn = os.path.join(sdir, TXN)
    entries = history_entries(sdir) if os.path.isdir(sdir) else []
    folder = txn if os.path.isdir(txn) else (entries[-1] if entries else None)
    journal = read_journal(folder) if folder else None
    if not journal or journal.get("status") == "staging":
        return []
    before, after = journal.get("packages_before") or {}, journal.get("packages_after") or {}
    changed = ["%s %s -> %s" % (name, after.get(name, "(none)"), before.get(name, "(none)"))
               for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]
    files = [os.path.join(journal["dirs"][op["dir"]]["path"], op["rel"]) for op in journal.get("ops") or []]
    return (["The newest fix (%s) ran:" % os.path.basename(folder or "")]
            + ["  %s" % step for step in journal.get("steps") or []]
            + (["Undo puts these packages back:"] + ["  %s" % c for c in changed] if changed else [])
            + (["and these files:"] + ["  %s" % f for f in files] if files else [])
            + (["and removes the environments it made:"] + ["  %s" % f for f in journal["made"]]
               if journal.get("made") else []))


def _undo_entry(environment: Environment, folder: str, journal: dict, env: Mapping[str, str],
                interrupted: bool = False) -> Tuple[List[Tuple[str, int, str]], List[str], List[str]]:
    """Files back (the transaction's undo), then the package set back to the journal's; raises FixStopped when a
    package cannot be put back (the record stays, so the next --undo tries again). ``interrupted``: the fix never
    finished (killed, or a step failed), so what its pip left unlisted in the sites is removed too."""
    done = undo_files(folder, journal)
    gone, problems = made.remove(journal.get("made") or [], journal.get("made_parents") or [])
    done["removed"] += gone  # the new environments, whole
    if problems:
        raise FixStopped("; ".join(problems) + "; the journal stays: run `cudnn-doctor fix --undo` again once that "
                         "is settled")
    done["removed"] += folders.restore(folder, journal.get("targets") or [])
    # What fix's packages share with the ones before it (fix added a second owner): kept in the journal before pip
    # takes the added one away with the file.
    sites = journal.get("sites") or shared.sites(environment.prefix)
    journal["shared_undo"] = shared.keep(folder, sites, "shared-undo", journal.get("shared_undo") or [])
    write_journal(folder, journal)
    ran = restore_packages(environment, folder, journal, env)
    if journal.get("user_site"):
        ran += restore_user_site(environment, folder, journal, env)
    done["restored"] += shared.put_back(folder, (journal.get("shared") or []) + journal["shared_undo"], sites)
    for site, owners in shared.owners_missing(journal["shared_undo"], sites).items():
        ran.append(reinstall(environment, journal, site, owners, env))
    failed = [r for r in ran if r[1] != 0]
    if failed:
        raise FixStopped("`%s` failed (exit %d)%s; run `cudnn-doctor fix --undo` again once that works"
                         % (failed[0][0], failed[0][1], _reason(failed[0][2])))
    done["removed"] += strays.sweep(folder, None if interrupted else set(shared.listed(sites)))
    return ran, done["restored"], done["removed"]


def variables_after(lines: List[str], env: Mapping[str, str]) -> Dict[str, Optional[str]]:
    """What each variable the lines change holds in a new shell of the environment (the shell evaluates them with
    the inspected environment's values; None: unset)."""
    names = variable_names(lines)
    script = "\n".join(lines + ['printf "%%s\\0%%s\\0" "${%s+set}" "${%s-}"' % (n, n) for n in names])
    code, text = run(["sh", "-c", script], env, 10)
    parts = text.split("\0")
    if code != 0 or len(parts) < 2 * len(names):
        raise FixStopped("the variable lines did not run in sh: %s" % text.strip()[:200])
    return {n: (parts[2 * i + 1] if parts[2 * i] == "set" else None) for i, n in enumerate(names)}
