"""How this cudnn-doctor is started again from any shell: the absolute words of the console script, the zipapp or
``python -m cudnn_doctor``, and whether a plain ``cudnn-doctor`` on PATH is the same program (Host.doctor_start)."""
from __future__ import annotations

import os
import shutil
import zipfile
from typing import Tuple


def start_form(argv0: str, executable: str, path: str) -> Tuple[Tuple[str, ...], bool]:
    """The absolute words that start the program Python was started with (``sys.argv[0]``): the console script
    itself, ``python -I APP.pyz`` for a zipapp, ``python -m cudnn_doctor`` for the package run as a module; and
    whether ``cudnn-doctor`` on ``path`` is that same console script."""
    python = os.path.abspath(executable) if executable else "python3"  # a venv's python is found by its own path
    script = os.path.abspath(argv0) if argv0 and argv0 != "-c" else ""
    if script and os.path.isfile(script) and _may_be_zip(script):
        if zipfile.is_zipfile(script):
            return (python, "-I", script), False
    # Anything but the console script (``-m``'s __main__.py, a program that imports the package) runs it as a module.
    if not (os.path.isfile(script) and os.path.basename(script).startswith("cudnn-doctor")):
        return (python, "-m", "cudnn_doctor"), False
    found = shutil.which("cudnn-doctor", path=path)
    return (script,), found is not None and os.path.realpath(found) == os.path.realpath(script)


def _may_be_zip(path: str) -> bool:
    """False when the file holds no zip end record where zipfile.is_zipfile looks for one (its last 64 KiB and 22
    bytes): a console script or __main__.py is then told from a zipapp without importing zipfile."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - (1 << 16) - 22))
            return b"PK\x05\x06" in fh.read()
    except OSError:
        return True  # let zipfile decide, as before

