"""`fix --undo`'s way back for packages: the package set put back at the journal's versions, each release the journal
kept put back from its own copy (stash.py) and any other reinstalled by name; and the reinstall of a wheel whose
files pip removed with another, in its own site (the user site's by its owner)."""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Mapping, Tuple

from . import shared, stash
from .environment import OWN_SITE, package_set, run, tail
from .plan import Environment


def reinstall(environment: Environment, journal: dict, site: str, owners: List[str],
               env: Mapping[str, str]) -> Tuple[str, int, str]:
    """Each ``name==version`` reinstalled in its own site (the user site's by its owner, --user), files only."""
    user = bool(site) and site == journal.get("user_site")  # its owner is the user site's: --user, that site seen
    argv = ([*_owner(environment, journal).user_pip("install"), "--user"] if user else
            [*environment.pip_words(), "install", *environment.with_python()]) + ["--no-deps", "--force-reinstall",
                                                                                  *owners]
    code, text = run(argv, dict(env, PYTHONPATH="") if user else dict(env, **OWN_SITE))
    return " ".join(argv), code, tail(text)


def restore_user_site(environment: Environment, folder: str, journal: dict,
                       env: Mapping[str, str]) -> List[Tuple[str, int, str]]:
    """The user site's packages back to the journal's set, by the interpreter that owns that site (pip in a venv
    leaves a package outside the venv: "Not uninstalling ... outside environment"), reinstalls with --user."""
    site = journal["user_site"]
    now = package_set(environment, env, site)
    if now is None:
        return [("%s -m pip list --path %s" % (environment.python, site), 1, "the package list could not be read")]
    owner = _owner(environment, journal)
    return _put_set_back(journal.get("user_before") or {}, now, owner.user_pip("uninstall"),
                         [*owner.user_pip("install"), "--user"],
                         dict(env, PYTHONPATH=""), folder, stash.kept(folder, journal.get("stash") or [], [site]))


def _owner(environment: Environment, journal: dict) -> Environment:
    """The environment with the user site's owner the fix ran pip with (the journal's)."""
    return dataclasses.replace(environment, base_python=journal.get("base_python") or environment.base_python,
                               base_managed=bool(journal.get("base_managed", environment.base_managed)))


def restore_packages(environment: Environment, folder: str, journal: dict,
                      env: Mapping[str, str]) -> List[Tuple[str, int, str]]:
    before = journal.get("packages_before")
    if before is None:
        return []
    now = package_set(environment, env)
    if now is None:
        return [("%s -m pip list" % environment.python, 1, "the package list could not be read")]
    tool, python = environment.pip_words(), environment.with_python()
    # The set put back is the environment's own site's (package_set reads it with --path): pip must see that site
    # alone, or it takes a --target copy on PYTHONPATH (or the user site's) for the one to uninstall (draw 515-14).
    return _put_set_back(before, now, [*tool, "uninstall", *python], [*tool, "install", *python],
                         dict(env, **OWN_SITE), folder, stash.kept(folder, journal.get("stash") or [],
                                                                   shared.sites(environment.prefix)))


def _put_set_back(before: Dict[str, str], now: Dict[str, str], uninstall: List[str], install: List[str],
                  env: Mapping[str, str], folder: str, kept: Dict[Tuple[str, str], dict]) -> List[Tuple[str, int, str]]:
    """Uninstall what was added since ``before`` and the release now in place of each changed package the journal
    kept, put those kept files back, and reinstall any other changed package at its recorded version by name."""
    ran = []
    changed = sorted((n, v) for n, v in before.items() if now.get(n) != v)
    back = {(n, v): kept[stash.key(n, v)] for n, v in changed if stash.key(n, v) in kept}
    # the same release reinstalled over a damaged one (CD406, CD402): its kept files are the ones the journal found
    # (a new user's trial: undo left the repaired library and the reinstall's RECORD)
    back.update({(n, v): kept[stash.key(n, v)] for n, v in sorted(before.items()) if now.get(n) == v
                 and stash.key(n, v) in kept and stash.rewritten(folder, kept[stash.key(n, v)])})
    removing = sorted(set(now) - set(before)) + [n for n, _ in back if n in now]
    by_name = ["%s==%s" % (n, v) for n, v in changed if (n, v) not in back]
    if removing:
        code, text = run([*uninstall, "-y", *removing], env)
        ran.append((" ".join([*uninstall, "-y", *removing]), code, tail(text)))
    for (name, version), record in back.items():
        try:
            ran.append(("put back %s==%s from the journal (%d files)" % (name, version, stash.put_back(folder, record)),
                        0, ""))
        except OSError as exc:
            ran.append(("put back %s==%s from the journal" % (name, version), 1, str(exc)))
    if by_name:
        code, text = run([*install, "--no-deps", "--force-reinstall", *by_name], env)
        ran.append((" ".join([*install, "--no-deps", "--force-reinstall", *by_name]), code, tail(text)))
    return ran
