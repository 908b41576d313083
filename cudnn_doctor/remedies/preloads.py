"""Fixes for a cuDNN a process is handed before any search path is read: LD_PRELOAD (the user's shell) and
/etc/ld.so.preload (every process of the machine). ld.so loads both before the program, so the framework's own copy
is never asked for while the entry stays."""
from __future__ import annotations

from typing import Sequence

from ..model import Facts, Fix
from .acting import at, sudo
from .loader import ld_preload_fix
from .shell import q, run

ETC_PRELOAD = "/etc/ld.so.preload"


def drop_preload_fix(facts: Facts, preload_entry: str, preload_source: str) -> Fix:
    """The preload entry taken away where it was set: LD_PRELOAD without it in this shell, or its line deleted from
    /etc/ld.so.preload (root: the file is the machine's)."""
    if preload_source == ETC_PRELOAD:  # the line names the file by its path or by its bare name
        names = dict.fromkeys([preload_entry, preload_entry.rsplit("/", 1)[-1]])
        lines = " ".join("-e %s" % q("\\|^%s$|d" % e) for e in names)
        return run(sudo("sed -i %s %s" % (lines, q(at(ETC_PRELOAD)))))
    keep: Sequence[str] = [p for p in facts.loader.ld_preload if p != preload_entry]
    return ld_preload_fix(keep)
