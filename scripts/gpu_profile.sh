#!/usr/bin/env bash
# On the GPU machine: where `check` spends its wall time there (issue 12). Prints, and writes $OUT/profile.txt:
# interpreter and import costs, the native calls one by one, -X importtime and cProfile of `check --json`.
set -u
out=${OUT:-/tmp}
export NO_COLOR=1 PYTHONUNBUFFERED=1
site=/tmp/cd-site
rm -rf "$site"
python3 -m pip install -q --no-deps --no-build-isolation --target "$site" . || exit 1
export PYTHONPATH=$site PATH=$site/bin:$PATH
{
echo "== whole processes (median of 7, ms)"
python3 - <<'PY'
import statistics, subprocess, time, sys
cmds = [["python3", "-c", "pass"], ["python3", "-S", "-c", "pass"], ["python3", "-I", "-S", "-c", "pass"],
        ["python3", "-c", "import typer"], ["python3", "-c", "import rich.console"], ["python3", "-c", "import packaging.specifiers"],
        ["python3", "-S", "-c", "import pynvml"], ["python3", "-c", "import cudnn_doctor.cli"],
        ["cudnn-doctor", "--version"], ["cudnn-doctor", "check", "--json"], ["cudnn-doctor", "check"],
        ["nvidia-smi"]]
times = {i: [] for i in range(len(cmds))}
for _ in range(7):
    for i, c in enumerate(cmds):
        t = time.perf_counter(); subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); times[i].append(time.perf_counter() - t)
for i, c in enumerate(cmds):
    print("%8.1f  %s" % (statistics.median(times[i]) * 1000, " ".join(c)))
PY
echo "== native calls in one process, ms"
python3 -S - <<'PY'
import ctypes, glob, os, time
t0 = time.perf_counter()
def lap(label):
    global t0
    t = time.perf_counter(); print("%8.1f  %s" % ((t - t0) * 1000, label)); t0 = t
nv = ctypes.CDLL("libnvidia-ml.so.1"); lap("dlopen libnvidia-ml.so.1")
import pynvml; lap("import pynvml")
pynvml.nvmlLib = nv
pynvml.nvmlInit(); lap("nvmlInit")
pynvml.nvmlSystemGetDriverVersion(); lap("driver version")
h = pynvml.nvmlDeviceGetHandleByIndex(0); lap("handle 0")
for name in ("Name", "UUID", "CudaComputeCapability", "MemoryInfo", "MigMode", "ComputeMode", "ComputeRunningProcesses"):
    getattr(pynvml, "nvmlDeviceGet" + name)(h); lap("nvmlDeviceGet" + name)
pynvml.nvmlShutdown(); lap("nvmlShutdown")
cu = ctypes.CDLL("libcuda.so.1"); lap("dlopen libcuda.so.1")
v = ctypes.c_int(); cu.cuDriverGetVersion(ctypes.byref(v)); lap("cuDriverGetVersion")
libs = sorted(set(glob.glob("/usr/lib/x86_64-linux-gnu/libcudnn.so.9*") + glob.glob("/opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9*")))
for p in libs:
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter(); l = ctypes.CDLL(p); lap("dlopen " + p); l.cudnnGetVersion(); lap("cudnnGetVersion"); os._exit(0)
    os.waitpid(pid, 0)
for p in sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so.*"))[:3]:
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter(); ctypes.CDLL(p); lap("dlopen " + p); os._exit(0)
    os.waitpid(pid, 0)
PY
echo "== check --json: the report's own timings"
cudnn-doctor check --json | python3 -c "import json,sys; d=json.load(sys.stdin); t=d.get('facts',d).get('timings_ms') or d.get('timings_ms'); print(sorted(t.items(), key=lambda kv:-kv[1]) if t else list(d))"
echo "== -X importtime, check --json (top 30 by cumulative us)"
python3 -X importtime -m cudnn_doctor check --json 2>&1 >/dev/null | grep 'import time:' | sort -t'|' -k2 -n | tail -30
echo "== native child's own import"
python3 -S -X importtime $site/cudnn_doctor/native/child.py --stream 5 </dev/null 2>&1 | sort -t'|' -k2 -n | tail -5
echo "== cProfile, check --json"
python3 -c "import cProfile,pstats,sys,runpy; sys.argv=['cudnn-doctor','check','--json']; pr=cProfile.Profile(); pr.enable()
try: runpy.run_module('cudnn_doctor', run_name='__main__')
except SystemExit: pass
pr.disable(); sys.stdout=sys.stderr; s=pstats.Stats(pr); s.sort_stats('cumulative').print_stats(45); s.sort_stats('tottime').print_stats(20)" 2>&1 >/dev/null | grep -v '^$' | cut -c1-150
if command -v strace >/dev/null; then
  echo "== strace timeline (processes)"
  strace -f -ttt -e trace=execve,clone,clone3,exit_group,wait4 -o /tmp/st cudnn-doctor check --json >/dev/null 2>&1
  head -c 6000 /tmp/st; echo; tail -c 2500 /tmp/st
fi
} 2>&1 | tee "$out/profile.txt"
