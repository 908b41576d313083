"""Real engines for the deploy/ tests: Debian packages and PyPI tools installed once (idempotently), or a reason."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence, Tuple

from realdata import CACHE, cache_lock

REPO = Path(__file__).resolve().parent.parent
APT_TIMEOUT = ["-o", "DPkg::Lock::Timeout=900"]
_apt_updated = False


def apt_tool(binary: str, packages: Sequence[str]) -> Tuple[Optional[str], str]:
    """(path of ``binary``, "") once the Debian packages are installed, or (None, why not)."""
    global _apt_updated
    found = shutil.which(binary) or (binary if os.path.isabs(binary) and os.access(binary, os.X_OK) else None)
    if found:
        return found, ""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None, "%s is not installed and CUDNN_DOCTOR_NO_DOWNLOAD is set" % binary
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "%s is not installed and apt-get cannot run here (needs root on Debian/Ubuntu)" % binary
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if not _apt_updated:
        subprocess.run(["apt-get", "update", "-q"] + APT_TIMEOUT, env=env, capture_output=True, timeout=1200)
        _apt_updated = True
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + APT_TIMEOUT + list(packages),
                          env=env, capture_output=True, text=True, timeout=1800)
    found = shutil.which(binary) or (binary if os.path.isabs(binary) and os.access(binary, os.X_OK) else None)
    if not found:
        return None, "apt-get install %s failed: %s" % (" ".join(packages), (proc.stderr or proc.stdout)[-300:])
    return found, ""


def tool_venv(name: str, requirements: Sequence[str]) -> Tuple[Optional[Path], str]:
    """A cached virtual environment holding PyPI tools the project itself does not depend on: (bin folder, why not)."""
    key = hashlib.sha256("\n".join([sys.version] + list(requirements)).encode()).hexdigest()[:12]
    venv = CACHE / "venvs" / ("%s-%s" % (name, key))
    ready = venv / ".ready"
    if ready.exists():
        return venv / "bin", ""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None, "%s is not cached and CUDNN_DOCTOR_NO_DOWNLOAD is set" % name
    with cache_lock(venv):  # a run sharing the cache waits, then uses this venv instead of rebuilding it
        if ready.exists():
            return venv / "bin", ""
        shutil.rmtree(venv, ignore_errors=True)
        proc = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
        if proc.returncode == 0:
            proc = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q"] + list(requirements),
                                  capture_output=True, text=True, timeout=1200)
        if proc.returncode != 0:
            return None, "pip install %s failed: %s" % (" ".join(requirements), (proc.stderr or proc.stdout)[-300:])
        ready.write_text("\n".join(requirements) + "\n")
    return venv / "bin", ""


def doctor_command() -> str:
    """The cudnn-doctor under test, as a command line that works from any process (engines run it themselves)."""
    script = Path(sys.executable).parent / "cudnn-doctor"
    if script.exists():
        return str(script)
    return "%s -m cudnn_doctor" % sys.executable
