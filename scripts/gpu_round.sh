#!/usr/bin/env bash
# On the GPU machine, one call per part (each well inside the device tool's 10-minute limit):
#   bash scripts/gpu_round.sh stacks  -> what torch/CuPy/JAX really map beside check's prediction (gpu_realstack.py),
#                                        then the new-user and hostile-input runs (gpu_newusers.sh, gpu_hostile.sh)
#   bash scripts/gpu_round.sh final   -> check/smoke reports, check timing, tests/gpu (gpu_final.sh check)
# Everything lands in $OUT.
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1
out=${OUT:-/tmp/gpu-round}; mkdir -p "$out"
case "${1:-stacks}" in
  stacks)
    echo "##### gpu_realstack.py"; timeout 240 python3 scripts/gpu_realstack.py
    echo "##### gpu_newusers.sh"; OUT=$out timeout 150 bash scripts/gpu_newusers.sh > /dev/null 2>&1
    sed -n '1,400p' "$out/newusers.txt" | grep -v '^ *$' | head -150
    echo "##### gpu_hostile.sh"; OUT=$out timeout 150 bash scripts/gpu_hostile.sh > /dev/null 2>&1
    cat "$out/hostile.txt" | head -80 ;;
  final)
    OUT=$out timeout 540 bash scripts/gpu_final.sh check ;;
esac
