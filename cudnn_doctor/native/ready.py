"""In the native child: prove CUDA runs on one GPU: cuInit with only that GPU visible, its primary context, the
shipped PTX kernel (ready.ptx) loaded with cuModuleLoadData, launched, and its result read back and checked.
Standard library only.

Each step's CUresult is kept, so "NVML sees the GPU but CUDA does not start on it" is told apart from a pass.
"""
import ctypes
import os
import time

_THREADS = 64
_PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready.ptx")
# cuda.h CUdevice_attribute: COMPUTE_CAPABILITY_MAJOR = 75, COMPUTE_CAPABILITY_MINOR = 76.
_CC_MAJOR, _CC_MINOR = 75, 76
_NO_DEVICE = 100  # cuda.h CUDA_ERROR_NO_DEVICE: CUDA lists no GPU (here: not the one made visible)


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
    """One GPU: ``uuid`` (or ``index`` in PCI bus order) made the only GPU CUDA sees, so cuInit and the context pay
    for one GPU, not every GPU of the node; ``bus_id``, where given, is checked against the GPU CUDA then opens.
    Runs in a fork of its own (session.py's stream): CUDA reads its environment once, at the process's cuInit.
    ``loaded``: called with the library once it is loaded."""
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # an index numbers the GPUs as NVML does
    os.environ["CUDA_VISIBLE_DEVICES"] = task.get("uuid") or str(task["index"])
    started = time.monotonic()
    res = {"index": task["index"], "ok": False, "phases_ms": {}}
    cuda = ctypes.CDLL(task["lib"], mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    if loaded is not None:  # a speculative task says which libcuda it loaded, before cuInit may hang
        loaded(cuda)

    def phase(name):
        res["phases_ms"][name] = round((time.monotonic() - started) * 1000 - sum(res["phases_ms"].values()), 1)

    def call(step, name, *args):
        fn = getattr(cuda, name)
        fn.restype = ctypes.c_int
        status = int(fn(*args))
        if status != 0:
            raise _Failed(step, status)

    phase("load")
    try:
        call("cuInit", "cuInit", ctypes.c_uint(0))  # CUDA_ERROR_NO_DEVICE: CUDA does not list the GPU made visible
        phase("init")
        count = ctypes.c_int(0)
        call("cuDeviceGetCount", "cuDeviceGetCount", ctypes.byref(count))
        if count.value < 1:
            raise _Failed("cuDeviceGetCount", _NO_DEVICE)
        device = ctypes.c_int(0)
        call("cuDeviceGet", "cuDeviceGet", ctypes.byref(device), ctypes.c_int(0))
        bus = ctypes.create_string_buffer(32)
        call("cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId", bus, ctypes.c_int(32), device)
        res["bus_id"] = _bus(bus.value.decode("ascii", "replace"))
        if task.get("bus_id") and res["bus_id"] != task["bus_id"]:  # the kernel would prove another GPU (a CUDA
            # started before this task, which kept its own visibility, or a UUID that names another GPU)
            res.update(step="cuDeviceGetPCIBusId", error="CUDA opened the GPU at %s" % res["bus_id"],
                       bus_id=task["bus_id"])
            return _done(res, started)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        call("cuDeviceGetAttribute", "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(_CC_MAJOR), device)
        call("cuDeviceGetAttribute", "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(_CC_MINOR), device)
        # The primary context: the one the runtime API (and so every framework) uses.
        ctx = ctypes.c_void_p()
        call("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), device)
        call("cuCtxSetCurrent", "cuCtxSetCurrent", ctx)
        phase("context")
        module, kernel, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64(0)
        call("cuModuleLoadData", "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(_ptx(major.value,
                                                                                                 minor.value)))
        call("cuModuleGetFunction", "cuModuleGetFunction", ctypes.byref(kernel), module, b"doctor_ready")
        phase("module")
        call("cuMemAlloc", "cuMemAlloc_v2", ctypes.byref(out), ctypes.c_size_t(4 * _THREADS))
        arg = ctypes.c_uint64(out.value)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        one = ctypes.c_uint(1)
        call("cuLaunchKernel", "cuLaunchKernel", kernel, one, one, one, ctypes.c_uint(_THREADS), one, one,
             ctypes.c_uint(0), ctypes.c_void_p(), params, ctypes.c_void_p())
        host = (ctypes.c_uint32 * _THREADS)()
        # A synchronous copy on the null stream waits for the kernel and returns the error a faulting kernel left,
        # so no cuCtxSynchronize is needed; nothing is freed: the fork exits next and the driver frees it all.
        call("cuMemcpyDtoH", "cuMemcpyDtoH_v2", host, ctypes.c_uint64(out.value), ctypes.c_size_t(4 * _THREADS))
        phase("kernel")
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
