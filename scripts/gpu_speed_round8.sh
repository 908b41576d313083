#!/usr/bin/env bash
# Issue 31 item 7 on a lent GPU machine, round 8: `check --json` as a user installs it (its own virtual
# environment holding only its dependencies, bytecode compiled, as pipx or pip do) and inside the machine's torch
# environment (whose site hooks run numba's import redirector at every interpreter start), beside nvidia-smi and
# an older tree. Reads only; changes no GPU setting; about 3 minutes.
#   OUT=dir bash scripts/gpu_speed_round8.sh [BASE_DIR (default .cache/base)] [RUNS (default 15)]
# The dependencies are carried as .cache/site312 (the machine has no network), made here by
#   pip install --target .cache/site312 --python-version 3.12 --implementation cp --abi cp312 \
#       --platform manylinux2014_x86_64 --only-binary=:all: <the [project] dependencies of pyproject.toml>
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-/tmp}
base=${1:-.cache/base}
runs=${2:-15}
export NO_COLOR=1
echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader
base_py=$(python3 -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
echo "cores $(nproc); $(python3 -VV | head -1); base interpreter $base_py"

own=/tmp/own-venv
rm -rf "$own"
"$base_py" -m venv --without-pip "$own" || { echo "no venv module: stop"; exit 1; }
site=$("$own/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp -a "${SITE:-.cache/site312}/." "$site/"
PYTHONDONTWRITEBYTECODE= "$own/bin/python" -m compileall -q "$site" >/dev/null
PYTHONDONTWRITEBYTECODE= "$own/bin/python" -m compileall -q cudnn_doctor "$base/cudnn_doctor" >/dev/null
echo "own environment: $own ($(ls "$site" | grep -c dist-info) distributions)"

echo; echo "== interpreter start alone (15 runs, median ms)"
"$own/bin/python" - "$own/bin/python" <<'PY'
import statistics, subprocess, sys, time
rows = [("torch env: python3 -c pass", ["python3", "-c", "pass"]),
        ("torch env: python3 -S -c pass", ["python3", "-S", "-c", "pass"]),
        ("own env: python -c pass", [sys.argv[1], "-c", "pass"])]
for name, argv in rows:
    walls = []
    for _ in range(15):
        t = time.perf_counter(); subprocess.run(argv); walls.append((time.perf_counter() - t) * 1e3)
    print("%-34s %7.1f ms (min %.1f)" % (name, statistics.median(walls), min(walls)))
PY

check() { (cd /tmp && PYTHONPATH="$1" timeout 60 "$own/bin/python" -m cudnn_doctor check --json); }
for tree in "$repo" "$repo/$base"; do check "$tree" >/dev/null 2>&1; done
echo; echo "== same report? ($base -> this tree, own environment)"
check "$repo/$base" > "$out/before.json" 2>/dev/null; check "$repo" > "$out/after.json" 2>/dev/null
python3 benchmarks/same_report.py "$out/before.json" "$out/after.json"
cp "$out/after.json" "$out/check.json"; rm -f "$out/before.json" "$out/after.json"

echo; echo "== -X importtime of one run in the own environment (largest self times)"
(cd /tmp && PYTHONPATH="$repo" "$own/bin/python" -X importtime -m cudnn_doctor check --json 2>"$out/imp.txt" >/dev/null)
"$own/bin/python" - "$out/imp.txt" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
    if m:
        rows.append((int(m.group(1)) / 1e3, int(m.group(2)) / 1e3, m.group(4)))
ours = sum(r[0] for r in rows if r[2].startswith("cudnn_doctor"))
print("all imports %.1f ms self; cudnn_doctor's %.1f ms; packaging's %.1f ms; %d modules" % (
    sum(r[0] for r in rows), ours, sum(r[0] for r in rows if r[2].startswith("packaging")), len(rows)))
for self_ms, cum, name in sorted(rows, reverse=True)[:30]:
    print("%7.2f %8.2f  %s" % (self_ms, cum, name))
PY

echo; echo "== one run's timeline in the own environment, serial, then as shipped"
(cd /tmp && PYTHONPATH="$repo" timeout 60 "$own/bin/python" "$repo/benchmarks/check_timeline.py" --serial --min-ms 2 --imports 25)
(cd /tmp && PYTHONPATH="$repo" timeout 60 "$own/bin/python" "$repo/benchmarks/check_timeline.py" --min-ms 3 --imports 10)

echo; echo "== benchmarks/probe_profile.py in the own environment (serial, profiled)"
(cd /tmp && PYTHONPATH="$repo" timeout 60 "$own/bin/python" "$repo/benchmarks/probe_profile.py" --min-ms 4 --top 14)

echo; echo "== benchmarks/check_bench.py, own environment ($runs interleaved runs)"
timeout 240 python3 benchmarks/check_bench.py --runs "$runs" --python "$own/bin/python" --baseline "base=$base"

echo; echo "== benchmarks/check_bench.py, the torch environment's python3, bytecode for every module (PYTHONPYCACHEPREFIX)"
export PYTHONPYCACHEPREFIX=/tmp/pycache-prefix
PYTHONDONTWRITEBYTECODE= python3 -c "import packaging.requirements, typer, rich, requests, pynvml, pefile" 2>/dev/null
PYTHONDONTWRITEBYTECODE= python3 -m compileall -q "$(python3 -c 'import packaging, os; print(os.path.dirname(packaging.__file__))')" >/dev/null
timeout 240 python3 benchmarks/check_bench.py --runs "$runs" --baseline "base=$base"
