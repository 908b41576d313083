#!/usr/bin/env bash
# This round's GPU evidence in one call on the lent multi-GPU H100 (issues 31, 32, 33, 34):
#   torch's own compiled cuDNN, the node report beside nvidia-smi (scripts/gpu_node.sh), pick on this machine
#   (scripts/gpu_pick.sh), check's speed beside nvidia-smi and the previous release (the tree in .cache/base,
#   `git archive 201bb7c cudnn_doctor compat schema`, carried), and tests/gpu. Reads only; changes no GPU setting.
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 NO_COLOR=1 PYTHONPATH=$PWD
out=${OUT:-/tmp/gpu-round3}; mkdir -p "$out/node"
echo "== torch: version, compiled cuDNN, runtime cuDNN"
timeout 120 /opt/torch/.venv/bin/python -c "import torch; print(torch.__version__, torch._C._cudnn.getCompileVersion(), torch.backends.cudnn.version(), torch.cuda.get_arch_list())"
echo "== scripts/gpu_node.sh"
OUT=$out/node timeout 300 bash scripts/gpu_node.sh
echo "== scripts/gpu_pick.sh"
OUT=$out timeout 120 bash scripts/gpu_pick.sh
echo "== benchmarks/check_bench.py (this tree vs .cache/base = 201bb7c)"
timeout 240 python3 benchmarks/check_bench.py --runs 15 --baseline .cache/base
echo "== tests/gpu"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -15
