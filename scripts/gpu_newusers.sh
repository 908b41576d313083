#!/usr/bin/env bash
# The new-user changes that only a GPU machine can show: smoke still runs (the no-driver message must not fire
# where libcuda.so.1 resolves), bench's child after its NVML part moved to bench/nvml_state.py, the effective
# TFLOP/s note on FFT/Winograd rows, the section marks with a real GPU, and explain on a real stack.
# Run from the repository root through the device tool; everything lands in $OUT (default /tmp/gpu-newusers).
set -u
out=${OUT:-/tmp/gpu-newusers}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NO_COLOR=1
{
echo "== check (marks: [✓] only for layers found and fine)"; python3 -m cudnn_doctor check; echo "exit=$?"
echo "== check -v (searched: 'N place(s)')"; python3 -m cudnn_doctor check -v | sed -n '/^Searched/,/^$/p'
echo "== smoke --all (must run the convolution, not report a missing driver)"; python3 -m cudnn_doctor smoke --all
echo "exit=$?"
echo "== bench --quick (child imports nvml_state; FFT/Winograd rows marked '*' with the effective-rate note)"
python3 -m cudnn_doctor bench --quick; echo "exit=$?"
python3 -m cudnn_doctor bench --quick --json > "$out/bench.json"; echo "bench --json exit=$?"
python3 - "$out/bench.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
nvml = doc.get("nvml") or {}
print("nvml keys:", sorted(nvml)[:8], "error:", nvml.get("error"))
PY
echo "== explain on this stack"
python3 -m cudnn_doctor explain "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file"; echo "exit=$?"
python3 -m cudnn_doctor explain "Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8.6.0"; echo "exit=$?"
} 2>&1 | tee "$out/newusers.txt"
