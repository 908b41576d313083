"""Start-up of the single-file zipapp (dist/cudnn-doctor.pyz) against the installed command; prints a table.

    python3 benchmarks/zipapp_startup.py [--runs 9] [--pyz dist/cudnn-doctor.pyz] [--python /usr/bin/python3]
                                         [--venv DIR]

Both run on the same interpreter (--python, default the system's /usr/bin/python3, as on a node): the installed
command is this checkout installed with pip into a fresh venv of it (or the venv under --venv); the zipapp runs as
a node runs it, `python3 -I cudnn-doctor.pyz ...` from / with an empty environment. Every command is a fresh
process, the rows interleaved run by run so a busy machine slows each alike; the table gives medians and minimums.
The zipapp's first run on a machine unpacks it; that cost is timed separately, each time into an empty folder.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Sequence

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BARE_ENV = {"PATH": "/usr/bin:/bin"}  # what `env -i` leaves, plus a PATH for the probes' helper lookups


def timed(argv: Sequence[str], env: Dict[str, str]) -> float:
    """Wall seconds of one whole process, run from / (its exit code is the report's, so not checked here)."""
    start = time.perf_counter()
    subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                   env=env, cwd="/")
    return time.perf_counter() - start


def installed_venv(python: str, where: str) -> str:
    """A fresh venv holding this checkout's wheel, as `pip install .` makes it."""
    subprocess.run([python, "-m", "venv", where], check=True)
    subprocess.run([os.path.join(where, "bin", "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    REPO], check=True)
    return where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--pyz", default=os.path.join(REPO, "dist", "cudnn-doctor.pyz"))
    parser.add_argument("--venv", help="a venv that already has cudnn-doctor installed")
    system = "/usr/bin/python3"
    parser.add_argument("--python", default=system if os.access(system, os.X_OK) else sys.executable,
                        help="the interpreter both run on (a node's system python3)")
    args = parser.parse_args()
    if not os.path.isfile(args.pyz):
        print("no zipapp at %s: run scripts/build_zipapp.sh first" % args.pyz, file=sys.stderr)
        return 2
    scratch = tempfile.mkdtemp(prefix="zipapp-startup-")
    try:
        venv = args.venv or installed_venv(args.python, os.path.join(scratch, "venv"))
        exe = os.path.join(venv, "bin", "cudnn-doctor")
        warm_env = dict(BARE_ENV, CUDNN_DOCTOR_ZIPAPP_DIR=os.path.join(scratch, "unpacked"))
        pyz = [args.python, "-I", args.pyz]
        subprocess.run(pyz + ["--version"], env=warm_env, stdout=subprocess.DEVNULL, check=True)  # unpacked once
        unpacked = os.path.join(warm_env["CUDNN_DOCTOR_ZIPAPP_DIR"], os.listdir(warm_env["CUDNN_DOCTOR_ZIPAPP_DIR"])[0])
        # The unpacked code imported directly, by each interpreter: what the zip adds, apart from the interpreter.
        direct = "import sys; sys.path.insert(0, %r); from cudnn_doctor.cli import main; main()" % unpacked
        rows = [
            ("interpreter alone: python3 -I -c pass", [args.python, "-I", "-c", "pass"], BARE_ENV),
            ("installed: cudnn-doctor --version", [exe, "--version"], BARE_ENV),
            ("zipapp: python3 -I cudnn-doctor.pyz --version", pyz + ["--version"], warm_env),
            ("installed: cudnn-doctor check --json", [exe, "check", "--json"], BARE_ENV),
            ("zipapp: python3 -I cudnn-doctor.pyz check --json", pyz + ["check", "--json"], warm_env),
            ("unpacked, python3 -I -c: check --json", [args.python, "-I", "-c", direct, "check", "--json"], BARE_ENV),
            ("unpacked, the venv's python -c: check --json",
             [os.path.join(venv, "bin", "python"), "-I", "-c", direct, "check", "--json"], BARE_ENV),
        ]
        times: Dict[str, List[float]] = {name: [] for name, _, _ in rows}
        first: List[float] = []
        for run in range(args.runs):
            for name, argv, env in rows:
                times[name].append(timed(argv, env))
            cold = dict(BARE_ENV, CUDNN_DOCTOR_ZIPAPP_DIR=os.path.join(scratch, "cold-%d" % run))
            first.append(timed(pyz + ["--version"], cold))
        times["zipapp, first run on a machine (unpacks): --version"] = first
        print("zipapp %s (%.1f MiB), %s (Python %s), %d runs, %d CPUs, load %.1f" % (
            os.path.relpath(args.pyz, REPO), os.path.getsize(args.pyz) / 2 ** 20, args.python,
            subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True).stdout.strip(),
            args.runs, os.cpu_count() or 0, os.getloadavg()[0]))
        width = max(len(name) for name in times)
        print("| %-*s | median | min |" % (width, "command"))
        print("|%s|---:|---:|" % ("-" * (width + 2)))
        for name, values in times.items():
            print("| %-*s | %.3f s | %.3f s |" % (width, name, statistics.median(values), min(values)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
