#!/usr/bin/env bash
# Issue 31 item 7 on the GPU machine: `check --json` beside nvidia-smi and the tree before the speed work.
#   bash scripts/gpu_check_speed.sh [BASELINE_REF (default e5139bc, main before branch `speed`)] [RUNS (default 15)]
# Needs this repository's .git (the baseline is exported with git archive), python3 with the project's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader || true
python3 benchmarks/check_bench.py --runs "${2:-15}" --baseline-ref "${1:-e5139bc}"
