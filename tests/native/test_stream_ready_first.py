"""While the readiness task runs, the native child holds NVML's tasks: they take the driver lock its cuInit and
contexts queue on (4x H200: cuInit 780-1330 ms beside them, 530-560 ms alone). Other tasks never wait."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cudnn_doctor.native.child as child_module

CHILD_DIR = Path(child_module.__file__).parent

# The child's stream with its ops replaced by ones that say when they ran; the readiness op takes 0.4 s.
SCRIPT = """
import sys, time
sys.path.insert(0, %r)
import child
def timed(seconds):
    def op(task):
        started = time.time()
        time.sleep(seconds)
        return {"started": started, "ended": time.time()}
    return op
child.OPS.update(cuda_ready=timed(0.4), nvml=timed(0), gpu_health=timed(0), cudnn=timed(0))
child.stream(5.0)
""" % str(CHILD_DIR)


def _stream(tasks):
    lines = "".join(json.dumps(dict(task, id=i)) + "\n" for i, task in enumerate(tasks))
    proc = subprocess.run([sys.executable, "-c", SCRIPT], input=lines, capture_output=True, text=True, timeout=30)
    results = {}
    for line in proc.stdout.splitlines():
        event = json.loads(line)
        results[event["task"]] = event["result"]
    return [results[i] for i in range(len(tasks))]


def test_nvml_tasks_that_arrive_while_readiness_runs_start_when_it_ends():
    ready, nvml, health, cudnn = _stream([{"op": "cuda_ready"}, {"op": "nvml"}, {"op": "gpu_health"},
                                          {"op": "cudnn"}])
    assert nvml["started"] >= ready["ended"] and health["started"] >= ready["ended"]
    assert cudnn["started"] < ready["ended"]  # a cuDNN copy's load takes no driver lock: it never waits


def test_without_a_readiness_task_nothing_waits():
    nvml, health = _stream([{"op": "nvml"}, {"op": "gpu_health"}])
    assert abs(nvml["started"] - health["started"]) < 0.3
