"""`cudnn-doctor install` vs NVIDIA's manual recipe (tar -xJf, cp -P, chmod a+r) on the real 9.1.0 archive.

Builds (once, cached) cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz from the real
nvidia-cudnn-cu12 wheel, then times each procedure as a whole process into a fresh fake CUDA
12.4 toolkit, alternating the two, and prints the median of --runs runs and the ratio. The install
runs with --no-smoke --no-check (the manual recipe verifies nothing after copying either); its own
checks of the archive and its load check of the installed library are included.

    python3 benchmarks/install_bench.py [--runs 5] [--workdir DIR] [--baseline DIR [--baseline-python EXE]]

Also timed, interleaved with the others: a bare `tar -xJf` of the same archive (the floor: the xz decoder on one
block plus the writes), and with --baseline the same install from another source tree (main before a change).
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import archive_factory  # noqa: E402
import realdata  # noqa: E402
from kit import FakeMachine  # noqa: E402

MANUAL = r"""set -e
work="$(mktemp -d -p "$WORKDIR")"
tar -xJf "$ARCHIVE" -C "$work"
cp -P "$work"/cudnn-*-archive/include/cudnn*.h "$CUDA_HOME/include"
cp -P "$work"/cudnn-*-archive/lib/libcudnn* "$CUDA_HOME/lib64"
chmod a+r "$CUDA_HOME"/include/cudnn*.h "$CUDA_HOME"/lib64/libcudnn*
"""


def build_archive() -> Path:
    site = realdata.real_wheel(*realdata.CUDNN9)
    if site is None:
        sys.exit("install_bench: the nvidia-cudnn-cu12 9.1.0.70 wheel could not be downloaded")
    started = time.monotonic()
    archive = archive_factory.repack_wheel_as_tarball(site, realdata.CACHE / "repacked", compression="xz")
    if time.monotonic() - started > 1:
        print("built %s in %.0f s" % (archive.name, time.monotonic() - started))
    return archive


def fresh_toolkit(base: Path, name: str) -> Path:
    machine = FakeMachine(base / name)
    return machine.p(machine.toolkit("12.4.1", link_as=None))


def timed(cmd, env) -> float:
    subprocess.run(["sync"], check=False)  # flush the previous run's writes so they are not billed here
    start = time.perf_counter()
    # From a neutral folder, so `python -m` imports the tree PYTHONPATH names, not the current folder's.
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=tempfile.gettempdir())
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit("install_bench: %s failed: %s" % (cmd[:3], proc.stderr.strip()))
    return elapsed


def installed_set(home: Path):
    lib = home / "lib64"
    return sorted((n, os.readlink(lib / n) if os.path.islink(lib / n) else "file")
                  for n in os.listdir(lib) if n.startswith("libcudnn"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", default=None, help="scratch folder (default: a temp folder)")
    parser.add_argument("--archive", metavar="PATH", help="time this cuDNN .tar.xz instead of the real 9.1.0 one")
    parser.add_argument("--baseline", metavar="DIR", help="another source tree whose install is timed too")
    parser.add_argument("--baseline-python", metavar="EXE", default=sys.executable)
    args = parser.parse_args()
    archive = Path(args.archive) if args.archive else build_archive()
    base = Path(tempfile.mkdtemp(prefix="cudnn-install-bench-", dir=args.workdir))
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1", WORKDIR=str(base), ARCHIVE=str(archive))
    ours, manual, bare, baseline = [], [], [], []
    order = ["ours", "manual", "tar"] + (["baseline"] if args.baseline else [])
    try:
        for i in range(args.runs):
            for which in order[i % len(order):] + order[:i % len(order)]:  # rotate who goes first
                home = fresh_toolkit(base, "%s-%d" % (which, i)) if which != "tar" else None
                if which in ("ours", "baseline"):
                    python, tree = ((sys.executable, str(REPO)) if which == "ours"
                                    else (args.baseline_python, os.path.abspath(args.baseline)))
                    cmd = [python, "-m", "cudnn_doctor", "install", str(archive), "--cuda-home", str(home),
                           "--no-smoke", "--no-check"]
                    (ours if which == "ours" else baseline).append(timed(cmd, dict(env, PYTHONPATH=tree)))
                elif which == "tar":
                    work = base / ("tar-%d" % i)
                    work.mkdir()
                    bare.append(timed(["tar", "-xJf", str(archive), "-C", str(work)], env))
                else:
                    manual.append(timed(["bash", "-c", MANUAL], dict(env, CUDA_HOME=str(home))))
            same = installed_set(base / ("ours-%d" % i) / "usr/local/cuda-12.4") == \
                installed_set(base / ("manual-%d" % i) / "usr/local/cuda-12.4")
            print("run %d: cudnn-doctor %.2f s, manual %.2f s%s" % (i + 1, ours[-1], manual[-1],
                                                                    "" if same else "  (INSTALLED SETS DIFFER)"))
            for entry in base.iterdir():
                shutil.rmtree(entry, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    mo, mm = statistics.median(ours), statistics.median(manual)
    print()
    print("archive: %s (%.0f MB)" % (archive.name, archive.stat().st_size / 1e6))
    print("%-44s %10s %10s %10s" % ("procedure (whole process, %d runs)" % args.runs, "median s", "min s", "max s"))
    print("%-44s %10.2f %10.2f %10.2f" % ("cudnn-doctor install --no-smoke --no-check", mo, min(ours), max(ours)))
    print("%-44s %10.2f %10.2f %10.2f" % ("manual: tar -xJf; cp -P; chmod a+r", mm, min(manual), max(manual)))
    mt = statistics.median(bare)
    print("%-44s %10.2f %10.2f %10.2f" % ("bare tar -xJf", mt, min(bare), max(bare)))
    if baseline:
        print("%-44s %10.2f %10.2f %10.2f" % ("baseline tree: install --no-smoke --no-check",
                                               statistics.median(baseline), min(baseline), max(baseline)))
    print("ratio cudnn-doctor / manual: %.2f (%s)" % (mo / mm, "faster" if mo < mm else "slower"))
    print("ratio cudnn-doctor / bare tar -xJf: %.2f" % (mo / mt))
    if baseline:
        print("ratio baseline / bare tar -xJf: %.2f" % (statistics.median(baseline) / mt))


if __name__ == "__main__":
    main()
