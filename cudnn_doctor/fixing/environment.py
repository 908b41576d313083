"""The environment `fix` changes and its tools, read from the machine: which prefix (the active venv or conda
environment, else the one the errors are about), whether its pip works or uv or conda must do, whether pip's index
answers, and the package set with exact versions (what the journal keeps)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .plan import Environment

PIP_TIMEOUT = 900.0  # seconds for one pip run (a cuDNN wheel is 600 MB)
OWN_SITE = {"PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}  # pip run on the environment's own site-packages alone
QUICK = 60.0  # seconds for a pip that only reads (list, the dry run)


def run(argv: Sequence[str], env: Mapping[str, str], timeout: float = PIP_TIMEOUT) -> Tuple[int, str]:
    """Run a program (no shell), its output kept; (exit status, stdout and stderr). A program missing or past its
    time is status 127 or 124 with the reason as its output."""
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=dict(env), timeout=timeout, text=True, errors="replace")
    except FileNotFoundError as exc:
        return 127, "%s: %s" % (argv[0], exc.strerror)
    except OSError as exc:
        return 126, "%s: %s" % (argv[0], exc)
    except subprocess.TimeoutExpired:
        return 124, "%s did not finish within %.0f s" % (argv[0], timeout)
    return done.returncode, done.stdout or ""


def tail(text: str, lines: int = 6) -> str:
    """The last lines of a program's output: what a report keeps of it."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def prefix_of_site(site: str) -> str:
    """PREFIX of PREFIX/lib/pythonX.Y/site-packages (a venv's and a conda environment's layout)."""
    parts = site.rstrip("/").split("/")
    if len(parts) > 3 and parts[-1] in ("site-packages", "dist-packages") and parts[-2].startswith("python"):
        return "/".join(parts[:-3]) or "/"
    return site


def find_environment(env: Mapping[str, str], sites: Sequence[str]) -> Optional[Environment]:
    """The environment to change: the active one (VIRTUAL_ENV, then CONDA_PREFIX), else the one prefix every
    erring site belongs to; None when there is none or several."""
    prefix = env.get("VIRTUAL_ENV") or env.get("CONDA_PREFIX")
    if not prefix:
        prefixes = sorted({prefix_of_site(s) for s in sites})
        prefix = prefixes[0] if len(prefixes) == 1 else None
    if not prefix or not os.path.isdir(prefix):
        return None
    prefix = os.path.abspath(prefix)
    kind = "conda" if os.path.isdir(os.path.join(prefix, "conda-meta")) else "venv"
    if not os.path.isfile(os.path.join(prefix, "pyvenv.cfg")) and kind != "conda":
        return None  # a system prefix (/usr) is not an environment fix changes
    writable = all(os.access(p, os.W_OK) for p in [prefix, *_sites(prefix)])
    # Known whenever it sees one: an error about a framework there, and any `pip install --user` step, change it.
    user_site, base_python, managed = _user_site(prefix, kind, env)
    return Environment(prefix, kind, _tool(prefix, env), writable, user_site, base_python, managed,
                       active=_activated(prefix, env))


def _user_site(prefix: str, kind: str, env: Mapping[str, str]) -> Tuple[str, str, bool]:
    """(the user site the environment's python sees, the interpreter that owns it, whether that one is externally
    managed), or ("", "", False) when it sees none: a venv sees it only when made with --system-site-packages; its
    base interpreter owns it."""
    if kind == "venv":
        try:
            with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8") as fh:
                cfg = dict(line.split("=", 1) for line in fh.read().splitlines() if "=" in line)
        except OSError:
            return "", "", False
        if {k.strip(): v.strip() for k, v in cfg.items()}.get("include-system-site-packages", "").lower() != "true":
            return "", "", False
    # In a venv, the interpreter it was made from (sys._base_executable) owns the user site; a conda environment's
    # own python does. A venv has no standard library of its own: sysconfig's is the owner's, where PEP 668's
    # marker sits.
    code, out = run([prefix + "/bin/python", "-c", "import os, site, sys, sysconfig; print(site.getusersitepackages() "
                     "if site.ENABLE_USER_SITE else ''); print(sys._base_executable if sys.prefix != sys.base_prefix "
                     "else ''); print(os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), "
                     "'EXTERNALLY-MANAGED')))"], env, QUICK)
    lines = out.splitlines()
    if code != 0 or len(lines) < 3 or not lines[0]:
        return "", "", False
    owner = lines[1]
    if owner and run([owner, "-m", "pip", "--version"], env, QUICK)[0] != 0:
        owner = ""  # no pip of its own: the environment's pip installs there (and cannot remove a release there)
    return os.path.abspath(lines[0]), owner, bool(owner) and lines[2] == "True"


