"""Child process that makes the native calls (dlopen, NVML) so a crash or hang cannot take the doctor down.

It reads a JSON list of tasks on stdin and writes one JSON line per event on stdout:
``{"task": i, "state": "start"}`` before a task and ``{"task": i, "result": {...}}`` after it.
The parent knows which task was running if this process dies. With ``--stream SECONDS`` (one child
for a whole `check` run, native/session.py) tasks arrive one per line and each runs in its own fork.
Standard library plus pynvml only, so it can run as a plain script under any interpreter; its siblings (child_load,
child_nvml, gpu_health, ready) are imported by bare name, never through the package.
"""
import ctypes
import json
import os
import selectors
import signal
import sys
import time

from child_load import NOTES, int_call, load, note_loaded, out_int_call
from child_nvml import op_gpu_health, op_nvml
from ready import op_cuda_ready as ready


def _emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def op_cudnn(task):
    lib = load(task["lib"])
    res = {"loaded": True}
    try:
        res["version"] = int_call(lib, "cudnnGetVersion")
    except AttributeError:
        res["version_error"] = "cudnnGetVersion not exported"
    try:
        res["cudart_version"] = int_call(lib, "cudnnGetCudartVersion")
    except AttributeError:
        res["cudart_version_error"] = "cudnnGetCudartVersion not exported"
    return res


def op_cudart(task):
    lib = load(task["lib"])
    rc, value = out_int_call(lib, "cudaRuntimeGetVersion")
    return {"loaded": True, "status": rc, "version": value}


def op_cuda_driver(task):
    lib = load(task["lib"])
    note_loaded(task, lib)
    rc, value = out_int_call(lib, "cuDriverGetVersion")
    res = {"loaded": True, "status": rc, "version": value}
    if task.get("init"):
        fn = lib.cuInit
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_uint]
        res["init_status"] = int(fn(0))
    return res


def op_cuda_ready(task):
    return ready(task, lambda lib: note_loaded(task, lib))


OPS = {"cudnn": op_cudnn, "cudart": op_cudart, "cuda_driver": op_cuda_driver, "nvml": op_nvml,
       "gpu_health": op_gpu_health, "cuda_ready": op_cuda_ready}


def _run(index, task):
    _emit({"task": index, "state": "start"})
    try:
        result = OPS[task["op"]](task)
    except OSError as exc:  # dlopen failure: the loader's own message
        result = {"loaded": False, "error": str(exc)}
    except Exception as exc:
        result = {"error": "%s: %s" % (type(exc).__name__, exc)}
    _emit({"task": index, "result": result})


def _worker(index, task, out_fd):
    """In a forked copy of this process: run one task, write its result line to ``out_fd``, exit."""
    code = 0
    NOTES.append((index, out_fd))
    try:
        try:
            result = OPS[task["op"]](task)
        except OSError as exc:
            result = {"loaded": False, "error": str(exc)}
        except BaseException as exc:
            result = {"error": "%s: %s" % (type(exc).__name__, exc)}
        data = (json.dumps({"task": index, "result": result}) + "\n").encode()
        while data:
            data = data[os.write(out_fd, data):]
    except BaseException:
        code = 1
    os._exit(code)


def _exit_reason(status):
    if os.WIFSIGNALED(status):
        try:
            return {"crashed": signal.Signals(os.WTERMSIG(status)).name}
        except ValueError:
            return {"crashed": "signal %d" % os.WTERMSIG(status)}
    return {"crashed": "exit status %d" % os.WEXITSTATUS(status)}


# NVML's start and reads take the driver's lock that cuInit and context creation queue on: while the readiness
# task runs they wait (4x H200: its cuInit took 780-1330 ms beside them, 530-560 ms alone).
_AFTER_READY = ("nvml", "gpu_health")
# The readiness task waits this long at most for NVML tasks already running: nvmlInit and cuInit take the driver's
# lock in turn, so a cuInit beside nvmlInit on 4 GPUs took 1.0 s instead of 0.55 s.
_READY_WAITS_FOR_NVML = 1.5


