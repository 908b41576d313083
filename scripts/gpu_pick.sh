#!/usr/bin/env bash
# `cudnn-doctor pick` on a real GPU machine (the lent H100: driver 580, torch 2.11 in /opt/torch/.venv, no network).
# Run from the repository root:   bash scripts/gpu_pick.sh
# Prints pick torch / cudnn / jax (human and JSON), the same asked --against this machine's own check --json, and
# checks that the torch picked is the one installed or a newer one, and that the installed wheel's arch list (what
# torch itself reports) is the one the knowledge read from the same release's wheel.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PY:-python3}
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python}
OUT=${OUT:-$(mktemp -d)}
doctor() { "$PY" -m cudnn_doctor "$@"; }

nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || true
for what in torch cudnn jax tensorflow; do
  echo "=== cudnn-doctor pick $what"
  doctor pick "$what"; echo "exit $?"
done
doctor pick torch --json > "$OUT/pick_torch.json"; echo "pick torch --json exit $?"
doctor check --json > "$OUT/node.json"; echo "check --json exit $?"
echo "=== pick torch --against this machine's report"
doctor pick torch --against "$OUT/node.json" --emit pip; echo "exit $?"

echo "=== the installed torch against the pick"
"$TORCH_PY" - "$OUT/pick_torch.json" <<'PYEOF'
import json, sys
import torch
from packaging.version import Version
doc = json.load(open(sys.argv[1]))
have = Version(torch.__version__.split("+")[0])
print("installed torch", torch.__version__, "CUDA", torch.version.cuda, "arch", torch.cuda.get_arch_list())
print("cuda available", torch.cuda.is_available(), [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())])
pick = doc["pick"]
print("picked", pick and (pick["release"], pick["cuda"], pick["install"] if "install" in pick else doc["install"].get("pip")))
ok = pick is not None and Version(pick["release"]) >= have
print("PICK NAMES THE INSTALLED TORCH OR A NEWER ONE:", "yes" if ok else "NO")
sys.path.insert(0, ".")
from cudnn_doctor.knowledge import load_compat
row = load_compat().wheel_code("torch", str(have))
if row:
    knows = sorted(set(row["sass"]))
    real = sorted({a for a in torch.cuda.get_arch_list() if a.startswith("sm_")})
    print("knowledge (read from the wheel):", knows)
    print("torch.cuda.get_arch_list():     ", real)
    print("ARCH LISTS AGREE:", "yes" if set(real) <= set(knows) else "NO (missing %s)" % sorted(set(real) - set(knows)))
PYEOF
echo "files in $OUT"
