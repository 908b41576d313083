#!/usr/bin/env bash
# On the GPU machine (no network): install this checkout, then `cudnn-doctor bench`, `bench --quick` with its wall
# time, and benchmarks/bench_vs_torch.py (bench beside torch on the same cuDNN). Logs under $OUT when set.
set -u
export NO_COLOR=1 PYTHONUNBUFFERED=1
target=/tmp/cudnn-doctor-site
rm -rf "$target"
python3 -m pip install -q --no-deps --no-build-isolation --target "$target" . || exit 1
export PYTHONPATH=$target PATH=$target/bin:$PATH
out=${OUT:-/tmp}
echo "== cudnn-doctor bench"
cudnn-doctor bench "$@"; echo "exit=$?"
echo "== cudnn-doctor bench --quick"
start=$(date +%s.%N)
cudnn-doctor bench --quick > "$out/quick.txt" 2>&1; code=$?
end=$(date +%s.%N)
cat "$out/quick.txt"
echo "exit=$code wall=$(python3 -c "print('%.2f s' % ($end - $start))")"
cudnn-doctor bench --quick --json > "$out/quick.json"; echo "json exit=$?"
echo "== benchmarks/bench_vs_torch.py"
python3 benchmarks/bench_vs_torch.py
