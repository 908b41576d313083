"""Fixes for a cuDNN a process is handed before any search path is read: LD_PRELOAD (the user's shell) and
/etc/ld.so.preload (every process of the machine). ld.so loads both before the program, so the framework's own copy
is never asked for while the entry stays."""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

from ..model import ETC_PRELOAD, Facts, Fix, Resolution
from .acting import at, sudo
from .loader import ld_preload_fix
from .shell import q, run, then


def drop_preload_fix(facts: Facts, res: Resolution, then_fix: Optional[Fix] = None,
                     others: Sequence[Fix] = ()) -> Fix:
    """The preload a framework's cuDNN request was answered by, taken away where it was set: LD_PRELOAD without its
    entry in this shell, or its line deleted from /etc/ld.so.preload (root: the file is the machine's); then
    ``then_fix``, which while the preload stands changes nothing the process loads first, and ``others``: what the
    other frameworks the same preload answered need once it is gone."""
    if res.via == ETC_PRELOAD:  # the line names the file by its path or by its bare name
        names = dict.fromkeys([res.path or "", (res.path or "").rsplit("/", 1)[-1]])
        lines = " ".join("-e %s" % q("\\|^%s$|d" % e) for e in names)
        drop = run(sudo("sed -i %s %s" % (lines, q(at(ETC_PRELOAD)))))
    else:
        entry = _entry(facts, res.path or "")
        keep: Sequence[str] = [p for p in facts.loader.ld_preload if p != entry]
        drop = ld_preload_fix(keep)
    steps: List[Fix] = []
    for fix in (f for f in [then_fix, *others] if f is not None):
        # one site's plan serves every framework there: said once, not once per framework it came through
        if not set(fix.commands) <= {c for s in steps for c in s.commands}:
            steps.append(fix)
    return then(drop, *steps) if steps else drop


def _entry(facts: Facts, path: str) -> str:
    """The LD_PRELOAD entry that named this file (a bare name the loader found, or the path itself)."""
    base = os.path.basename(path)
    return next((e for e in facts.loader.ld_preload if e == path or e == base), path)
