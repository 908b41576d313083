#!/usr/bin/env bash
# The one GPU verification entry: what only a machine with an NVIDIA GPU can show. Reads the machine; writes only
# under $OUT and /tmp. Needs no network: python3 with the project's dependencies (the lent machine's torch
# environment, /opt/torch/.venv, has them), run from the repository root (e.g. through the device tool).
#
#   bash scripts/gpu_verify.sh speed|smoke|bench|install|all [RUNS]
#
#   speed    `check --json` beside nvidia-smi, RUNS (default 25) interleaved whole processes, medians
#            (benchmarks/check_bench.py), then what each start-up trick saves (benchmarks/startup_tricks.py)
#   smoke    check -v and --json, smoke --all (human and --json), check --smoke, explain and matrix, tests/gpu
#   bench    bench --quick, timed, human and --json
#   install  this checkout installed as a user installs it (pip, no network) and its command run: check, smoke
#            --all, check --smoke; then `install` of the machine's own pip cuDNN repacked as NVIDIA's tarball into
#            a fake toolkit under /tmp, smoke on the installed copy, and rollback
#   all      each of the above, in that order
#
# Output: $OUT/verify-MODE.txt (everything printed) and the JSON reports beside it (check.json, smoke.json,
# bench-quick.json); without $OUT, /tmp/gpu-verify. Each step runs under `timeout`; `all` takes a few minutes.
set -u
mode=${1:-all}
runs=${2:-25}
case "$mode" in speed|smoke|bench|install|all) ;; *)
  echo "usage: bash scripts/gpu_verify.sh speed|smoke|bench|install|all [RUNS]" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
repo=$PWD
out=${OUT:-/tmp/gpu-verify}; mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONPATH=$repo PYTHONUNBUFFERED=1 NO_COLOR=1
doctor() { timeout 300 "$py" -m cudnn_doctor "$@"; }
step() { echo; echo "== $*"; }

speed() {
  step "check --json beside nvidia-smi ($runs interleaved runs, medians)"
  timeout 400 "$py" benchmarks/check_bench.py --runs "$runs"
  step "start-up tricks: each one's saving beside the plain way"
  timeout 300 "$py" benchmarks/startup_tricks.py --runs 20
}

smoke() {
  step "check -v"; doctor check -v; echo "exit=$?"
  doctor check --json > "$out/check.json"; echo "check --json exit=$?"
  step "smoke --all"; doctor smoke --all; echo "exit=$?"
  doctor smoke --all --json > "$out/smoke.json"; echo "smoke --all --json exit=$?"
  step "check --smoke -q"; doctor check --smoke -q; echo "exit=$?"
  step "explain"
  doctor explain "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0)"
  echo "exit=$?"
  step "matrix --cuda 13.0"; doctor matrix --cuda 13.0 | head -20
  step "tests/gpu"; timeout 400 "$py" -m pytest -q -rs -p no:cacheprovider tests/gpu; echo "exit=$?"
}

bench() {
  step "bench --quick"
  start=$(date +%s.%N)
  doctor bench --quick; code=$?
  echo "exit=$code wall=$("$py" -c "print('%.2f s' % ($(date +%s.%N) - $start))")"
  doctor bench --quick --json > "$out/bench-quick.json"; echo "bench --quick --json exit=$?"
}

install() {
  local site=/tmp/cudnn-doctor-site
  step "pip install of this checkout (no network, no build isolation) into $site"
  rm -rf "$site"
  timeout 300 "$py" -m pip install -q --no-deps --no-build-isolation --target "$site" . || { echo "pip failed"; return; }
  (
    export PYTHONPATH=$site PATH=$site/bin:$PATH
    cd /tmp
    echo "$(cudnn-doctor --version) from $("$py" -c 'import cudnn_doctor; print(cudnn_doctor.__file__)')"
    step "installed: cudnn-doctor check"; timeout 120 cudnn-doctor check; echo "exit=$?"
    step "installed: cudnn-doctor smoke --all"; timeout 300 cudnn-doctor smoke --all; echo "exit=$?"
    step "installed: cudnn-doctor check --smoke --json"
    timeout 300 cudnn-doctor check --smoke --json | "$py" -c 'import json, sys; d = json.load(sys.stdin); print("verdict", d["verdict"], [(f["id"], f["severity"]) for f in d["findings"]])'
  )
  step "install the pip cuDNN repacked as NVIDIA's tarball into a fake CUDA 13.0, smoke it, roll back"
  local purelib archive tk=/tmp/fake-cuda-13.0
  purelib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf /tmp/repack "$tk"
  timeout 300 "$py" - "$purelib" <<'PY' || { echo "no pip cuDNN to repack"; return; }
import sys
sys.path.insert(0, "tests")
from pathlib import Path
from archive_factory import repack_wheel_as_tarball
found = [p.name[:-len(".dist-info")].split("-")[1] for p in Path(sys.argv[1]).glob("nvidia_cudnn_cu*-*.dist-info")]
print(repack_wheel_as_tarball(Path(sys.argv[1]), Path("/tmp/repack"), version=found[0], cuda="13", xz_level=0))
PY
  archive=$(ls /tmp/repack/*.tar.xz | head -1)
  mkdir -p "$tk/include" "$tk/lib64"
  echo '#define CUDA_VERSION 13000' > "$tk/include/cuda.h"
  doctor install "$archive" --cuda-home "$tk" --dry-run | tail -5; echo "dry-run exit=${PIPESTATUS[0]}"
  start=$(date +%s.%N)
  doctor install "$archive" --cuda-home "$tk"; code=$?
  echo "install exit=$code wall=$("$py" -c "print('%.1f s' % ($(date +%s.%N) - $start))")"
  ls -la "$tk/lib64" | head -12
  doctor smoke --library "$tk/lib64/libcudnn.so.9"; echo "smoke installed exit=$?"
  doctor rollback --cuda-home "$tk"; echo "rollback exit=$?"
  find "$tk" | sort
}

{
  gpus=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ')
  echo "== $(git rev-parse --short HEAD 2>/dev/null || echo '?') on ${gpus:-no nvidia-smi}"
  echo "cores $(nproc); $("$py" -VV | head -1); mode $mode"
  case "$mode" in
    all) speed; smoke; bench; install ;;
    *) "$mode" ;;
  esac
} 2>&1 | tee "$out/verify-$mode.txt"
