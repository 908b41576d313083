"""Child process that makes the native calls (dlopen, NVML) so a crash or hang cannot take the doctor down.

It reads a JSON list of tasks on stdin and writes one JSON line per event on stdout:
``{"task": i, "state": "start"}`` before a task and ``{"task": i, "result": {...}}`` after it.
The parent knows which task was running if this process dies. Standard library plus pynvml only,
so it can run as a plain script under any interpreter.
"""
import ctypes
import json
import os
import sys


def _emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _load(path):
    mode = getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2)
    return ctypes.CDLL(path, mode=mode)


def _int_call(lib, name, restype=ctypes.c_size_t):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = []
    return int(fn())


def _out_int_call(lib, name):
    """Call ``int name(int *out)`` and return (status, value)."""
    fn = getattr(lib, name)
    fn.restype = ctypes.c_int
    out = ctypes.c_int(0)
    fn.argtypes = [ctypes.POINTER(ctypes.c_int)]
    rc = fn(ctypes.byref(out))
    return int(rc), int(out.value)


def op_cudnn(task):
    lib = _load(task["lib"])
    res = {"loaded": True}
    try:
        res["version"] = _int_call(lib, "cudnnGetVersion")
    except AttributeError:
        res["version_error"] = "cudnnGetVersion not exported"
    try:
        res["cudart_version"] = _int_call(lib, "cudnnGetCudartVersion")
    except AttributeError:
        res["cudart_version_error"] = "cudnnGetCudartVersion not exported"
    return res


def op_cudart(task):
    lib = _load(task["lib"])
    rc, value = _out_int_call(lib, "cudaRuntimeGetVersion")
    return {"loaded": True, "status": rc, "version": value}


def op_cuda_driver(task):
    lib = _load(task["lib"])
    rc, value = _out_int_call(lib, "cuDriverGetVersion")
    res = {"loaded": True, "status": rc, "version": value}
    if task.get("init"):
        fn = lib.cuInit
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_uint]
        res["init_status"] = int(fn(0))
    return res


def _nvml_field(fn, *args):
    try:
        return fn(*args), None
    except Exception as exc:  # NVMLError subclasses, missing functions in old drivers
        return None, str(exc) or type(exc).__name__


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def op_nvml(task):
    import pynvml  # nvidia-ml-py

    if task.get("lib"):
        # pynvml dlopens "libnvidia-ml.so.1" by name unless a library is already set;
        # setting it makes --root and test fakes load the file the doctor found.
        pynvml.nvmlLib = _load(task["lib"])
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return {"init_error": str(exc) or type(exc).__name__, "init_error_code": getattr(exc, "value", None)}
    res = {"gpus": [], "errors": {}}
    try:
        value, err = _nvml_field(pynvml.nvmlSystemGetDriverVersion)
        res["driver_version"] = _text(value)
        if err:
            res["errors"]["driver_version"] = err
        value, err = _nvml_field(pynvml.nvmlSystemGetCudaDriverVersion_v2)
        if value is None:
            value, err = _nvml_field(pynvml.nvmlSystemGetCudaDriverVersion)
        res["cuda_driver_version"] = value
        if err:
            res["errors"]["cuda_driver_version"] = err
        count, err = _nvml_field(pynvml.nvmlDeviceGetCount)
        if err:
            res["errors"]["device_count"] = err
        for index in range(count or 0):
            gpu = {"index": index, "errors": {}}
            handle, err = _nvml_field(pynvml.nvmlDeviceGetHandleByIndex, index)
            if err:
                gpu["errors"]["handle"] = err
                res["gpus"].append(gpu)
                continue
            for key, fn in (
                ("name", pynvml.nvmlDeviceGetName),
                ("uuid", pynvml.nvmlDeviceGetUUID),
                ("cc", pynvml.nvmlDeviceGetCudaComputeCapability),
                ("memory", pynvml.nvmlDeviceGetMemoryInfo),
                ("mig", pynvml.nvmlDeviceGetMigMode),
                ("compute_mode", pynvml.nvmlDeviceGetComputeMode),
                ("processes", pynvml.nvmlDeviceGetComputeRunningProcesses),
            ) + ((("driver_model", pynvml.nvmlDeviceGetCurrentDriverModel),) if sys.platform == "win32" else ()):
                value, err = _nvml_field(fn, handle)
                if err:
                    gpu["errors"][key] = err
                    continue
                if key == "memory":
                    value = {"total": int(value.total), "free": int(value.free)}
                elif key == "processes":
                    value = len(value)
                elif key in ("cc", "mig"):
                    value = [int(v) for v in value]
                else:
                    value = _text(value)
                gpu[key] = value
            if gpu.get("mig") and gpu["mig"][0] == 1:
                gpu["mig_devices"] = _mig_devices(pynvml, handle)
            res["gpus"].append(gpu)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return res


def _mig_devices(pynvml, handle):
    found = []
    count, err = _nvml_field(pynvml.nvmlDeviceGetMaxMigDeviceCount, handle)
    for i in range(count or 0):
        mig, err = _nvml_field(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, i)
        if err or mig is None:
            continue
        uuid, err = _nvml_field(pynvml.nvmlDeviceGetUUID, mig)
        if uuid:
            found.append(_text(uuid))
    return found


OPS = {"cudnn": op_cudnn, "cudart": op_cudart, "cuda_driver": op_cuda_driver, "nvml": op_nvml}


def main():
    tasks = json.loads(sys.stdin.read() or "[]")
    for index, task in enumerate(tasks):
        _emit({"task": index, "state": "start"})
        try:
            result = OPS[task["op"]](task)
        except OSError as exc:  # dlopen failure: the loader's own message
            result = {"loaded": False, "error": str(exc)}
        except Exception as exc:
            result = {"error": "%s: %s" % (type(exc).__name__, exc)}
        _emit({"task": index, "result": result})


if __name__ == "__main__":
    main()
