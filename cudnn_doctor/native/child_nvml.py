"""In the native child: the NVML ops, the driver's and GPUs' facts (op_nvml) and every GPU's health and links
(op_gpu_health, read by gpu_health.py), each with pynvml bound to the library the doctor found. Siblings are imported
by bare name: the package is never imported here."""
import sys

from child_load import load, note_loaded
from gpu_health import node_health


def _nvml_field(fn, *args):
    try:
        return fn(*args), None
    except Exception as exc:  # NVMLError subclasses, missing functions in old drivers
        return None, str(exc) or type(exc).__name__


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _nvml_init(task):
    """pynvml bound to the library the doctor found and initialised: (pynvml, None), or (None, the error)."""
    if task.get("lib"):
        lib = load(task["lib"])
    else:
        try:  # what pynvml itself would load; without it, skip pynvml's import (most of this task's time)
            lib = load("libnvidia-ml.so.1")
        except OSError:
            return None, {"init_error": "NVML Shared Library Not Found", "init_error_code": 12}  # pynvml's words
    note_loaded(task, lib)
    import pynvml  # why: nvidia-ml-py takes 50 ms or more to import, and only where a libnvidia-ml loads

    # pynvml dlopens "libnvidia-ml.so.1" by name unless a library is already set;
    # setting it makes --root and test fakes load the file the doctor found.
    pynvml.nvmlLib = lib
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return None, {"init_error": str(exc) or type(exc).__name__, "init_error_code": getattr(exc, "value", None)}
    return pynvml, None


def _shutdown(pynvml):
    try:
        pynvml.nvmlShutdown()
    except Exception:
        pass


def op_gpu_health(task):
    """Every GPU's health reads and every pair's links (gpu_health.py), in a task of its own: a driver that
    crashes on one of them takes none of op_nvml's facts with it."""
    pynvml, failed = _nvml_init(task)
    if failed:
        return failed
    try:
        return node_health(pynvml, counters=bool(task.get("nvlink_errors")))
    finally:
        _shutdown(pynvml)


def op_nvml(task):
    pynvml, failed = _nvml_init(task)
    if failed:
        return failed
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
        _shutdown(pynvml)
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

