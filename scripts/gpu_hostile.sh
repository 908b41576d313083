#!/usr/bin/env bash
# Issue 22 on a GPU machine: the native-call guard (no FIFO/socket/device handed to the child) must not keep real
# libraries from loading; bench --json prints an envelope; text output on an ASCII stream; SIGTERM mid-install
# leaves nothing. Run from the repository root through the device tool; it writes $OUT/hostile.txt.
set -u
out=${OUT:-/tmp/gpu-hostile}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NO_COLOR=1
{
echo "== check --json: real libraries still load through the child (expect no CD002/CD003, GPUs listed)"
python3 -m cudnn_doctor check --json > "$out/check.json"; echo "exit=$?"
python3 - "$out/check.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
facts = doc["facts"]
print("gpus:", [g.get("name") for g in facts["gpus"]])
print("driver:", facts["driver"].get("version"), "cudnn versions:", [c.get("version") for c in facts["cudnn"]])
print("toolkits cudart:", [(t.get("path"), t.get("cudart_version")) for t in facts["toolkits"]])
print("CD002/CD003:", [f["title"] for f in doc["findings"] if f["id"] in ("CD002", "CD003")])
print("blocked:", facts["blocked"])
PY
echo "== a FIFO in a copy of the cuDNN folder: the child is never handed it, the run stays fast"
lib=$(python3 -c "import json; d=json.load(open('$out/check.json')); c=d['facts']['cudnn']; print(c[0]['directory'] if c else '')")
if [ -n "$lib" ]; then
  rm -rf /tmp/fifo-copy; mkdir -p /tmp/fifo-copy; cp -P "$lib"/libcudnn*.so* /tmp/fifo-copy/
  first=$(ls /tmp/fifo-copy | grep -E '^libcudnn\.so\.[0-9]+\.[0-9]' | head -1)
  [ -n "$first" ] && rm -f "/tmp/fifo-copy/$first" && mkfifo "/tmp/fifo-copy/$first"
  /usr/bin/time -f "check with a FIFO on LD_LIBRARY_PATH: %e s" env LD_LIBRARY_PATH=/tmp/fifo-copy \
    python3 -m cudnn_doctor check --json --timeout 10 > "$out/check-fifo.json"; echo "exit=$?"
  python3 -c "import json; d=json.load(open('$out/check-fifo.json')); print([(f['id'], f['title']) for f in d['findings'] if f['id'] in ('CD002','CD003')])"
fi
echo "== bench --json --quick (an envelope), and with a missing library (an envelope with error)"
python3 -m cudnn_doctor bench --json --quick > "$out/bench.json"; echo "exit=$?"
python3 -c "import json; d=json.load(open('$out/bench.json')); print(d['command'], d['exit_code'], d.get('error'))"
python3 -m cudnn_doctor bench --json --library /nonexistent/libcudnn.so.9 | head -5; echo "exit=$?"
echo "== ASCII streams: every mark readable, exit 0/1"
for cmd in "check" "smoke" "bench --quick"; do
  PYTHONIOENCODING=ascii python3 -m cudnn_doctor $cmd > "$out/ascii.txt" 2>&1; code=$?
  echo "$cmd: exit=$code non-ascii-lines=$(grep -cP '[^\x00-\x7F]' "$out/ascii.txt")"; head -8 "$out/ascii.txt"
done
echo "== tests that touch the native guard and signals"
python3 -m pytest -q -p no:cacheprovider tests/probes/test_probe_budget.py tests/install/test_install_signals.py tests/probes/test_deadline.py
echo "exit=$?"
} 2>&1 | tee "$out/hostile.txt"
