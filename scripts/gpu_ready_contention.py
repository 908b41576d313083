"""What slows cuInit inside `check --ready` (4 GPUs: 0.55 s alone, 0.65-1.06 s in check): the readiness task run
through the native child's stream alone, then beside each thing check does meanwhile (NVML's tasks, the driver
task, reads of /proc/driver/nvidia, of the GPUs' PCI config space and sysfs link files). Prints the readiness
task's init and node ms per case. Reads only; changes no GPU setting."""
import glob
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cudnn_doctor.host import Host  # noqa: E402
from cudnn_doctor.native import tasks  # noqa: E402

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cudnn_doctor", "native", "child.py")
LIB = "libcuda.so.1"


def ready():
    return tasks.ready_task(LIB, Host("/").listed_gpus())


def stream(items, meanwhile=None):
    """Feed tasks (dicts, or a float: sleep that long) to one child stream; the readiness result."""
    proc = subprocess.Popen([sys.executable, CHILD, "--stream", "20"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    stop = threading.Event()
    if meanwhile:
        threading.Thread(target=meanwhile, args=(stop,), daemon=True).start()
    for i, item in enumerate(items):
        if isinstance(item, float):
            time.sleep(item)
            continue
        proc.stdin.write(json.dumps(dict(item, id=i)) + "\n")
        proc.stdin.flush()
    proc.stdin.close()
    out = proc.stdout.read()
    proc.wait()
    stop.set()
    for line in out.splitlines():
        event = json.loads(line)
        res = event.get("result") or {}
        if isinstance(res, dict) and "gpus" in res and isinstance(res["gpus"], list) and res["gpus"] and \
                "phases_ms" in (res["gpus"][0] or {}):
            gpus = res["gpus"]
            return gpus[0]["phases_ms"].get("init"), round(sum(g.get("ms", 0) for g in gpus), 1)
    return None, None


def reader(paths, size):
    def run(stop):
        while not stop.is_set():
            for p in paths:
                try:
                    with open(p, "rb") as fh:
                        fh.read(size)
                except OSError:
                    pass
    return run


GPU_SYSFS = ["/sys/bus/pci/devices/%s" % a for a, _ in Host("/").listed_gpus()]
CUDNNS = sorted(set(glob.glob("/usr/lib/x86_64-linux-gnu/libcudnn.so.[0-9]") +
                    glob.glob("/opt/torch/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.[0-9]")))
CUDARTS = sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so.[0-9]*"))[:2]


def check_ready():
    """check --ready --json itself: the first GPU's init and the node's ms from its report."""
    done = subprocess.run([sys.executable, "-m", "cudnn_doctor", "check", "--ready", "--json"], capture_output=True,
                          text=True, cwd="/tmp", env=dict(os.environ, PYTHONPATH=os.path.dirname(CHILD) + "/../.."))
    try:
        gpus = json.loads(done.stdout)["facts"]["node"]["ready"]
        gpus = gpus.get("gpus", gpus) if isinstance(gpus, dict) else gpus
        return gpus[0]["phases_ms"].get("init"), round(sum(g.get("ms") or 0 for g in gpus), 1)
    except Exception as exc:  # the report's shape: say so rather than guess
        return None, None
CASES = [
    ("alone", lambda: [ready()], None),
    ("nvml running first", lambda: [{"op": "nvml", "lib": None}, {"op": "gpu_health", "lib": None}, 0.05, ready()],
     None),
    ("driver task beside", lambda: [{"op": "cuda_driver", "lib": LIB}, ready()], None),
    ("/proc/driver/nvidia reads", lambda: [ready()],
     reader(glob.glob("/proc/driver/nvidia/gpus/*/information") + ["/proc/driver/nvidia/version"], 4096)),
    ("GPU PCI config reads", lambda: [ready()], reader([p + "/config" for p in GPU_SYSFS], 4096)),
    ("cudnn + cudart loads beside", lambda: [ready()] + [{"op": "cudnn", "lib": c} for c in CUDNNS] +
     [{"op": "cudart", "lib": c} for c in CUDARTS], None),
    ("GPU sysfs link reads", lambda: [ready()],
     reader([p + "/" + f for p in GPU_SYSFS for f in ("current_link_speed", "current_link_width",
                                                      "max_link_speed", "max_link_width")], 64)),
]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print("GPUs: %d; %d rounds each; init = the readiness cuInit ms, node = the sum of every GPU's ms" % (
        len(GPU_SYSFS), rounds))
    results = {name: [] for name, _, _ in CASES}
    results["check --ready"] = []
    for _ in range(rounds):
        for name, items, meanwhile in CASES:
            results[name].append(stream(items(), meanwhile))
        results["check --ready"].append(check_ready())
    for name, rows in results.items():
        inits = [r[0] for r in rows if r[0] is not None]
        nodes = [r[1] for r in rows if r[1] is not None]
        print("%-28s init median %7.1f  [%s]   node median %7.1f" % (
            name, statistics.median(inits) if inits else -1, ", ".join("%.0f" % i for i in inits),
            statistics.median(nodes) if nodes else -1))


if __name__ == "__main__":
    main()
