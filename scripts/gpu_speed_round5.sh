#!/usr/bin/env bash
# Issue 31 item 7 on a lent GPU machine, round 5: check --json beside nvidia-smi and main (BASE, default `main`),
# one run's timeline of each, and proof that both trees report the machine identically. Reads only; changes no GPU
# setting; about 2 minutes.
#   bash scripts/gpu_speed_round5.sh [BASE_REF (default main)] [RUNS (default 21)]
# Needs this repository's .git (the baseline is exported with git archive into a temporary folder).
set -uo pipefail
cd "$(dirname "$0")/.."
base_ref=${1:-main}
runs=${2:-21}
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
git archive "$base_ref" | tar -x -C "$base"
export NO_COLOR=1
echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,persistence_mode --format=csv,noheader
echo "cores $(nproc); $(python3 -VV | head -1); this tree $(git rev-parse --short HEAD), base $base_ref = $(git rev-parse --short "$base_ref")"
PYTHONDONTWRITEBYTECODE= python3 -m compileall -q cudnn_doctor "$base/cudnn_doctor" >/dev/null
for tree in "$PWD" "$base"; do  # one warm run each: the parse caches and the page cache, for both
    (cd /tmp && PYTHONPATH="$tree" timeout 60 python3 -m cudnn_doctor check --json >/dev/null 2>&1)
done

echo; echo "== the same machine, the same report? (benchmarks/same_report.py base -> this tree)"
# Both through one link, repointed: the PYTHONPATH entry is a site folder the report lists.
link=$(mktemp -d)/tree
ln -sfn "$base" "$link" && (cd /tmp && PYTHONPATH="$link" timeout 60 python3 -m cudnn_doctor check --json > "$base/before.json")
ln -sfn "$PWD" "$link" && (cd /tmp && PYTHONPATH="$link" timeout 60 python3 -m cudnn_doctor check --json > "$base/after.json")
python3 benchmarks/same_report.py "$base/before.json" "$base/after.json"
rm -rf "$(dirname "$link")"

echo; echo "== one check --json run, phase by phase (this tree), then base"
(cd /tmp && timeout 60 python3 "$OLDPWD/benchmarks/check_timeline.py" --min-ms 3 --imports 12)
echo; echo "== base"
(cd /tmp && timeout 60 python3 "$OLDPWD/benchmarks/check_timeline.py" --tree "$base" --min-ms 3 --imports 12)

echo; echo "== benchmarks/check_bench.py: this tree vs $base_ref vs nvidia-smi ($runs interleaved runs)"
timeout 240 python3 benchmarks/check_bench.py --runs "$runs" --baseline "$base_ref=$base"
