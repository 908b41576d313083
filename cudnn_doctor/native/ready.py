"""In the native child: prove CUDA runs on every GPU of the node: cuInit, each GPU's primary context, the shipped
PTX kernel (ready.ptx) loaded with cuModuleLoadData, launched, and its result read back and checked.
Standard library only.

Each step's CUresult is kept, so "NVML sees the GPU but CUDA does not start on it" is told apart from a pass.

One process proves the GPUs one after another after a single cuInit: the driver serialises initialisation and
context creation across processes and threads alike, so forks side by side only queue on its lock (4x H200: 1.5-2.2 s
in four forks, 0.85 s in one process; git show 44f09e4:scripts/gpu_ready_variants.py). A GPU that process cannot
reach (cuInit fails, CUDA does not list it, the process hangs or dies) is then proven alone, in a fork that sees only
that GPU.
"""
import ctypes
import json
import os
import select
import signal
import time

_THREADS = 64
_PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready.ptx")
# cuda.h CUdevice_attribute: COMPUTE_CAPABILITY_MAJOR = 75, COMPUTE_CAPABILITY_MINOR = 76.
_CC_MAJOR, _CC_MINOR = 75, 76
_NO_DEVICE = 100  # cuda.h CUDA_ERROR_NO_DEVICE: CUDA lists no GPU (here: not the one made visible)
# One hardware queue per context instead of eight: the test uses the null stream only, and the context is made
# about 60 ms a GPU faster (4x H200: 56-93 ms against 126-170 ms).
_CONNECTIONS = "1"


def _ptx(major, minor):
    """The kernel for this GPU: target sm_75 (PTX ISA 6.3) where the GPU has it, else sm_50 (ISA 6.0)."""
    with open(_PTX) as fh:
        text = fh.read()
    version, target = ("6.3", "sm_75") if (major, minor) >= (7, 5) else ("6.0", "sm_50")
    return text.replace("{version}", version).replace("{target}", target).encode() + b"\0"


def _bus(value):
    """A PCI address as sysfs spells it ("0000:18:00.0") from CUDA's ("00000000:18:00.0")."""
    return value[-12:].lower() if value and len(value) >= 12 else value


class _Failed(Exception):
    def __init__(self, step, status):
        Exception.__init__(self, step)
        self.step, self.status = step, status


def op_cuda_ready(task, loaded=None):
    """Every GPU of ``gpus`` (each ``{"index", "bus_id", "uuid"}``, in PCI bus order): ``{"gpus": [result, ...]}``
    in the same order. ``limit``: seconds the whole task may take (the stream's limit); the shared process must
    answer each GPU within a third of it. ``loaded``: called with the library once it is loaded."""
    gpus, limit = task["gpus"], float(task.get("limit") or 5.0)
    started = time.monotonic()
    if not hasattr(os, "fork"):  # Windows: no watchdog here; the parent's limit covers the child
        results = {}

        def keep(line):
            if "gpu" in line:
                results[line["gpu"]["position"]] = line["gpu"]["result"]

        _together(task["lib"], gpus, keep, loaded)
        return {"gpus": [results.get(i) or _alone(task["lib"], gpu, loaded) for i, gpu in enumerate(gpus)]}
    results = _watch(task["lib"], gpus, limit / 3.0, loaded)
    left = [i for i in range(len(gpus)) if i not in results]
    if left:  # side by side, each seeing only its GPU, in what is left of the limit
        alone = _forked([lambda gpu=gpus[i]: _alone(task["lib"], gpu, loaded) for i in left],
                        max(limit - (time.monotonic() - started) - 0.2, 0.3))
        results.update(zip(left, alone))
    return {"gpus": [results[i] for i in range(len(gpus))]}


