#!/usr/bin/env bash
# On the GPU machine: the reports and timings that must not change across a refactor. Writes to $OUT (or /tmp).
# Usage: bash scripts/gpu_snapshot.sh LABEL   -> $OUT/LABEL-check.json, LABEL-check.txt, LABEL-timing.txt
set -u
label=${1:-snapshot}
out=${OUT:-/tmp}
export NO_COLOR=1 PYTHONUNBUFFERED=1
site=/tmp/cd-site-$label
rm -rf "$site"
python3 -m pip install -q --no-deps --no-build-isolation --target "$site" . || exit 1
export PYTHONPATH=$site PATH=$site/bin:$PATH
cudnn-doctor check --json > "$out/$label-check.json"; echo "check --json exit=$?"
cudnn-doctor check -v > "$out/$label-check.txt"; echo "check exit=$?"
python3 benchmarks/check_bench.py --runs 7 2>&1 | tee "$out/$label-timing.txt"
python3 benchmarks/smoke_bench.py --runs 3 2>&1 | tee -a "$out/$label-timing.txt"
