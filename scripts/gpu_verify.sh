#!/usr/bin/env bash
# The one GPU verification entry: what only a machine with an NVIDIA GPU can show. Reads the machine; writes only
# under $OUT and /tmp. Needs no network: python3 with the project's dependencies (the lent machine's torch
# environment, /opt/torch/.venv, has them), run from the repository root (e.g. through the device tool).
#
#   bash scripts/gpu_verify.sh speed|smoke|bench|install|fix|all [RUNS]
#
#   speed    `check --json` beside nvidia-smi, RUNS (default 25) interleaved whole processes, medians
#            (benchmarks/check_bench.py), then what each start-up trick saves (benchmarks/startup_tricks.py)
#   smoke    check -v and --json, smoke --all (human and --json), check --smoke, explain and matrix, tests/gpu
#   bench    bench --quick, timed, human and --json
#   install  this checkout installed as a user installs it (pip, no network) and its command run: check, smoke
#            --all, check --smoke; then `install` of the machine's own pip cuDNN repacked as NVIDIA's tarball into
#            a fake toolkit under /tmp, smoke on the installed copy, and rollback
#   fix      `fix` on a hard-linked copy of the machine's torch environment (TORCH_VENV, default /opt/torch/.venv),
#            broken the commonest ways (the system cuDNN's folder first on LD_LIBRARY_PATH; it preloaded): check,
#            fix --dry-run, fix --yes, torch's own convolution through cuDNN in a new shell of the environment, fix
#            --undo --yes, every RECORD and bin/activate compared by hash, and torch again (the failure back)
#   profile  where one `check --json` spends its time: the interpreter's own floor, the imports (-X importtime,
#            the 20 costliest), the report's probe timings, and a cProfile of the main thread (the 30 costliest)
#   all      each of the above but fix and profile, in that order
#
# Output: $OUT/verify-MODE.txt (everything printed) and the JSON reports beside it (check.json, smoke.json,
# bench-quick.json); without $OUT, /tmp/gpu-verify. Each step runs under `timeout`; `all` takes a few minutes.
set -u
mode=${1:-all}
runs=${2:-25}
case "$mode" in speed|smoke|bench|install|fix|profile|all) ;; *)
  echo "usage: bash scripts/gpu_verify.sh speed|smoke|bench|install|fix|profile|all [RUNS]" >&2; exit 2 ;; esac
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

profile() {
  step "the interpreter's floor: python -c pass, python -I -S -c pass, and typer + rich imported (5 runs each, best)"
  for code in "pass" "import typer, rich.console"; do
    "$py" - "$code" <<'PY'
import subprocess, sys, time
best = min((lambda t: (subprocess.run([sys.executable, "-c", sys.argv[1]]), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5))
print("%-28s %.3f s" % (sys.argv[1], best))
PY
  done
  step "imports of one check --json (-X importtime, the 20 costliest by cumulative microseconds)"
  (cd /tmp && "$py" -X importtime -m cudnn_doctor check --json 2>&1 >/dev/null) | sort -t'|' -k2 -n | tail -20
  step "the report's own timings (ms) and the native child's"
  (cd /tmp && "$py" -m cudnn_doctor check --json) | "$py" -c 'import json, sys; d = json.load(sys.stdin)
t = d.get("timings_ms") or d.get("facts", {}).get("timings_ms") or {}
print(" ".join("%s=%.1f" % kv for kv in sorted(t.items(), key=lambda kv: -kv[1])))'
  step "cProfile of the main thread (30 costliest by cumulative time)"
  (cd /tmp && "$py" - <<'PY'
import cProfile, contextlib, io, pstats
profile = cProfile.Profile()
profile.enable()
from cudnn_doctor.cli import main  # with argv given, main returns instead of ending the process early (cli._leave)
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["check", "--json"])
profile.disable()
pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
PY
  ) | grep -A34 "Ordered by"
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

fix() {
  local venv=${TORCH_VENV:-/opt/torch/.venv} copy=/tmp/cudnn-doctor-fix-venv system how
  system=$(ldconfig -p | awk '/libcudnn\.so\.9 /{print $NF; exit}')
  [ -n "$system" ] && [ -d "$venv" ] || { echo "needs $venv and a system libcudnn.so.9"; return; }
  conv='import torch; x = torch.randn(8, 3, 64, 64, device="cuda"); w = torch.randn(16, 3, 3, 3, device="cuda")
torch.backends.cudnn.enabled = True; y = torch.nn.functional.conv2d(x, w); torch.cuda.synchronize()
print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(), "conv", tuple(y.shape))'
  for how in ld_path preload; do
    step "fix, $how: a hard-linked copy of $venv at $copy, the system cuDNN ($system) $how"
    rm -rf "$copy"; cp -al "$venv" "$copy"
    # the copy's own scripts and pyvenv.cfg name the copy (written anew: the original's files stay as they are)
    for f in "$copy"/bin/activate "$copy"/pyvenv.cfg; do sed "s|$venv|$copy|g" "$f" > "$f.new"; mv "$f.new" "$f"; done
    (
      unset LD_PRELOAD LD_LIBRARY_PATH
      if [ "$how" = ld_path ]; then export LD_LIBRARY_PATH=$(dirname "$system"); else export LD_PRELOAD=$system; fi
      export VIRTUAL_ENV=$copy PATH=$copy/bin:$PATH
      hashes() { (cd "$copy" && find . -name RECORD -path '*.dist-info/*' -o -path ./bin/activate | sort | xargs sha256sum); }
      shell() { bash -c ". $copy/bin/activate && python -c '$conv'" 2>&1 | tail -3; echo "torch exit=${PIPESTATUS[0]}"; }
      hashes > /tmp/fix-before.txt
      step "torch in a new shell, before"; shell
      step "check"; doctor check -q; echo "exit=$?"
      step "fix --dry-run"; doctor fix --dry-run; echo "exit=$?"
      step "fix --yes"; doctor fix --yes; echo "exit=$?"
      step "torch in a new shell of the environment, after"; shell
      step "fix --undo --yes"; doctor fix --undo --yes; echo "exit=$?"
      hashes > /tmp/fix-after.txt
      cmp -s /tmp/fix-before.txt /tmp/fix-after.txt && echo "undo exact: $(wc -l < /tmp/fix-after.txt) files by sha256" \
        || diff /tmp/fix-before.txt /tmp/fix-after.txt | head
      step "torch in a new shell, after undo"; shell
    )
  done
  rm -rf "$copy"
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
