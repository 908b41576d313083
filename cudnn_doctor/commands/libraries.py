"""--library for `smoke` and `bench`: the path given must be a readable shared library (which_cudnn finds one otherwise)."""
from __future__ import annotations

import os

from ..ui import EXIT_USAGE, error_exit


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
