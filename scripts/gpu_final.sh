#!/usr/bin/env bash
# On the GPU machine: what this round must show there. Two parts, so each call stays well inside its limit:
#   bash scripts/gpu_final.sh check [BASELINE_TREE]  -> check/smoke reports, the speed table (beside a baseline
#                                                        source tree when given), tests/gpu
#   bash scripts/gpu_final.sh bench [--no-torch]     -> bench, bench --quick (timed), bench beside torch
# Output to stdout and $OUT (or /tmp).
set -u
part=${1:-check}
baseline=${2:-}
out=${OUT:-/tmp}
export NO_COLOR=1 PYTHONUNBUFFERED=1
site=/tmp/cd-site
rm -rf "$site"
python3 -m pip install -q --no-deps --no-build-isolation --target "$site" . || exit 1
run_installed() { PYTHONPATH=$site PATH=$site/bin:$PATH "$@"; }
echo "== $(run_installed cudnn-doctor --version) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ "$part" = check ]; then
  run_installed cudnn-doctor check --json > "$out/after-check.json"; echo "check --json exit=$?"
  run_installed cudnn-doctor check -v > "$out/after-check.txt"; echo "check exit=$?"
  sed -n '/^Findings/,$p' "$out/after-check.txt"
  run_installed cudnn-doctor smoke --all; echo "smoke --all exit=$?"
  if [ -n "$baseline" ]; then
    python3 benchmarks/check_bench.py --runs 7 --smoke --baseline "$baseline" --timeout-overhead
  else
    python3 benchmarks/check_bench.py --runs 7 --smoke --timeout-overhead
  fi
  run_installed python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -5
elif [ "$part" = bench ]; then
  echo "== cudnn-doctor bench"
  start=$(date +%s.%N)
  run_installed cudnn-doctor bench 2>&1 | tee "$out/bench.txt"; code=${PIPESTATUS[0]}
  echo "exit=$code wall=$(python3 -c "print('%.1f s' % ($(date +%s.%N) - $start))")" | tee -a "$out/bench.txt"
  echo "== cudnn-doctor bench --quick"
  start=$(date +%s.%N)
  run_installed cudnn-doctor bench --quick 2>&1 | tee "$out/bench-quick.txt"; code=${PIPESTATUS[0]}
  echo "exit=$code wall=$(python3 -c "print('%.2f s' % ($(date +%s.%N) - $start))")" | tee -a "$out/bench-quick.txt"
  run_installed cudnn-doctor bench --quick --json > "$out/bench-quick.json"; echo "bench --quick --json exit=$?"
  if [ "$baseline" != --no-torch ]; then
    echo "== benchmarks/bench_vs_torch.py"
    PYTHONPATH=$site python3 benchmarks/bench_vs_torch.py --save-bench "$out/vs-bench.json" 2>&1 | tee "$out/bench-vs-torch.txt"
  fi
fi
