"""For each library a pasted text names: where this machine's loader finds it (from the diagnosis), which other
versions are installed, and the fix when it is missing. Pure: reads facts only."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from ..knowledge import Compat
from ..model import Facts, Fix
from ..remedies.explain import (broken_file_fix, in_program_environment, is_toolkit_library, library_fix,
                                windows_dll_fix)
from ..versions import split_soname


@dataclass
class LibraryCheck:
    """What the loader does with one library name from the pasted text, and what else is installed."""

    name: str
    found: Optional[str] = None  # the path the loader settles on
    via: Optional[str] = None
    error: Optional[str] = None  # the loader stops at `found` and fails
    installed: List[str] = field(default_factory=list)  # other copies/versions that provide this library
    problem: bool = False
    message: str = ""
    fix: Optional[Fix] = None


def installed_versions(facts: Facts, name: str) -> List[str]:
    """Copies and toolkits on this machine that provide some version of `name`'s library."""
    stem, _ = split_soname(name)
    out: List[str] = []
    roots: List[str] = []  # folders already described, so a resolved file inside one is not listed twice
    if stem.startswith("libcudnn"):
        for copy in facts.cudnn:
            soname = "%s.so.%s" % (stem, copy.major) if copy.major is not None else stem + ".so"
            out.append("cuDNN %s (%s) at %s" % (copy.version or "?", soname, copy.directory))
            roots.append(copy.directory)
    elif is_toolkit_library(stem):
        for tk in facts.toolkits:
            if tk.dangling or tk.kind == "pip" or not tk.version:
                continue
            own = (" (%s)" % tk.cudart_soname) if stem == "libcudart" and tk.cudart_soname else ""
            out.append("CUDA %s%s at %s" % (tk.version, own, tk.path))
            roots += [r for r in (tk.path, tk.realpath) if r]
    elif stem == "libcuda" and facts.driver.libcuda_path:
        out.append("driver %s (libcuda.so.1) at %s" % (facts.driver.version or "?", facts.driver.libcuda_path))
        roots.append(facts.driver.libcuda_path)
    for other, res in sorted(facts.loader.resolved.items()):
        if other == name or split_soname(other)[0] != stem or not res.path:
            continue
        if any(p and (p == r or p.startswith(r.rstrip("/") + "/")) for p in (res.path, res.realpath) for r in roots):
            continue
        out.append("%s at %s" % (other, res.path))
    return out


def check_libraries(names: List[str], facts: Facts, compat: Compat,
                    alternatives: Sequence[Sequence[str]] = ()) -> List[LibraryCheck]:
    """For each library name: the loader's answer from the diagnosis (explain asks the loader probe to resolve
    every name in the text), the other versions here, and the fix when it is missing. Names the program tries in
    turn (`alternatives`) are missing only when none of their list resolves."""
    out = _check_each(names, facts, compat)
    by_name = {lib.name: lib for lib in out}
    for group in alternatives:
        found = next((by_name[n] for n in group if n in by_name and by_name[n].found and not by_name[n].error), None)
        if found is None:
            continue
        for n in group:
            lib = by_name.get(n)
            if lib is not None and lib is not found and lib.problem and not lib.found:
                lib.problem, lib.fix = False, None
                lib.message = "%s is not needed here: %s, of the same list, resolves" % (n, found.name)
    return out


def _check_each(names: List[str], facts: Facts, compat: Compat) -> List[LibraryCheck]:
    out: List[LibraryCheck] = []
    for name in names:
        check = LibraryCheck(name=name)
        out.append(check)
        if name.lower().endswith(".dll"):
            check.message = ("%s is a Windows DLL: Windows looks for it next to the program and on PATH; "
                             "cudnn-doctor inspects Linux library paths only" % name)
            check.fix = windows_dll_fix(name)
            continue
        res = facts.loader.resolved.get(name)
        check.installed = installed_versions(facts, name)
        if res is None:
            check.message = "the loader was not asked about %s (the probe ran out of time)" % name
            continue
        if res.path:
            check.found, check.via, check.error = res.path, res.via, res.error
            if res.error:
                check.problem = True
                check.message = "%s resolves to %s (via %s), but loading stops there: %s" % (
                    name, res.path, res.via or "?", res.error)
                broken = res.realpath or res.path
                check.fix = broken_file_fix(broken)
            else:
                check.message = ("%s resolves to %s (via %s) here, so the failing program runs with another "
                                 "environment (LD_LIBRARY_PATH, venv, container)" % (name, res.path, res.via or "?"))
                check.fix = in_program_environment()
            continue
        check.problem = True
        check.message = "%s is not on the search path; %s" % (
            name, ("installed: %s" % "; ".join(check.installed)) if check.installed else
            "no version of it is installed")
        check.fix = library_fix(compat, facts, name)
    return out
