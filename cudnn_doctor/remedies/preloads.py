"""Fixes for a cuDNN a process is handed before any search path is read: LD_PRELOAD (the user's shell) and
/etc/ld.so.preload (every process of the machine). ld.so loads both before the program, so the framework's own copy
is never asked for while the entry stays."""
from __future__ import annotations

import os
from typing import Sequence

from ..model import ETC_PRELOAD, PRELOADED, Facts, Fix, Resolution
from .acting import at, sudo
from .loader import ld_preload_fix
from .shell import q, run, then



def drop_preload_fix(facts: Facts, preload_entry: str, preload_source: str) -> Fix:
    """The preload entry taken away where it was set: LD_PRELOAD without it in this shell, or its line deleted from
    /etc/ld.so.preload (root: the file is the machine's)."""
    if preload_source == ETC_PRELOAD:  # the line names the file by its path or by its bare name
        names = dict.fromkeys([preload_entry, preload_entry.rsplit("/", 1)[-1]])
        lines = " ".join("-e %s" % q("\\|^%s$|d" % e) for e in names)
        return run(sudo("sed -i %s %s" % (lines, q(at(ETC_PRELOAD)))))
    keep: Sequence[str] = [p for p in facts.loader.ld_preload if p != preload_entry]
    return ld_preload_fix(keep)


def drop_preload_of(facts: Facts, res: Resolution) -> Fix:
    """The fix that takes away the preload a framework's cuDNN request was answered by: the LD_PRELOAD entry that
    named the file (a bare name the loader found, or the path itself), or the line of /etc/ld.so.preload."""
    if res.via == ETC_PRELOAD:
        return drop_preload_fix(facts, res.path or "", ETC_PRELOAD)
    base = os.path.basename(res.path or "")
    entry = next((e for e in facts.loader.ld_preload if e == res.path or e == base), res.path or "")
    return drop_preload_fix(facts, entry, "LD_PRELOAD")


def preload_first(facts: Facts, res: Resolution, fix: Fix) -> Fix:
    """``fix`` after the preload that answered the framework's request is taken away: while it stands, nothing
    installed changes what the process loads first."""
    return then(drop_preload_of(facts, res), fix)

