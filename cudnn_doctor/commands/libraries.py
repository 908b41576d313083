"""Which cuDNN library `smoke` and `bench` test: a --library given is validated, else the loader's (or every) copy."""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from ..ui import EXIT_DOCTOR_FAILED, EXIT_USAGE, error_exit


def _load_facts():
    """The `check` probes, imported only when no --library was given (they take a while)."""
    from ..diagnose import collect_facts

    return collect_facts(root="/", env=None)


def _loader_facts(root: str = "/"):
    """Only what the loader resolves for the cuDNN sonames and libcuda.so.1: a fraction of `check`'s probes."""
    from ..diagnose import loader_facts
    from ..smoke.choose import SONAMES

    return loader_facts(SONAMES + ("libcuda.so.1",), root)


def validate_library(path: str) -> None:
    if not os.path.lexists(path):
        error_exit("--library %s: no such file" % path, EXIT_USAGE)
    if os.path.isdir(path):
        error_exit("--library %s is a folder; give the library file, e.g. %s/libcudnn.so.9" % (path, path), EXIT_USAGE)
    from ..bounded_io import NotRegularFile, open_regular

    try:
        with open_regular(path) as fh:  # a FIFO here would block the open until a writer came
            magic = fh.read(4)
    except NotRegularFile as exc:
        error_exit("--library %s is a %s, not a library file" % (path, exc.kind), EXIT_USAGE)
    except OSError as exc:
        error_exit("--library %s cannot be read: %s" % (path, exc.strerror or exc), EXIT_USAGE)
    if magic != b"\x7fELF":
        error_exit("--library %s is not a shared library (no ELF header)" % path, EXIT_USAGE)


def discover(all_copies: bool, driver_given: bool = False) -> Tuple[List[str], Optional[str], str]:
    """(libraries to test, libcuda to use, why none were found)."""
    from ..smoke.choose import choose_libraries, driver_library

    try:
        # The copy a plain process loads needs only the loader's view; every probe only for --all or to say why.
        facts = None if all_copies else _loader_facts()
        libraries = choose_libraries(facts, all_copies=all_copies) if facts is not None else []
        if not libraries:
            facts = _load_facts()
            libraries = choose_libraries(facts, all_copies=all_copies)
    except ImportError as exc:
        error_exit("cannot look for cuDNN copies (%s); pass --library PATH" % exc, EXIT_DOCTOR_FAILED)
    why = ""
    driver = driver_library(facts)
    if driver is None and not driver_given and "libcuda.so.1" in facts.loader.resolved:
        # The layer below cuDNN is missing: no convolution can run, whatever cuDNN there is (or is not).
        why = ("no NVIDIA driver was found (libcuda.so.1 is not on the loader's search path), so no GPU can run "
               "the test: install the NVIDIA driver, or start the container with `--gpus all`; then run "
               "`cudnn-doctor check`%s" % ("" if libraries else ", which also says how to install cuDNN"))
        return [], None, why
    if not libraries:
        if facts.cudnn:
            count = len(facts.cudnn)
            why = ("no cuDNN is on the loader's search path, but %d %s found elsewhere: test with "
                   "`cudnn-doctor smoke --all` or `--library PATH`" % (count, "copy was" if count == 1 else "copies were"))
        else:
            why = "no cuDNN library was found; install one with `cudnn-doctor install`"
    return libraries, driver, why
