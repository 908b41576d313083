#!/usr/bin/env bash
# Issue 34's open question, asked of the real GPU: does cuDNN 9 run a convolution when one of its engine
# sub-libraries is missing beside libcudnn.so.9? Copies the cuDNN wheel's lib folder into /tmp three times (whole,
# without libcudnn_engines_precompiled, without libcudnn_engines_runtime_compiled) and runs `cudnn-doctor smoke
# --library` on each. Reads only; changes no GPU setting and nothing outside /tmp.  bash scripts/gpu_engines_probe.sh
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD NO_COLOR=1
src=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib 2>/dev/null | head -1)
[ -n "$src" ] || src=$(dirname "$(ls /usr/lib/x86_64-linux-gnu/libcudnn.so.9* | head -1)")
echo "cuDNN lib folder: $src"; ls "$src" | grep -E "^libcudnn" | tr '\n' ' '; echo
for variant in whole no_engines_precompiled no_engines_runtime_compiled; do
    dir=/tmp/cudnn-engines/$variant; rm -rf "$dir"; mkdir -p "$dir"; cp -a "$src"/libcudnn* "$dir"/
    case $variant in
        no_engines_precompiled) rm -f "$dir"/libcudnn_engines_precompiled.so* ;;
        no_engines_runtime_compiled) rm -f "$dir"/libcudnn_engines_runtime_compiled.so* ;;
    esac
    lib=$(ls "$dir"/libcudnn.so.9* | head -1)
    echo "== $variant: smoke --library $lib"
    timeout 120 python3 -m cudnn_doctor smoke --library "$lib" --json > /tmp/cudnn-engines/$variant.json 2>&1
    echo "exit=$?"
    python3 - /tmp/cudnn-engines/$variant.json <<'PY'
import json, sys
text = open(sys.argv[1]).read()
try:
    doc = json.loads(text)
except ValueError:
    print(text[-1500:]); raise SystemExit
for r in doc.get("results", [doc]):
    keep = {k: r.get(k) for k in ("library", "version", "ok", "passed", "status", "error", "step", "max_abs_error", "algo", "stage")}
    print(json.dumps({k: v for k, v in keep.items() if v is not None})[:900])
for f in doc.get("findings", [])[:4]:
    print("  finding", f.get("id"), f.get("severity"), (f.get("title") or "")[:200])
PY
done
# Where the engines come from at the convolution: libcudnn_graph's loader dlopens them by name (the oracle in
# tests/realworld/oracle.py models it so); glibc's own trace says which names it tried and who asked.
dir=/tmp/cudnn-engines/whole
echo "== whole, LD_DEBUG=files: the engine sub-libraries' loads"
LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/cudnn-engines/lddebug timeout 120 python3 -m cudnn_doctor smoke --library \
    "$(ls "$dir"/libcudnn.so.9* | head -1)" --json > /dev/null 2>&1
cat /tmp/cudnn-engines/lddebug.* 2>/dev/null | grep -E "file=[^ ]*engines" | sed 's/^ *[0-9]*: *//' | sort -u | head -20

# Issue 34's last open family: a foreign engines file first on LD_LIBRARY_PATH. The wheel's copy (9.19) with the
# system cuDNN's libcudnn_engines_precompiled.so.9 (another 9.x release) alone in a folder on LD_LIBRARY_PATH:
# which engines file does the convolution map, and does it pass?
sys_eng=$(ls /usr/lib/x86_64-linux-gnu/libcudnn_engines_precompiled.so.9* 2>/dev/null | head -1)
if [ -n "$sys_eng" ]; then
    mkdir -p /tmp/cudnn-engines/foreign && cp -L "$sys_eng" /tmp/cudnn-engines/foreign/libcudnn_engines_precompiled.so.9
    echo "== foreign engines first on LD_LIBRARY_PATH ($sys_eng)"
    rm -f /tmp/cudnn-engines/lddebug-f.*
    LD_LIBRARY_PATH=/tmp/cudnn-engines/foreign LD_DEBUG=files LD_DEBUG_OUTPUT=/tmp/cudnn-engines/lddebug-f \
        timeout 120 python3 -m cudnn_doctor smoke --library "$(ls "$dir"/libcudnn.so.9* | head -1)" --json \
        > /tmp/cudnn-engines/foreign.json 2>&1
    echo "exit=$?"; python3 -c "import json,sys; d=json.load(open('/tmp/cudnn-engines/foreign.json')); r=d.get('results',[d])[0]; print({k: r.get(k) for k in ('version','ok','status','error')})" 2>&1 | tail -2
    cat /tmp/cudnn-engines/lddebug-f.* 2>/dev/null | grep -E "file=[^ ]*engines" | sed 's/^ *[0-9]*: *//' | sort -u | head -20
fi
