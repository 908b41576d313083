"""Runs cudnn-doctor with a simulated hung mount: opening a path named in CUDNN_DOCTOR_TEST_HANG blocks for an hour.

Like a read on an NFS/Lustre folder whose server went away: the type is a regular file, ``lstat`` answers, and the
``open`` never returns. Only the check's own deadline can get the run past it.
"""
import builtins
import io
import os
import sys
import time

_HUNG = [p for p in os.environ.get("CUDNN_DOCTOR_TEST_HANG", "").split(os.pathsep) if p]
_open, _os_open = builtins.open, os.open


def _stall(path) -> None:
    try:
        text = os.fsdecode(path) if not isinstance(path, int) else ""
    except TypeError:
        return
    if any(text == p or text.endswith(p) for p in _HUNG):
        time.sleep(3600)


def hanging_open(file, *args, **kwargs):
    _stall(file)
    return _open(file, *args, **kwargs)


def hanging_os_open(path, *args, **kwargs):
    _stall(path)
    return _os_open(path, *args, **kwargs)


builtins.open = io.open = hanging_open
os.open = hanging_os_open

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from cudnn_doctor.cli import main

    main(sys.argv[1:])