def _watch(lib, gpus, step, loaded):
    """Run _together in a fork; every GPU's result must come within ``step`` seconds of the one before (the first
    pays for cuInit too). Returns {position: result}: the GPU it hung or died on counts as failed; a GPU it never
    reached, or every GPU when cuInit failed, is left out (the caller proves it alone)."""
    results, current = {}, None
    pid, read = _fork(lambda write: _together(lib, gpus, lambda line: _write(write, line), loaded))
    buf, last, status = b"", time.monotonic(), None
    while True:
        ready, _, _ = select.select([read], [], [], max(last + step - time.monotonic(), 0))
        if not ready:  # a hang: the GPU it is on failed; the others are proven alone
            os.kill(pid, signal.SIGKILL)
            status = {"timeout": round(step, 2)}
            break
        chunk = os.read(read, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            event = json.loads(line)
            if "at" in event:
                current = event["at"]
            elif "gpu" in event:
                position = event["gpu"]["position"]
                results[position] = event["gpu"]["result"]
                current = None
            last = time.monotonic()
    os.close(read)
    _, code = os.waitpid(pid, 0)
    if status is None and code != 0 and current is not None:
        status = _exit_reason(code)
    if current is not None and status is not None:
        results[current] = dict(status, index=gpus[current]["index"])
    return results


def _fork(work):
    """``work(fd)`` in a fork that exits when it returns (status 1 if it raised); (pid, the read end of fd)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover  (runs in the fork)
        os.close(read)
        code = 0
        try:
            work(write)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write)
    return pid, read


def _write(fd, line):
    data = (json.dumps(line) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]


def _exit_reason(code):
    if os.WIFSIGNALED(code):
        try:
            return {"crashed": signal.Signals(os.WTERMSIG(code)).name}
        except ValueError:
            return {"crashed": "signal %d" % os.WTERMSIG(code)}
    return {"crashed": "exit status %d" % os.WEXITSTATUS(code)}


def _together(lib, gpus, emit, loaded):
    """In one process: cuInit with every GPU visible, then each GPU of ``gpus`` found by its bus id (else by its
    place in PCI bus order) proven in turn. ``emit``: {"at": position} before a GPU, {"gpu": {...}} after it. A GPU
    CUDA does not list, or every GPU when cuInit fails, is not emitted (the caller proves it alone)."""
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # this process tests the node's GPUs, not a job's share
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # an index numbers the GPUs as NVML does
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = _CONNECTIONS
    started = time.monotonic()
    cuda = ctypes.CDLL(lib, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    if loaded is not None:
        loaded(cuda)
    load_ms = (time.monotonic() - started) * 1000
    if _status(cuda, "cuInit", ctypes.c_uint(0)) != 0:
        return
    init_ms = (time.monotonic() - started) * 1000 - load_ms
    count = ctypes.c_int(0)
    if _status(cuda, "cuDeviceGetCount", ctypes.byref(count)) != 0:
        return
    ordinals = {}
    for ordinal in range(count.value):
        device, bus = ctypes.c_int(0), ctypes.create_string_buffer(32)
        if (_status(cuda, "cuDeviceGet", ctypes.byref(device), ctypes.c_int(ordinal)) == 0 and
                _status(cuda, "cuDeviceGetPCIBusId", bus, ctypes.c_int(32), device) == 0):
            ordinals[_bus(bus.value.decode("ascii", "replace"))] = ordinal
    first = True
    for position, gpu in enumerate(gpus):
        ordinal = ordinals.get(gpu["bus_id"]) if gpu.get("bus_id") else (
            gpu["index"] if gpu["index"] < count.value else None)
        if ordinal is None:
            continue
        emit({"at": position})
        res = {"index": gpu["index"], "ok": False, "phases_ms": {}}
        if first:  # the GPU proven first carries the node's load and cuInit
            res["phases_ms"].update(load=round(load_ms, 1), init=round(init_ms, 1))
        res = _prove(cuda, ordinal, gpu, res, started if first else time.monotonic())  # the first counts enumeration too
        first = False
        emit({"gpu": {"position": position, "result": res}})


def _status(cuda, name, *args):
    try:
        fn = getattr(cuda, name)
    except AttributeError:
        return -1
    fn.restype = ctypes.c_int
    return int(fn(*args))


def _alone(lib, gpu, loaded=None):
    """One GPU in a process of its own: ``uuid`` (or ``index`` in PCI bus order) made the only GPU CUDA sees, so
    cuInit pays for that GPU only and a fault elsewhere cannot stop it; ``bus_id``, where given, is checked
    against the GPU CUDA then opens. CUDA reads its environment once, at the process's cuInit."""
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu.get("uuid") or str(gpu["index"])
    started = time.monotonic()
    res = {"index": gpu["index"], "ok": False, "phases_ms": {}, "alone": True}
    try:
        cuda = ctypes.CDLL(lib, mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    except OSError as exc:
        res.update(step="load", error=str(exc))
        return _done(res, started)
    if loaded is not None:  # a speculative task says which libcuda it loaded, before cuInit may hang
        loaded(cuda)
    _phase(res, started, "load")
    try:
        _call(cuda, "cuInit", ctypes.c_uint(0))  # CUDA_ERROR_NO_DEVICE: CUDA does not list the GPU made visible
        _phase(res, started, "init")
        count = ctypes.c_int(0)
        _call(cuda, "cuDeviceGetCount", ctypes.byref(count))
        if count.value < 1:
            raise _Failed("cuDeviceGetCount", _NO_DEVICE)
    except _Failed as exc:
        res.update(step=exc.step, status=exc.status, error_name=_error_name(cuda, exc.status))
        return _done(res, started)
    except AttributeError as exc:  # a libcuda without the call (a stub, a very old driver)
        res.update(step="symbol", error=str(exc))
        return _done(res, started)
    return _prove(cuda, 0, gpu, res, started)


def _phase(res, started, name):
    res["phases_ms"][name] = round((time.monotonic() - started) * 1000 - sum(res["phases_ms"].values()), 1)


def _call(cuda, step, *args, **kw):
    fn = getattr(cuda, kw.get("name", step))
    fn.restype = ctypes.c_int
    status = int(fn(*args))
    if status != 0:
        raise _Failed(step, status)


def _prove(cuda, ordinal, gpu, res, started):
    """Device ``ordinal`` of an initialised driver: its bus id checked, its primary context, the kernel run and its
    64 results checked; ``res`` filled in and returned."""
    try:
        device = ctypes.c_int(0)
        _call(cuda, "cuDeviceGet", ctypes.byref(device), ctypes.c_int(ordinal))
        bus = ctypes.create_string_buffer(32)
        _call(cuda, "cuDeviceGetPCIBusId", bus, ctypes.c_int(32), device)
        res["bus_id"] = _bus(bus.value.decode("ascii", "replace"))
        if gpu.get("bus_id") and res["bus_id"] != gpu["bus_id"]:  # the kernel would prove another GPU (a CUDA
            # started before this task, which kept its own visibility, or a UUID that names another GPU)
            res.update(step="cuDeviceGetPCIBusId", error="CUDA opened the GPU at %s" % res["bus_id"],
                       bus_id=gpu["bus_id"])
            return _done(res, started)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        _call(cuda, "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(_CC_MAJOR), device)
        _call(cuda, "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(_CC_MINOR), device)
        # The primary context: the one the runtime API (and so every framework) uses.
        ctx = ctypes.c_void_p()
        _call(cuda, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), device)
        _call(cuda, "cuCtxSetCurrent", ctx)
        _phase(res, started, "context")
        module, kernel, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64(0)
        _call(cuda, "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(_ptx(major.value, minor.value)))
        _call(cuda, "cuModuleGetFunction", ctypes.byref(kernel), module, b"doctor_ready")
        _phase(res, started, "module")
        _call(cuda, "cuMemAlloc", ctypes.byref(out), ctypes.c_size_t(4 * _THREADS), name="cuMemAlloc_v2")
        arg = ctypes.c_uint64(out.value)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        one = ctypes.c_uint(1)
        _call(cuda, "cuLaunchKernel", kernel, one, one, one, ctypes.c_uint(_THREADS), one, one,
              ctypes.c_uint(0), ctypes.c_void_p(), params, ctypes.c_void_p())
        host = (ctypes.c_uint32 * _THREADS)()
        # A synchronous copy on the null stream waits for the kernel and returns the error a faulting kernel left,
        # so no cuCtxSynchronize is needed; nothing is freed: the process exits soon and the driver frees it all.
        _call(cuda, "cuMemcpyDtoH", host, ctypes.c_uint64(out.value), ctypes.c_size_t(4 * _THREADS),
              name="cuMemcpyDtoH_v2")
        _phase(res, started, "kernel")
        wrong = [i for i in range(_THREADS) if host[i] != i * 3 + 7]
        if wrong:
            res.update(step="result", wrong=len(wrong))
        else:
            res["ok"] = True
    except _Failed as exc:
        res.update(step=exc.step, status=exc.status, error_name=_error_name(cuda, exc.status))
    except AttributeError as exc:  # a libcuda without the call (a stub, a very old driver)
        res.update(step="symbol", error=str(exc))
    return _done(res, started)


def _forked(jobs, limit):
    """Each job in a fork of its own, side by side; its JSON result, or {"timeout"}/{"crashed"} past ``limit``."""
    running = {}
    for position, job in enumerate(jobs):
        pid, read = _fork(lambda write, job=job: _write(write, job()))
        running[pid] = (position, read)
    results = [None] * len(jobs)
    deadline = time.monotonic() + limit
    for pid, (position, read) in running.items():
        data = b""
        while True:
            ready, _, _ = select.select([read], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                results[position] = {"timeout": round(limit, 2)}
                break
            chunk = os.read(read, 65536)
            if not chunk:
                break
            data += chunk
        os.close(read)
        _, code = os.waitpid(pid, 0)
        if results[position] is None:
            results[position] = json.loads(data) if data.endswith(b"\n") and code == 0 else _exit_reason(code)
    return results


def _done(res, started):
    res["ms"] = round((time.monotonic() - started) * 1000, 1)
    return res


def _error_name(cuda, status):
    try:
        fn = cuda.cuGetErrorName
        fn.restype = ctypes.c_int
        name = ctypes.c_char_p()
        if fn(ctypes.c_int(status), ctypes.byref(name)) == 0 and name.value:
            return name.value.decode("ascii", "replace")
    except AttributeError:
        pass
    return None
