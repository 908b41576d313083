"""After an install: the doctor's `check` verdict, narrowed to the findings that concern the installed copy."""
from __future__ import annotations

import json
import os
import re
from typing import Iterable, List, Mapping, Optional

from .. import diagnose
from ..remedies.install import check_by_hand_fix

NOT_RUN = "not run"


def inside_path(path: str, machine_root: str) -> Optional[str]:
    """``path`` as a program on the machine under ``machine_root`` sees it; None when it lies outside."""
    root = os.path.realpath(machine_root)
    if root == os.sep:
        return path
    if path == root:
        return "/"
    return path[len(root):] if path.startswith(root + os.sep) else None


def _mentions(finding, paths: Iterable[str]) -> bool:
    text = json.dumps(finding.evidence, default=str, sort_keys=True)
    return any(re.search(re.escape(p) + r'(?=["/\\]|$)', text) for p in paths)


def summarise(report, paths: List[str]) -> dict:
    """The overall verdict, plus each finding whose evidence names one of ``paths`` or is about cuDNN (CD4xx/5xx)."""
    picked, others = [], 0
    for f in report.findings:
        about = _mentions(f, paths)
        if about or f.id.startswith(("CD4", "CD5")):
            picked.append({"id": f.id, "severity": f.severity.value, "title": f.title, "fix": f.fix,
                           "about_install": about})
        else:
            others += 1
    return {"ran": True, "verdict": report.verdict, "findings": picked, "other_findings": others}


def check_install(kind: str, root: str, dest_dirs: Mapping[str, str], machine_root: str,
                  env: Mapping[str, str]) -> dict:
    """Runs `check` on the machine as a program using this install sees it; never raises (a failure is a note).

    A toolkit is judged as the primary one (CUDA_HOME set to it); a prefix as if its lib folder
    led LD_LIBRARY_PATH, which is how such a copy is used.
    """
    found = [inside_path(p, machine_root) for p in [root] + sorted(set(dest_dirs.values()))]
    paths = [p for p in found if p is not None]
    if len(paths) < len(found):
        return {"ran": False, "note": "%s: the target lies outside the machine root %s" % (NOT_RUN, machine_root)}
    check_env = dict(env)
    if kind == "toolkit":
        seen_with = {"CUDA_HOME": paths[0]}
    else:
        lib = inside_path(dest_dirs.get("lib", root), machine_root) or paths[0]
        seen_with = {"LD_LIBRARY_PATH": os.pathsep.join([lib] + [p for p in [env.get("LD_LIBRARY_PATH")] if p])}
    check_env.update(seen_with)
    try:
        result = summarise(diagnose.collect_report(root=machine_root, env=check_env), [p for p in paths if p])
    except Exception as exc:  # a report, never a reason to fail a verified install
        return {"ran": False, "note": "the check could not run (%s: %s); %s"
                % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "", check_by_hand_fix().text)}
    result["seen_with"] = seen_with
    return result
