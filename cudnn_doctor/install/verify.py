"""After the files are in place: load check, loader-cache refresh, and the optional smoke test."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Iterable, Optional, Set

from ..host import Host
from ..probes.loader import read_conf_dirs
from ..remedies.install import ldconfig_by_hand_fix
from .hooks import machine_root

DEFAULT_LOADER_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")


def load_cudnn(lib: str, search_dir: str, timeout: float = 30.0, host: Optional[Host] = None) -> dict:
    """cudnnGetVersion/cudnnGetCudartVersion of a library, in a child that may crash safely; through ``host``
    (the machine the install serves when none is given)."""
    host = host if host is not None else Host(machine_root())
    return host.run_native([[{"op": "cudnn", "lib": lib, "search_dir": search_dir}]], timeout=timeout)[0][0]


def loader_dirs(host: Optional[Host] = None) -> Set[str]:
    """Folders the system loader searches: ld.so.conf as the probes read it, plus the trusted defaults."""
    host = host or Host("/")
    found = list(DEFAULT_LOADER_DIRS) + host.glob("/lib/*-linux-gnu") + host.glob("/usr/lib/*-linux-gnu")
    found += read_conf_dirs(host)
    return {host.realpath(d)[0] for d in found}


def should_refresh_loader_cache(lib_dir: str, euid: int, system_dirs: Iterable[str], platform: str,
                                temp_root: str) -> bool:
    """Run ldconfig only as root, on Linux, for a folder the system loader reads, never in a temp dir.

    ldconfig rewrites /etc/ld.so.cache for the whole machine; doing it for a test folder or a
    private prefix would be a side effect outside the install.
    """
    if euid != 0 or not platform.startswith("linux"):
        return False
    real = os.path.realpath(lib_dir)
    temp = os.path.realpath(temp_root)
    if real == temp or real.startswith(temp.rstrip(os.sep) + os.sep):
        return False
    return real in {os.path.realpath(d) for d in system_dirs}


def refresh_loader_cache(lib_dir: str, machine_root: str = "/") -> Optional[str]:
    """ldconfig when the rule above says so; returns a note for the report.

    ``machine_root`` is the machine whose ld.so.conf is read; ldconfig only ever runs for the
    live one ("/"), and the cheap conditions are decided before any file is read.
    """
    geteuid = getattr(os, "geteuid", lambda: -1)
    if machine_root != "/" or geteuid() != 0 or not sys.platform.startswith("linux"):
        return None
    if not should_refresh_loader_cache(lib_dir, geteuid(), loader_dirs(Host(machine_root)), sys.platform,
                                       tempfile.gettempdir()):
        return None
    try:
        proc = subprocess.run(["ldconfig"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "ldconfig could not run (%s); %s" % (exc, ldconfig_by_hand_fix().text)
    if proc.returncode != 0:
        return "ldconfig failed: %s" % (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
    return "refreshed the loader cache (ldconfig)"


def smoke(library: str, timeout: float = 60.0, host: Optional[Host] = None) -> dict:
    """The cuDNN smoke test when that module is available, through ``host`` (the machine the install serves when
    none is given); its result as a plain dict."""
    try:
        from ..smoke import run_smoke  # why: the smoke package, about 50 ms, and --no-smoke never needs it
    except ImportError as exc:
        return {"available": False, "ok": None, "summary": "smoke test not available (%s)" % exc}
    try:
        result = run_smoke(library, timeout=timeout, host=host if host is not None else Host(machine_root()))
    except Exception as exc:  # the smoke test failing to run must not undo a verified install
        return {"available": True, "ok": False, "summary": "smoke test could not run: %s: %s"
                % (type(exc).__name__, exc)}
    data = result.to_dict() if hasattr(result, "to_dict") else {}
    data.update({"available": True, "ok": bool(getattr(result, "ok", False)),
                 "summary": getattr(result, "summary", "")})
    for key in ("diagnosis", "fix"):
        data.setdefault(key, getattr(result, key, None))
    return data