def _activated(prefix: str, env: Mapping[str, str]) -> bool:
    """Whether the shell fix runs in has the environment at ``prefix`` activated (VIRTUAL_ENV or CONDA_PREFIX names
    it)."""
    return any(bool(env.get(name)) and os.path.abspath(env[name]) == prefix for name in ("VIRTUAL_ENV", "CONDA_PREFIX"))


def _sites(prefix: str) -> List[str]:
    lib = os.path.join(prefix, "lib")
    try:
        return [os.path.join(lib, n, "site-packages") for n in os.listdir(lib)
                if n.startswith("python") and os.path.isdir(os.path.join(lib, n, "site-packages"))]
    except OSError:
        return []


def _tool(prefix: str, env: Mapping[str, str]) -> str:
    """Its own pip where `python -m pip` works; else uv (uv-made venvs have no pip); else conda's."""
    code, _ = run([prefix + "/bin/python", "-m", "pip", "--version"], env, QUICK)
    if code == 0:
        return "pip"
    if shutil.which("uv", path=env.get("PATH")):
        return "uv"
    return "conda" if os.path.isdir(os.path.join(prefix, "conda-meta")) else "pip"


def package_set(environment: Environment, env: Mapping[str, str], site: str = "") -> Optional[Dict[str, str]]:
    """{name: version} of every distribution installed in the environment (pip list --format=json), or None. pip
    is asked for the environment's own site-packages only (--path): a wheel a .pth folder or PYTHONPATH puts on
    sys.path is not the environment's, and a fix that installs the same release beside it (--ignore-installed)
    must be seen as added, so that undo takes it away. ``site``: that folder alone (the user site fix installed
    into)."""
    own = [w for folder in ([site] if site else _sites(environment.prefix)) for w in ("--path", folder)]
    words = (["uv", "pip", "list", "--python", environment.python, "--format=json"] if environment.tool == "uv"
             else [environment.python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check", *own])
    code, out = run(words, env, QUICK)
    if code != 0:
        return None
    start = out.find("[")
    try:
        rows = json.loads(out[start:]) if start >= 0 else None
    except ValueError:
        return None
    return {str(r["name"]).lower().replace("_", "-"): str(r["version"]) for r in rows or []}


def conda_export(environment: Environment, env: Mapping[str, str]) -> Optional[str]:
    """`conda list --export` of a conda environment (kept beside the pip set; None where conda is not there)."""
    if environment.kind != "conda" or not shutil.which("conda", path=env.get("PATH")):
        return None
    code, out = run(["conda", "list", "--export", "-p", environment.prefix], env, QUICK)
    return out if code == 0 else None


def pip_dry_run(environment: Environment, requirements: List[str], options: List[str],
                env: Mapping[str, str], python: str = "") -> Tuple[Optional[str], List[Tuple[str, str]]]:
    """Ask pip to resolve an install without changing anything (`pip install --dry-run --report`, a short timeout,
    no retries): (None, [(name, version) pip would install]) when it resolves; else (pip's last words: no index
    reachable, no such release, a conflict; []). ``python``: the one the step runs pip with (the user site's
    owner), else the environment's."""
    if environment.tool != "pip" or not requirements:
        return None, []
    with tempfile.TemporaryDirectory(prefix="cudnn-doctor-fix-") as tmp:
        report = os.path.join(tmp, "report.json")
        code, out = run([python or environment.python, "-m", "pip", "install", "--dry-run", "--quiet", "--timeout", "5",
                         "--retries", "1", "--disable-pip-version-check", "--report", report, *options,
                         *requirements], env, QUICK * 2)
        if code == 0:
            try:
                with open(report, encoding="utf-8") as fh:
                    rows = json.load(fh).get("install") or []
            except (OSError, ValueError):
                rows = []
            return None, [(str(r["metadata"]["name"]).lower().replace("_", "-"), str(r["metadata"]["version"]))
                          for r in rows if isinstance(r, dict) and "metadata" in r]
    return _said(out, code), []


def _said(out: str, code: int) -> str:
    """pip's failure in one line: its index out of reach (what the connection said), else its last error."""
    # pip says a connection failed only in its retry warnings (none with --retries 0), then "from versions: none"
    net = re.search(r"(Failed to establish a new connection: [^'\")]+|Temporary failure in name resolution|"
                    r"Name or service not known|Network is unreachable|Read timed out)", out)
    if net:
        return "pip cannot reach its package index (%s)" % net.group(1).strip()
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return "pip cannot resolve it: %s" % (lines[-1][:300] if lines else "exit %d" % code)
