"""Runs `cudnn-doctor ...` and SIGKILLs it before its Nth file operation under a folder: a kill at any point.

An audit hook (PEP 578) sees every open/rename/remove/symlink/mkdir/chmod/... Python makes; those touching
CUDNN_DOCTOR_KILL_UNDER are numbered, and the process kills itself (no cleanup runs, like a power cut) just before
number CUDNN_DOCTOR_KILL_AT. With CUDNN_DOCTOR_KILL_AT=0 nothing is killed and the numbered operations are
written to CUDNN_DOCTOR_KILL_LOG, so a test can choose points through the whole run.

CUDNN_DOCTOR_KILL_LDCONFIG=ROOT: the post-install loader-cache refresh, which only runs for the live machine, runs
the real `ldconfig -X -r ROOT` instead, so kills land before, during and after a real refresh too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

_UNDER = os.environ.get("CUDNN_DOCTOR_KILL_UNDER", "/nonexistent")
_AT = int(os.environ.get("CUDNN_DOCTOR_KILL_AT", "0"))
_LOG = os.environ.get("CUDNN_DOCTOR_KILL_LOG")
_EVENTS = {"open", "os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chmod",
           "os.utime", "os.truncate", "os.chown", "shutil.copyfile", "shutil.rmtree", "shutil.move"}
_MARK = "cudnn-doctor-kill-test"  # events this driver raises itself around the ldconfig run
_seen = []


def _paths(args):
    for arg in args[:2]:
        if isinstance(arg, (str, bytes, os.PathLike)):
            yield os.fsdecode(arg)


def _hook(event, args):
    if event == _MARK:
        where = args[0]
    elif event in _EVENTS:
        candidates = list(_paths(args))
        if event in ("os.rename", "os.symlink", "os.link", "shutil.copyfile"):
            candidates.reverse()  # name a move or copy by where it lands
        where = next((p for p in candidates if p.startswith(_UNDER)), None)
        if where is None:  # reads count too: a kill while reading the journal back is a point like any other
            return
    else:
        return
    _seen.append((event, where))
    if _AT and len(_seen) == _AT:
        os.kill(os.getpid(), signal.SIGKILL)


def _real_ldconfig(root):
    def refresh(lib_dir, machine_root="/"):
        sys.audit(_MARK, "ldconfig-start")
        proc = subprocess.Popen(["ldconfig", "-X", "-r", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sys.audit(_MARK, "ldconfig-running")
        proc.wait()
        sys.audit(_MARK, "ldconfig-done")
        return "refreshed the loader cache (ldconfig -r %s)" % root
    return refresh


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from cudnn_doctor.cli import main as cli_main
    from cudnn_doctor.install import after

    if os.environ.get("CUDNN_DOCTOR_KILL_LDCONFIG"):
        after.refresh_loader_cache = _real_ldconfig(os.environ["CUDNN_DOCTOR_KILL_LDCONFIG"])
    sys.addaudithook(_hook)
    try:
        cli_main(argv)
    finally:
        if _LOG:
            with open(_LOG, "w") as fh:
                json.dump(_seen, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