def stream(task_timeout):
    """Tasks arrive one JSON line each on stdin (with the parent's "id"); each runs at once in its own fork.

    All tasks run side by side (NVML's slow init overlaps every cuDNN copy's load), each copy gets a fresh
    link map (no sub-library of one cuDNN copy is reused by the next), and a crash or hang ends only that
    task: a worker past ``task_timeout`` is killed and reported as ``{"timeout": s}``. The readiness task starts
    once the NVML tasks already running have ended (at most _READY_WAITS_FOR_NVML later), and NVML tasks that
    arrive meanwhile or while it runs start when it ends (_AFTER_READY): the two never queue on the driver together.
    """
    sel = selectors.DefaultSelector()
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    sel.register(stdin, selectors.EVENT_READ, None)
    workers = {}  # pid -> [task id, read fd, started, buffer, output ended]
    pending = b""
    reading = True
    ready_pids, held = set(), []  # the readiness task's worker; (task id, task) waiting for it to end
    nvml_pids, waiting = set(), []  # NVML tasks' workers; (task id, task, arrived) readiness waiting for them

    def start(index, task):
        task.setdefault("limit", task_timeout)  # a task that works in steps budgets them within it
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            _worker(index, task, wfd)
        os.close(wfd)
        workers[pid] = [index, rfd, time.monotonic(), b"", False]
        sel.register(rfd, selectors.EVENT_READ, pid)
        if task.get("op") == "cuda_ready":
            ready_pids.add(pid)
        elif task.get("op") in _AFTER_READY:
            nvml_pids.add(pid)

    while reading or workers or held or waiting:
        if waiting and (not nvml_pids or time.monotonic() - waiting[0][2] > _READY_WAITS_FOR_NVML):
            for index, task, _ in waiting:
                start(index, task)
            del waiting[:]
        if held and not ready_pids and not waiting:
            for index, task in held:
                start(index, task)
            del held[:]
        for key, _ in sel.select(timeout=0.02):
            if key.data is None:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    reading = False
                    continue
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if not line.strip():
                        continue
                    task = json.loads(line)
                    index = task.pop("id")
                    if (ready_pids or waiting) and task.get("op") in _AFTER_READY:
                        held.append((index, task))
                    elif task.get("op") == "cuda_ready" and nvml_pids:
                        waiting.append((index, task, time.monotonic()))
                    else:
                        start(index, task)
            else:
                entry = workers.get(key.data)
                chunk = os.read(key.fd, 65536)
                if entry is not None and chunk:
                    entry[3] += chunk
                else:
                    sel.unregister(key.fd)  # the worker closed its end (it exited); reaped below
                    if entry is not None:
                        entry[4] = True
        now = time.monotonic()
        for pid, entry in list(workers.items()):
            index, rfd, started, buf, ended = entry
            # Its output ended only when it called _exit (no task forks a holder of its pipe): wait for it now
            # rather than find it on the next round, up to the select's timeout later.
            done, status = os.waitpid(pid, 0 if ended else os.WNOHANG)
            if done == 0 and now - started <= task_timeout:
                continue
            if done == 0:  # overran: kill it and whatever it started
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                result = {"timeout": task_timeout}
            else:
                try:
                    while True:  # whatever is left in the pipe
                        more = os.read(rfd, 65536)
                        if not more:
                            break
                        buf += more
                except OSError:
                    pass
                result = None if buf.endswith(b"\n") and status == 0 else _exit_reason(status)
            try:
                sel.unregister(rfd)
            except (KeyError, ValueError):
                pass
            os.close(rfd)
            del workers[pid]
            ready_pids.discard(pid)
            nvml_pids.discard(pid)
            if result is None:
                sys.stdout.buffer.write(buf)
            else:  # its speculative note (which file it loaded) still counts; a half-written result does not
                for line in buf.split(b"\n"):
                    if line.startswith(b'{"task": %d, "loaded_from": ' % index) and line.endswith(b"}"):
                        sys.stdout.buffer.write(line + b"\n")
                sys.stdout.buffer.write((json.dumps({"task": index, "result": result}) + "\n").encode())
            sys.stdout.buffer.flush()


def main():
    if sys.argv[1:2] == ["--stream"]:
        if hasattr(os, "fork"):
            stream(float(sys.argv[2]) if len(sys.argv) > 2 else 5.0)
        else:  # no fork (Windows): one task after another in this process; the parent restarts it on a crash
            for line in sys.stdin:
                if line.strip():
                    task = json.loads(line)
                    _run(task.pop("id"), task)
        return
    tasks = json.loads(sys.stdin.read() or "[]")
    for index, task in enumerate(tasks):
        _run(index, task)


if __name__ == "__main__":
    main()
