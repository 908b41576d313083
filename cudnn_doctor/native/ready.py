"""In the native child: prove CUDA runs on one GPU: cuInit, a context, the shipped PTX kernel (ready.ptx) loaded
with cuModuleLoadData, launched, and its result read back and checked. Standard library only.

Each step's CUresult is kept, so "NVML sees the GPU but CUDA does not start on it" is told apart from a pass.
"""
import ctypes
import os
import time

_THREADS = 64
_PTX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ready.ptx")
# cuda.h CUdevice_attribute: COMPUTE_CAPABILITY_MAJOR = 75, COMPUTE_CAPABILITY_MINOR = 76.
_CC_MAJOR, _CC_MINOR = 75, 76


def _ptx(major, minor):
    """The kernel for this GPU: target sm_75 (PTX ISA 6.3) where the GPU has it, else sm_50 (ISA 6.0)."""
    with open(_PTX) as fh:
        text = fh.read()
    version, target = ("6.3", "sm_75") if (major, minor) >= (7, 5) else ("6.0", "sm_50")
    return text.replace("{version}", version).replace("{target}", target).encode() + b"\0"


class _Failed(Exception):
    def __init__(self, step, status):
        Exception.__init__(self, step)
        self.step, self.status = step, status


def op_cuda_ready(task):
    """One GPU, by its PCI bus order index (NVML's numbering): every step's time, the first failing step."""
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)  # the node's readiness covers every GPU the driver has
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # CUDA numbers as NVML does
    mode = getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2)
    cuda = ctypes.CDLL(task["lib"], mode=mode)
    started = time.monotonic()
    res = {"index": task["index"], "ok": False}

    def call(step, name, *args):
        fn = getattr(cuda, name)
        fn.restype = ctypes.c_int
        status = int(fn(*args))
        if status != 0:
            raise _Failed(step, status)

    try:
        call("cuInit", "cuInit", ctypes.c_uint(0))
        res["init_ms"] = round((time.monotonic() - started) * 1000, 1)
        count = ctypes.c_int(0)
        call("cuDeviceGetCount", "cuDeviceGetCount", ctypes.byref(count))
        if task["index"] >= count.value:  # the probe counted device nodes; CUDA has fewer devices
            return {"index": task["index"], "absent": True, "count": count.value}
        device = ctypes.c_int(0)
        call("cuDeviceGet", "cuDeviceGet", ctypes.byref(device), ctypes.c_int(task["index"]))
        bus = ctypes.create_string_buffer(32)
        call("cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId", bus, ctypes.c_int(32), device)
        res["bus_id"] = bus.value.decode("ascii", "replace")
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        call("cuDeviceGetAttribute", "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(_CC_MAJOR), device)
        call("cuDeviceGetAttribute", "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(_CC_MINOR), device)
        ctx = ctypes.c_void_p()
        call("cuCtxCreate", "cuCtxCreate_v2", ctypes.byref(ctx), ctypes.c_uint(0), device)
        module, kernel, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64(0)
        call("cuModuleLoadData", "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(_ptx(major.value,
                                                                                                 minor.value)))
        call("cuModuleGetFunction", "cuModuleGetFunction", ctypes.byref(kernel), module, b"doctor_ready")
        call("cuMemAlloc", "cuMemAlloc_v2", ctypes.byref(out), ctypes.c_size_t(4 * _THREADS))
        arg = ctypes.c_uint64(out.value)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        one = ctypes.c_uint(1)
        call("cuLaunchKernel", "cuLaunchKernel", kernel, one, one, one, ctypes.c_uint(_THREADS), one, one,
             ctypes.c_uint(0), ctypes.c_void_p(), params, ctypes.c_void_p())
        call("cuCtxSynchronize", "cuCtxSynchronize")
        host = (ctypes.c_uint32 * _THREADS)()
        call("cuMemcpyDtoH", "cuMemcpyDtoH_v2", host, ctypes.c_uint64(out.value), ctypes.c_size_t(4 * _THREADS))
        wrong = [i for i in range(_THREADS) if host[i] != i * 3 + 7]
        if wrong:
            res.update(step="result", wrong=len(wrong))
        else:
            res["ok"] = True
        call("cuMemFree", "cuMemFree_v2", ctypes.c_uint64(out.value))
        call("cuCtxDestroy", "cuCtxDestroy_v2", ctx)
    except _Failed as exc:
        res.update(step=exc.step, status=exc.status, error_name=_error_name(cuda, exc.status))
    except AttributeError as exc:  # a libcuda without the call (a stub, a very old driver)
        res.update(step="symbol", error=str(exc))
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
