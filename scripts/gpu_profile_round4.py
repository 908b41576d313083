"""Where check's and --ready's time goes on a lent GPU machine (issue 31, 33): NVML start, each health read by
function, cuInit with every GPU visible versus one, per-GPU contexts in one process, side-by-side forks, and
check --json's own timings. Reads only; changes no GPU setting.  python3 scripts/gpu_profile_round4.py
"""
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ms(t0):
    return round((time.perf_counter() - t0) * 1000, 2)


def nvml_profile():
    """NVML's start and the health reads by function: benchmarks/nvml_health_profile.py's own wrapper."""
    import pynvml
    t0 = time.perf_counter(); pynvml.nvmlInit(); print("nvmlInit", ms(t0), "ms")
    sys.path.insert(0, os.path.join(REPO, "cudnn_doctor", "native"))
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    import gpu_health
    from nvml_health_profile import Timed
    for _ in range(3):
        timed = Timed(pynvml)
        t0 = time.perf_counter(); gpu_health.node_health(timed); total = ms(t0)
    print("node_health total (3rd run)", total, "ms")
    for name, (n, s) in sorted(timed.spent.items(), key=lambda kv: -kv[1][1]):
        print("  %-45s calls %4d  total %8.2f ms  per call %.3f ms" % (name, n, s * 1000, s * 1000 / n))
    pynvml.nvmlShutdown()


CUDA_SNIPPET = r'''
import ctypes, os, sys, time
t0 = time.perf_counter()
cuda = ctypes.CDLL("libcuda.so.1")
t1 = time.perf_counter(); r = cuda.cuInit(0); t2 = time.perf_counter()
n = ctypes.c_int(); cuda.cuDeviceGetCount(ctypes.byref(n))
ctxs = []
per = []
for i in range(n.value):
    d = ctypes.c_int(); cuda.cuDeviceGet(ctypes.byref(d), i)
    c = ctypes.c_void_p(); t = time.perf_counter(); rc = cuda.cuCtxCreate_v2(ctypes.byref(c), 0, d)
    per.append(round((time.perf_counter() - t) * 1000, 1)); ctxs.append(c)
print("dlopen %.1f ms cuInit %.1f ms (rc %d) devices %d ctxCreate %s ms" % ((t1-t0)*1000, (t2-t1)*1000, r, n.value, per))
'''


def cuda_profile(count):
    env = dict(os.environ)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    for label, extra in (("all GPUs visible", {}), ("CUDA_VISIBLE_DEVICES=0", {"CUDA_VISIBLE_DEVICES": "0"})):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CUDA_SNIPPET], env=dict(env, **extra), capture_output=True,
                             text=True, timeout=60)
        print("  one process, %-24s wall %7.1f ms: %s" % (label, ms(t0), (out.stdout + out.stderr).strip()))
    for label, per_gpu in (("forks side by side, all visible", False), ("forks side by side, one GPU each", True)):
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", CUDA_SNIPPET],
                                  env=dict(env, CUDA_DEVICE_ORDER="PCI_BUS_ID", **({"CUDA_VISIBLE_DEVICES": str(i)}
                                                                                   if per_gpu else {})),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(count)]
        outs = [p.communicate(timeout=60)[0].strip() for p in procs]
        print("  %d %-34s wall %7.1f ms" % (count, label, ms(t0)))
        for o in outs:
            print("     ", o)


def check_profile():
    env = dict(os.environ, PYTHONPATH=REPO, NO_COLOR="1")
    walls = []
    for i in range(7):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--json"], env=env, capture_output=True,
                             text=True, timeout=60, cwd="/tmp")
        walls.append(ms(t0))
    print("check --json walls ms", walls, "median", statistics.median(walls))
    doc = json.loads(out.stdout)
    print("timings_ms", json.dumps(doc.get("timings_ms") or doc.get("facts", {}).get("timings_ms"), indent=None)[:1500])
    for k in ("native", "child_timings_ms"):
        for where in (doc, doc.get("facts", {})):
            if isinstance(where, dict) and k in where:
                print(k, json.dumps(where[k])[:800])
    for flags in (["--ready"],):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--json"] + flags, env=env,
                             capture_output=True, text=True, timeout=60, cwd="/tmp")
        print("check --json", *flags, "wall", ms(t0), "ms")
        doc = json.loads(out.stdout)
        print("  ready:", json.dumps(doc["facts"].get("node", {}).get("ready"))[:1500])
    t0 = time.perf_counter(); subprocess.run(["nvidia-smi"], capture_output=True); print("nvidia-smi wall", ms(t0), "ms")
    t0 = time.perf_counter(); subprocess.run(["nvidia-smi", "-q"], capture_output=True); print("nvidia-smi -q wall", ms(t0), "ms")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-X", "importtime", "-c", "import cudnn_doctor.cli"], env=env, capture_output=True)
    print("python -c pass wall (for scale):"); t0 = time.perf_counter(); subprocess.run([sys.executable, "-c", "pass"]); print("  ", ms(t0), "ms")


if __name__ == "__main__":
    print("== persistence"); subprocess.run("nvidia-smi --query-gpu=index,name,persistence_mode --format=csv", shell=True)
    print("== NVML health reads by function"); nvml_profile()
    import pynvml; pynvml.nvmlInit(); n = pynvml.nvmlDeviceGetCount(); pynvml.nvmlShutdown()
    print("== CUDA start"); cuda_profile(n)
    print("== check"); check_profile()
