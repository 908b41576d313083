"""dist/cudnn-doctor.pyz for the tests: built by scripts/build_zipapp.sh once per state of the sources, or a reason."""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Iterator, Optional, Tuple

from realdata import CACHE, cache_lock

REPO = Path(__file__).resolve().parent.parent
PYENV = Path.home() / ".pyenv" / "versions"
OFFLINE = ("No matching distribution found", "NewConnectionError", "Temporary failure in name resolution",
           "Network is unreachable")


def _sources() -> Iterator[Path]:
    yield REPO / "pyproject.toml"
    yield REPO / "setup.py"
    yield REPO / "scripts" / "build_zipapp.sh"
    yield REPO / "scripts" / "zipapp_main.py"
    for folder in ("cudnn_doctor", "compat", "schema"):
        yield from sorted(p for p in (REPO / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def interpreters() -> Iterator[Tuple[str, str]]:
    """(X.Y, path) of the Python 3.9+ interpreters on this machine besides the one running the tests."""
    seen = set()
    for minor in range(9, 15):
        for candidate in [Path("/usr/bin/python3.%d" % minor)] + sorted(PYENV.glob("3.%d.*/bin/python3" % minor)):
            if os.access(str(candidate), os.X_OK) and "3.%d" % minor not in seen:
                seen.add("3.%d" % minor)
                yield "3.%d" % minor, str(candidate)


def built_zipapp() -> Tuple[Optional[Path], str]:
    """(path of the zipapp, "") for the sources as they are now, or (None, why it could not be built)."""
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    out = CACHE / "zipapp" / ("cudnn-doctor-%s.pyz" % digest.hexdigest()[:16])
    if out.is_file():
        return out, ""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None, "building the zipapp fetches its dependencies from PyPI and CUDNN_DOCTOR_NO_DOWNLOAD is set"
    with cache_lock(out):  # a run sharing the cache waits for this build instead of writing the same file
        if out.is_file():
            return out, ""
        return _build(out)


def _build(out: Path) -> Tuple[Optional[Path], str]:
    """Build the zipapp beside ``out`` and move it into place whole (a reader never sees half of it)."""
    env = dict(os.environ)
    oldest = dict(interpreters()).get("3.9")
    if oldest:  # resolve the dependencies as a 3.9 node needs them (the script explains why)
        env["RESOLVE_PYTHON"] = oldest
    partial = out.with_name(".tmp%d-%s" % (os.getpid(), out.name))  # still *.pyz
    proc = subprocess.run(["bash", str(REPO / "scripts" / "build_zipapp.sh"), str(partial)], cwd=str(REPO), env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode == 0 and partial.is_file():
        os.replace(partial, out)
    if proc.returncode != 0 or not out.is_file():
        text = proc.stdout + proc.stderr
        # Only an unreachable index is a reason to skip; any other failure is the script's and must fail.
        assert any(s in text for s in OFFLINE), "scripts/build_zipapp.sh failed:\n" + text[-3000:]
        return None, "scripts/build_zipapp.sh could not reach PyPI: %s" % text[-300:]
    return out, ""
