#!/usr/bin/env bash
# Issue 31 item 7 and issue 33 item 4 on a lent GPU machine: check --json's speed beside nvidia-smi, this tree vs
# .cache/main (main before this round's speed work) vs .cache/base (201bb7c, before the node checks); where one
# check run spends its time; the node health reads by NVML function and their NVLink counters beside nvidia-smi's.
# Reads only; changes no GPU setting. Under 4 minutes on two or four H100s.
#   bash scripts/gpu_speed_round4.sh            (from the repository root or anywhere; needs .cache/main, .cache/base:
#   mkdir -p .cache/main .cache/base && git archive eb1a139 cudnn_doctor compat schema | tar -x -C .cache/main &&
#   git archive 201bb7c cudnn_doctor compat schema | tar -x -C .cache/base)
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD" NO_COLOR=1
for tree in .cache/main .cache/base; do
    [ -d "$tree/cudnn_doctor" ] || { echo "missing $tree (see the header of $0)"; exit 2; }
done
echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader
echo "cores $(nproc); $(python3 -VV | head -1); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
# Bytecode for every tree, and one warm run each, so that no row pays for compiling or a cold page cache.
PYTHONDONTWRITEBYTECODE= python3 -m compileall -q cudnn_doctor .cache/main/cudnn_doctor .cache/base/cudnn_doctor >/dev/null
for tree in "$PWD" "$PWD/.cache/main" "$PWD/.cache/base"; do
    (cd /tmp && PYTHONPATH="$tree" timeout 60 python3 -m cudnn_doctor check --json >/dev/null 2>&1)
done

echo; echo "== NVML health reads by function (NVML started; this tree, then main) and the NVLink error counters"
timeout 90 python3 benchmarks/nvml_health_profile.py --tree main=.cache/main

echo; echo "== benchmarks/node_health_bench.py (this tree)"
timeout 90 python3 benchmarks/node_health_bench.py --runs 7

echo; echo "== one check --json run, phase by phase (this tree): NativeSession.collect is the wait for the native child"
(cd /tmp && timeout 60 python3 "$OLDPWD/benchmarks/check_timeline.py" --min-ms 3 --imports 12)
echo; echo "== the same run of main (.cache/main)"
(cd /tmp && timeout 60 python3 "$OLDPWD/benchmarks/check_timeline.py" --tree "$OLDPWD/.cache/main" --min-ms 3 --imports 12)

echo; echo "== benchmarks/check_bench.py: this tree vs main vs base (201bb7c) vs nvidia-smi"
timeout 150 python3 benchmarks/check_bench.py --runs 15 --baseline main=.cache/main --baseline base=.cache/base
