#!/usr/bin/env bash
# Round 5 on a lent 2- or 4-GPU machine, in one call: the node beside nvidia-smi and check --ready's timing
# (scripts/gpu_node.sh, issue 33), readiness shapes side by side (scripts/gpu_ready_variants.py: the old forks
# against the one-process shape check --ready now uses), check --json's speed beside nvidia-smi, this tree vs
# .cache/main (45c8f58, this round's start) vs .cache/base (201bb7c) (benchmarks/check_bench.py, issue 31), and
# the GPU test tier. Reads only; changes no GPU setting. About 5 minutes.
#   mkdir -p .cache/main .cache/base && git archive 45c8f58 cudnn_doctor compat schema | tar -x -C .cache/main &&
#   git archive 201bb7c cudnn_doctor compat schema | tar -x -C .cache/base;  bash scripts/gpu_round5.sh
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD" NO_COLOR=1 PYTHONUNBUFFERED=1
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); cores $(nproc); $(python3 -VV | head -1)"
PYTHONDONTWRITEBYTECODE= python3 -m compileall -q cudnn_doctor .cache/main/cudnn_doctor .cache/base/cudnn_doctor >/dev/null
for tree in "$PWD" "$PWD/.cache/main" "$PWD/.cache/base"; do  # warm: no row pays for a cold page cache
    (cd /tmp && PYTHONPATH="$tree" timeout 60 python3 -m cudnn_doctor check --json >/dev/null 2>&1)
done
OUT=${OUT:-/tmp/gpu-round5} bash scripts/gpu_node.sh
echo; echo "== readiness shapes (scripts/gpu_ready_variants.py)"
timeout 120 python3 scripts/gpu_ready_variants.py --rounds 2 --variants forks,one-seq,conn1,product
if [ -z "${NO_BENCH:-}" ]; then  # NO_BENCH=1: the node only
    echo; echo "== the same machine, the same report? (benchmarks/same_report.py .cache/main -> this tree)"
    # Both through one link, repointed: the PYTHONPATH entry is a site folder the report lists.
    link=$(mktemp -d)/tree; before=$(mktemp); after=$(mktemp)
    ln -sfn "$PWD/.cache/main" "$link" && (cd /tmp && PYTHONPATH="$link" timeout 60 python3 -m cudnn_doctor check --json > "$before")
    ln -sfn "$PWD" "$link" && (cd /tmp && PYTHONPATH="$link" timeout 60 python3 -m cudnn_doctor check --json > "$after")
    python3 benchmarks/same_report.py "$before" "$after"
    echo; echo "== benchmarks/check_bench.py: this tree vs main (45c8f58) vs base (201bb7c) vs nvidia-smi"
    timeout 200 python3 benchmarks/check_bench.py --runs 15 --baseline main=.cache/main --baseline base=.cache/base
    echo; echo "== one check --json run, phase by phase (this tree)"
    (cd /tmp && timeout 60 python3 "$OLDPWD/benchmarks/check_timeline.py" --min-ms 3 --imports 12 | tail -45)
fi
echo; echo "== tests/gpu"
timeout 300 python3 -m pytest tests/gpu -q -p no:cacheprovider 2>&1 | tail -5
