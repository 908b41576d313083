"""The readiness task and NVML's tasks never run together in the native child: they take the driver lock its cuInit
and contexts queue on (4x H200: cuInit 780-1330 ms beside them, 530-560 ms alone). NVML tasks arriving while it runs
wait for it; it waits (a bounded time) for NVML tasks already running. Other tasks never wait."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from cudnn_doctor.native.runner import CHILD_SCRIPT

CHILD_DIR = Path(CHILD_SCRIPT).parent  # the child imports its siblings by bare name: run it from there

# The child's stream with its ops replaced by ones that say when they ran (the readiness op takes 0.4 s, NVML's
# ``nvml_s``), and tasks fed to it ``gap`` seconds apart.
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
child.OPS.update(cuda_ready=timed(0.4), nvml=timed(%r), gpu_health=timed(0), cudnn=timed(0))
child._READY_WAITS_FOR_NVML = %r
child.stream(5.0)
"""


def _stream(tasks, nvml_s=0.0, gap=0.0, cap=1.5):
    script = SCRIPT % (str(CHILD_DIR), nvml_s, cap)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for i, task in enumerate(tasks):
        proc.stdin.write(json.dumps(dict(task, id=i)) + "\n")
        proc.stdin.flush()
        time.sleep(gap)
    out, _ = proc.communicate(timeout=30)
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, out)
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


def test_readiness_waits_for_nvml_tasks_already_running():
    nvml, ready = _stream([{"op": "nvml"}, {"op": "cuda_ready"}], nvml_s=0.5, gap=0.1)
    assert ready["started"] >= nvml["ended"]


def test_readiness_waits_for_a_slow_nvml_only_so_long():
    nvml, ready = _stream([{"op": "nvml"}, {"op": "cuda_ready"}], nvml_s=2.0, gap=0.1, cap=0.3)
    assert ready["started"] < nvml["ended"] - 1.0
