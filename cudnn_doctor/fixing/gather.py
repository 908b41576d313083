"""Which of check's findings `fix` takes on, as plan.Erring values (pure): every error, or the findings named by id
or alias, each with its fix's commands and the site-packages folder it is about (its framework's, or a site folder
its evidence or commands name), so a fix meant for another environment is never run in this one."""
from __future__ import annotations

import json
from typing import List, Optional, Sequence

from ..model import Facts, Finding, Severity
from ..queries import framework_label
from .plan import Erring


def chosen(findings: Sequence[Finding], ids: Sequence[str]) -> List[Finding]:
    """The findings asked for: those named (id or alias, any severity), else every error."""
    if ids:
        wanted = {i.upper() for i in ids} | set(ids)
        return [f for f in findings if f.id in wanted or f.alias in wanted]
    return [f for f in findings if f.severity == Severity.ERROR]


def unknown_ids(findings: Sequence[Finding], ids: Sequence[str]) -> List[str]:
    """The ids asked for that check did not report."""
    return [i for i in ids if not any(f.id == i.upper() or f.alias == i for f in findings)]


def site_of(finding: Finding, facts: Facts) -> Optional[str]:
    """The site-packages folder a finding is about, or None (the machine's, or not said)."""
    evidence = finding.evidence if isinstance(finding.evidence, dict) else {}
    name = evidence.get("framework")
    if isinstance(name, str):  # its name, or its label (CD706: "tensorflow 2.15.1")
        same_name = [fw for fw in facts.python.frameworks if name in (fw.name, "%s %s" % (fw.name, fw.version))
                     and fw.location]
        # One release installed in two environments (a venv and its copy, on the H200): the title's label says which
        # twin it is, where the evidence may name the other's files (CD709: the LD_LIBRARY_PATH folder it loads from)
        labels = {id(fw): framework_label(facts, fw) for fw in same_name}
        twins = [fw for fw in same_name if "(in " in labels[id(fw)] and labels[id(fw)] in finding.title]
        places = {fw.location for fw in (twins or same_name)}
        if len(places) == 1:
            return places.pop()
    sites = {s for s in facts.python.site_dirs} | {p.get("site", "") for p in facts.python.pythons}
    sites |= {fw.location or "" for fw in facts.python.frameworks}
    # The places a check looked in are not what it is about (CD401 lists every site it searched, the doctor's own too:
    # realworld draw 291129-47, whose errors then named two environments and fix found none).
    about = {k: v for k, v in evidence.items() if k != "searched"}
    said = json.dumps(about, default=str) + "\n".join(finding.remedy.commands if finding.remedy else [])
    named = sorted((s for s in sites if s and s in said), key=len, reverse=True)
    return named[0] if named else None


def errings(findings: Sequence[Finding], facts: Facts) -> List[Erring]:
    return [Erring(f.id, f.title, tuple(f.remedy.commands) if f.remedy else (), site_of(f, facts))
            for f in findings]
