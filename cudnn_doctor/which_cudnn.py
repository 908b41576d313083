"""Which cuDNN library `smoke` and `bench` test, with the libcuda (and for bench the libnvrtc) beside it: the copy a
plain process loads, or every copy, found through `check`'s probes. May import diagnose and smoke; never commands."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import List, Optional, Tuple

from . import diagnose
from .diagnose import fixes_for_this_machine
from .queries import driver_place
from .remedies.doctor import install_cudnn_to_test_fix, no_driver_to_test_fix, smoke_every_copy_fix
from .ui import EXIT_DOCTOR_FAILED, EXIT_PROBLEMS


class CannotTest(Exception):
    """No library can be tested here: the one line to say, and the exit code it ends the command with."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message, self.code = message, code


@dataclass
class Choice:
    libraries: List[str]  # the cuDNN libraries to test, in order
    driver: Optional[str]  # the libcuda the loader picks, where one is found
    problem: str = ""  # why there is nothing to test, with its fix ("" when libraries were found)


def _load_facts():
    """The `check` probes, imported only when no --library was given (they take a while)."""
    return diagnose.collect_facts(root="/", env=None)


def _loader_facts(root: str = "/"):
    """Only what the loader resolves for the cuDNN sonames and libcuda.so.1: a fraction of `check`'s probes."""
    from .smoke.choose import SONAMES  # why: the smoke package, 37 ms that bench --library never needs

    return diagnose.loader_facts(SONAMES + ("libcuda.so.1",), root)


@fixes_for_this_machine
def find_libraries(all_copies: bool, driver_given: bool = False, facts=None) -> Choice:
    """The copy a plain process loads (or, with ``all_copies``, every copy) and the libcuda to use; ``facts`` are
    `check`'s, where the caller has collected them already (then nothing is probed again)."""
    from .smoke.choose import choose_libraries, driver_library  # why: as in _loader_facts

    try:
        whole = facts is not None
        # The copy a plain process loads needs only the loader's view; every probe only for --all or to say why.
        if not whole and not all_copies:
            facts = _loader_facts()
        libraries = choose_libraries(facts, all_copies=all_copies) if facts is not None else []
        if not libraries and not whole:
            facts = _load_facts()
            libraries = choose_libraries(facts, all_copies=all_copies)
    except ImportError as exc:
        raise CannotTest("cannot look for cuDNN copies (%s); pass --library PATH" % exc, EXIT_DOCTOR_FAILED)
    driver = driver_library(facts)
    if driver is None and not driver_given and "libcuda.so.1" in facts.loader.resolved:
        # The layer below cuDNN is missing: no convolution can run, whatever cuDNN there is (or is not).

        place = driver_place(facts)  # container, WSL or host: the answer check gives here
        return Choice([], None, "no NVIDIA driver was found (libcuda.so.1 is not on the loader's search path), so no "
                      "GPU can run the test: " + no_driver_to_test_fix(place, bool(libraries)).text)
    problem = ""
    if not libraries:
        if facts.cudnn:
            count = len(facts.cudnn)
            problem = "no cuDNN is on the loader's search path, but %d %s found elsewhere: %s" % (
                count, "copy was" if count == 1 else "copies were", smoke_every_copy_fix().text)
        else:
            problem = "no cuDNN library was found; " + install_cudnn_to_test_fix().text
    return Choice(libraries, driver, problem)


@fixes_for_this_machine
def bench_libraries(library: Optional[str], nvrtc: Optional[str]) -> Tuple[str, Optional[str], Optional[str]]:
    """(cuDNN library, libcuda, libnvrtc) for bench: the given ones first, else what `check`'s probes found."""
    from .bench.run import find_nvrtc  # why: bench's package, about 240 ms, never needed by smoke
    from .smoke.choose import driver_library  # why: as in _loader_facts

    facts = None
    if not library:
        facts = _load_facts()
        if not (facts.loader.resolved.get("libcuda.so.1") and facts.loader.resolved["libcuda.so.1"].path) \
                and not facts.gpus:
            raise CannotTest("no NVIDIA GPU here (no driver library libcuda.so.1 and no GPU seen by NVML): bench "
                             "needs one", EXIT_PROBLEMS)
        choice = find_libraries(False, facts=facts)
        if not choice.libraries:
            raise CannotTest(choice.problem, EXIT_PROBLEMS)
        library = choice.libraries[0]
    driver = driver_library(facts) if facts is not None else None
    if nvrtc is None:
        toolkits = [t.realpath or t.path for t in facts.toolkits] if facts is not None else []
        sites = list(facts.python.site_dirs) if facts is not None else []
        sites += [p for p in sys.path if p.endswith("site-packages")]
        nvrtc = find_nvrtc(toolkits, sites)
    return library, driver, nvrtc
