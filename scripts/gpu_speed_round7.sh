#!/usr/bin/env bash
# Issue 31 item 7 on a lent GPU machine, round 7: where `check --json` spends its time there, sampled (py-spy,
# non-blocking, so the run is not slowed by the sampler), each probe's own time from the report, -X importtime,
# then the speed table beside nvidia-smi and an older tree. Reads only; changes no GPU setting; about 2 minutes.
#   OUT=dir bash scripts/gpu_speed_round7.sh [BASE_DIR (default .cache/main)] [RUNS (default 15)]
# py-spy is carried as .cache/pyspy/py-spy (the machine has no network); without it the sampling is skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-/tmp}
base=${1:-.cache/main}
runs=${2:-15}
export NO_COLOR=1
echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader
echo "cores $(nproc); $(python3 -VV | head -1)"
PYTHONDONTWRITEBYTECODE= python3 -m compileall -q cudnn_doctor "$base/cudnn_doctor" >/dev/null
check() { (cd /tmp && PYTHONPATH="$1" timeout 60 python3 -m cudnn_doctor check --json); }
for tree in "$repo" "$base"; do check "$tree" >/dev/null 2>&1; check "$tree" >/dev/null 2>&1; done

echo; echo "== same report? ($base -> this tree)"
check "$repo/$base" > "$out/before.json" 2>/dev/null; check "$repo" > "$out/after.json" 2>/dev/null
python3 benchmarks/same_report.py "$out/before.json" "$out/after.json"

echo; echo "== each probe's own time (facts.timings_ms), median of 9 runs, ms"
for i in $(seq 1 9); do check "$repo" 2>/dev/null > "$out/t_$i.json"; done
python3 - "$out" <<'PY'
import glob, json, statistics, sys
runs = [json.load(open(p)) for p in sorted(glob.glob(sys.argv[1] + "/t_*.json"))]
names = sorted({k for r in runs for k in r["facts"]["timings_ms"]})
rows = [(statistics.median(r["facts"]["timings_ms"].get(n, 0.0) for r in runs), n) for n in names]
for ms, n in sorted(rows, reverse=True):
    print("%8.2f  %s" % (ms, n))
print("%8.1f  duration_s (the report's own), median" % (statistics.median(r["duration_s"] for r in runs) * 1000))
PY
rm -f "$out"/t_*.json

if [ -x .cache/pyspy/py-spy ]; then
    echo; echo "== py-spy, 12 runs, samples by function (inclusive, then self)"
    for i in $(seq 1 12); do
        (cd /tmp && PYTHONPATH="$repo" "$repo/.cache/pyspy/py-spy" record --nonblocking -t -r 4000 -f raw \
            -o "$out/spy_$i.txt" -- python3 -m cudnn_doctor check --json >/dev/null 2>>"$out/spy.err")
    done
    cat "$out"/spy_*.txt > "$out/spy.txt" 2>/dev/null; rm -f "$out"/spy_*.txt
    tail -3 "$out/spy.err" 2>/dev/null
fi

echo; echo "== -X importtime of one run (the 25 largest cumulative)"
(cd /tmp && PYTHONPATH="$repo" python3 -X importtime -m cudnn_doctor check --json 2>"$out/imp.txt" >/dev/null)
sort -t'|' -k2 -n "$out/imp.txt" | tail -25

echo; echo "== one run's timeline, serial (each phase's own time), then as shipped"
(cd /tmp && PYTHONPATH="$repo" timeout 60 python3 "$repo/benchmarks/check_timeline.py" --serial --min-ms 2 --imports 40)
(cd /tmp && PYTHONPATH="$repo" timeout 60 python3 "$repo/benchmarks/check_timeline.py" --min-ms 3 --imports 15)

echo; echo "== benchmarks/probe_profile.py (serial, profiled)"
(cd /tmp && PYTHONPATH="$repo" timeout 60 python3 "$repo/benchmarks/probe_profile.py" --min-ms 3 --top 8)

echo; echo "== benchmarks/check_variants.py"
timeout 200 python3 benchmarks/check_variants.py --runs "$runs"

echo; echo "== benchmarks/check_bench.py ($runs interleaved runs)"
timeout 300 python3 benchmarks/check_bench.py --runs "$runs" --baseline "base=$repo/$base"

echo; echo "== the same, with bytecode for every module (PYTHONPYCACHEPREFIX; the machine's site-packages ship none)"
export PYTHONPYCACHEPREFIX=/tmp/pyc-prefix
for tree in "$repo" "$repo/$base"; do (cd /tmp && PYTHONDONTWRITEBYTECODE= PYTHONPATH="$tree" python3 -m cudnn_doctor check --json >/dev/null 2>&1); done
timeout 300 python3 benchmarks/check_bench.py --runs "$runs" --baseline "base=$repo/$base"
