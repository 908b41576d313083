"""CD410: remains of a cuDNN that is gone or half-installed, named with the version they say, and how to restore it."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from ..versions import major_of
from ..model import Facts, Finding, Fix
from . import RuleContext, rule
from ..queries import primary_toolkit, toolkit_owning
from ..remedies.leftovers import install_command, leftovers_fix, soname_links_fix
from .common import ERROR, WARNING, compat_of, finding


def _version(items: List[Dict[str, Any]]) -> Optional[str]:
    """The most precise version the remaining files say (a header's 9.1.0 beats a link target's 9)."""
    versions = sorted((i["version"] for i in items if i.get("version")), key=lambda v: -v.count("."))
    return versions[0] if versions else None


def _fix(facts: Facts, version: Optional[str], restore: Optional[str], items: List[Dict[str, Any]]) -> Fix:
    tk = primary_toolkit(facts)
    inside = tk is not None and all(toolkit_owning(facts, os.path.dirname(i["path"])) for i in items)
    return leftovers_fix([i["path"] for i in items], version, restore, bool(facts.cudnn), inside)


@rule("CD410", "cudnn-leftovers", "Leftovers of a cuDNN that is gone or half-installed", section="cudnn")
def leftovers(facts: Facts, ctx: RuleContext) -> List[Finding]:
    compat = compat_of(ctx)
    out: List[Finding] = []
    gone = [i for i in facts.cudnn_leftovers if i["kind"] in ("dangling-link", "header-without-library")]
    by_major: Dict[Optional[int], List[Dict[str, Any]]] = {}
    for item in gone:
        by_major.setdefault(major_of(item.get("version")) if item.get("version") else None, []).append(item)
    for major, items in sorted(by_major.items(), key=lambda kv: -(kv[0] or 0)):
        version = _version(items)
        libdir = next((i["directory"] for i in items if i.get("directory")), None)
        restore = install_command(facts, compat, version, libdir) if version else None
        described = "; ".join(
            "%s -> %s (points nowhere)" % (i["path"], i["target"]) if i["kind"] == "dangling-link" else
            "%s (says %s, no library of that major anywhere)" % (i["path"], i["version"]) for i in items)
        out.append(finding(
            ERROR if any(fw.cuda_build for fw in facts.python.frameworks) or not facts.cudnn else WARNING,
            "Leftovers of cuDNN %s remain but its library files are gone: %s" % (version or "?", described),
            detail="The library was deleted (or never finished installing) and ldconfig then dropped its soname link; "
                   "what remains makes builds find cuDNN %s headers or link names while every program fails with "
                   "'libcudnn.so.%s: cannot open shared object file'." % (version or "?", major or "N"),
            remedy=_fix(facts, version, restore, items),
            evidence={"leftovers": items, "version": version}, catalogue=["D1", "D4"]))
    missing = [i for i in facts.cudnn_leftovers if i["kind"] == "missing-soname-link"]
    by_dir: Dict[str, List[Dict[str, Any]]] = {}
    for item in missing:
        by_dir.setdefault(item["directory"], []).append(item)
    for directory, items in sorted(by_dir.items()):
        fix = soname_links_fix(directory, items, all(i.get("ldconfig_manages") for i in items))
        out.append(finding(
            WARNING, "%s in %s lack%s the soname link%s the loader asks for: %s" % (
                ", ".join(os.path.basename(i["path"]) for i in items), directory, "s" if len(items) == 1 else "",
                "" if len(items) == 1 else "s", ", ".join(i["soname"] for i in items)),
            detail="Programs ask for libcudnn.so.N (the SONAME), never for the full file name, so a file without its "
                   "soname link is invisible to them: 'cannot open shared object file'.",
            remedy=fix, evidence={"directory": directory, "files": [i["path"] for i in items]}, catalogue=["D4"]))
    return out
