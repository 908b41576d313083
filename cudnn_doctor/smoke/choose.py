"""Which cuDNN copies to smoke-test, chosen from the facts `check` collected (pure: no probing here)."""
from __future__ import annotations

import os
from typing import Callable, List, Optional

from ..model import Facts

# Newest major first: a program built for cuDNN 9 asks for libcudnn.so.9, and that is the one in use today.
SONAMES = ("libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.7")


def plain_process_choice(facts: Facts) -> Optional[str]:
    """The cuDNN a plain process would load: the first soname the loader resolves, newest major first."""
    for soname in SONAMES:
        res = facts.loader.resolved.get(soname)
        if res is not None and res.path:
            return res.path
    return None


def choose_libraries(facts: Facts, all_copies: bool = False,
                     realpath: Callable[[str], str] = os.path.realpath) -> List[str]:
    """Libraries to test: the loader's choice, or with ``all_copies`` every copy found, each file once."""
    first = plain_process_choice(facts)
    candidates = [first] if first else []
    if all_copies:
        candidates += [copy.path for copy in facts.cudnn if copy.path]
    chosen: List[str] = []
    seen = set()
    for path in candidates:
        key = realpath(path)
        if key not in seen:
            seen.add(key)
            chosen.append(path)
    return chosen


def driver_library(facts: Facts) -> Optional[str]:
    """The libcuda.so.1 the loader resolves with the user's environment (the child's own lookup cannot see
    the user's LD_LIBRARY_PATH, which the runner strips)."""
    res = facts.loader.resolved.get("libcuda.so.1")
    return res.path if res is not None and res.path else None
