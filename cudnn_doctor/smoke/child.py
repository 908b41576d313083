"""Smoke child: runs one float32 convolution through a cuDNN copy and checks it against the CPU.

Speaks the protocol of native/child.py (a JSON task list on stdin; ``{"task": i, "state": "start"}`` then
``{"task": i, "result": {...}}`` on stdout), so Host.run_native (native/runner.py) can run it and survive a crash
or hang. Before each native call it writes the stage name to ``task["progress"]`` so the parent can tell where
a crash or hang happened. Standard library only; it imports its sibling modules by file location.
"""
import ctypes
import json
import math
import os
import sys
import time
from array import array

import bindings as api  # sibling modules: this file runs as a script, its folder is sys.path[0]
import conv_math as cm


def _emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class _Progress:
    """Writes the stage about to run, and what is known so far, where the parent finds it after a crash."""

    def __init__(self, path):
        self.path = path
        self.stage = None
        self.known = {}

    def __call__(self, stage):
        self.stage = stage
        if self.path:
            with open(self.path, "w") as fh:
                json.dump({"stage": stage, "known": self.known}, fh)


def _ms(since):
    return round((time.perf_counter() - since) * 1000.0, 3)


def _open_driver(task, res, progress):
    """Load libcuda, init it and make the device's primary context current. Returns (driver, error)."""
    progress("load libcuda")
    try:
        driver = api.Driver(task.get("driver_lib") or "libcuda.so.1")
    except OSError as exc:
        return None, {"api": "loader", "func": "dlopen", "library": task.get("driver_lib") or "libcuda.so.1",
                      "message": str(exc)}
    res["driver_library"] = _loaded_path(driver.lib, task.get("driver_lib"))
    try:
        try:
            res["driver_cuda_version"] = driver.version()  # works before cuInit
        except (api.ApiError, api.MissingSymbol):
            pass
        progress("cuInit")
        driver.init()
        progress("cuDeviceGet")
        res["device"]["count"] = driver.device_count()
        dev = driver.device(int(task.get("device", 0)))
        res["device"]["name"] = driver.name(dev)
        res["device"]["cc"] = driver.compute_capability(dev)
        progress("cuDevicePrimaryCtxRetain")
        ctx = driver.retain_primary_context(dev)
        driver.set_current(ctx)
        res["device"]["handle"] = dev
    except api.ApiError as exc:
        return driver, exc.to_dict()
    except api.MissingSymbol as exc:
        return driver, {"api": "loader", "func": str(exc), "message": "libcuda does not export %s" % exc}
    return driver, None


def _loaded_path(lib, given):
    """The file a library really came from (dlopen by bare name hides it)."""
    try:
        class _LinkMap(ctypes.Structure):
            _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

        dlinfo = ctypes.CDLL(None).dlinfo
        lmap = ctypes.POINTER(_LinkMap)()
        if dlinfo(ctypes.c_void_p(lib._handle), 2, ctypes.byref(lmap)) == 0 and lmap and lmap.contents.l_name:
            return os.path.realpath(lmap.contents.l_name.decode())
    except Exception:  # no dlinfo (non-glibc): report what was asked for
        pass
    return os.path.realpath(given) if given else None


def _choose_algorithm(dnn, handle, xd, wd, cd, yd):
    """cuDNN's first heuristic choice that succeeded and does not use tensor-core (TF32/FP16) math."""
    for perf in dnn.heuristics(handle, xd, wd, cd, yd):
        if perf.status == 0 and perf.mathType not in api.CUDNN_TENSOR_OP_MATHS and 0 <= perf.algo < len(api.FWD_ALGOS):
            return perf.algo
    return api.IMPLICIT_GEMM


class _Conv:
    """Device buffers and descriptors of one smoke convolution, freed however the run ends."""

    def __init__(self, driver, dnn):
        self.driver, self.dnn = driver, dnn
        self.buffers = []
        self.descriptors = []
        self.handle = None

    def alloc(self, nbytes):
        ptr = self.driver.alloc(nbytes)
        self.buffers.append(ptr)
        return ptr

    def describe(self, kind, desc):
        self.descriptors.append((kind, desc))
        return desc

    def close(self):
        for kind, desc in reversed(self.descriptors):
            _quietly(self.dnn.free_descriptor, kind, desc)
        if self.handle:
            _quietly(self.dnn.destroy, self.handle)
        for ptr in self.buffers:
            _quietly(self.driver.free, ptr)


def _quietly(fn, *args):
    try:
        fn(*args)
    except Exception:  # cleanup after a failure must not hide that failure
        pass


def _run_conv(driver, dnn, conv, version, res, progress, started):
    seed = int.from_bytes(os.urandom(4), "little")
    x, w = cm.random_inputs(seed)
    n, k, p, q = cm.output_dims()
    out_bytes = n * k * p * q * 4
    # cuDNN 8+ lets DEFAULT_MATH run float32 on TF32 tensor cores (Ampere and newer, ~1e-3 error);
    # FMA_MATH (8.0+) forbids that. 7.x has neither TF32 nor FMA_MATH.
    math_type = api.CUDNN_FMA_MATH if version >= 8000 else api.CUDNN_DEFAULT_MATH
    res["conv"] = {"seed": seed, "math_type": math_type, "elements": n * k * p * q}

    progress("cudnnSetTensor4dDescriptor")
    xd = conv.describe("Tensor", dnn.tensor(cm.N, cm.C, cm.H, cm.W))
    progress("cudnnSetFilter4dDescriptor")
    wd = conv.describe("Filter", dnn.filter(cm.K, cm.C, cm.R, cm.S))
    progress("cudnnSetConvolution2dDescriptor")
    cd = conv.describe("Convolution", dnn.convolution(cm.PAD, cm.STRIDE, cm.DILATION, math_type))
    progress("cudnnGetConvolution2dForwardOutputDim")
    dims = dnn.output_dims(cd, xd, wd)
    if tuple(dims) != (n, k, p, q):
        raise api.ApiError("smoke", "cudnnGetConvolution2dForwardOutputDim", -1,
                           "output dims %s, expected %s" % (list(dims), [n, k, p, q]))
    yd = conv.describe("Tensor", dnn.tensor(n, k, p, q))

    progress("cudnnGetConvolutionForwardAlgorithm_v7")
    algo = _choose_algorithm(dnn, conv.handle, xd, wd, cd, yd)
    progress("cudnnGetConvolutionForwardWorkspaceSize")
    ws_bytes = dnn.workspace_size(conv.handle, xd, wd, cd, yd, algo)

    progress("cuMemAlloc_v2")
    x_dev = conv.alloc(len(x) * 4)
    w_dev = conv.alloc(len(w) * 4)
    y_dev = conv.alloc(out_bytes)
    workspace = 0
    if ws_bytes:
        try:
            workspace = conv.alloc(ws_bytes)
        except api.ApiError as exc:
            # Memory is tight: retry with the algorithm that needs no workspace, as the seeds advise.
            res["conv"]["fallback"] = {"from_algo": algo, "workspace": ws_bytes, "error": exc.to_dict()}
            algo, ws_bytes = api.IMPLICIT_GEMM, dnn.workspace_size(conv.handle, xd, wd, cd, yd, api.IMPLICIT_GEMM)
            workspace = conv.alloc(ws_bytes) if ws_bytes else 0

    progress("cuMemcpyHtoD_v2")
    driver.to_device(x_dev, x.buffer_info()[0], len(x) * 4)
    driver.to_device(w_dev, w.buffer_info()[0], len(w) * 4)
    progress("cuMemsetD8_v2")
    driver.fill_bytes(y_dev, cm.POISON_BYTE, out_bytes)  # an unwritten output cannot pass

    progress("cudnnConvolutionForward")
    try:
        dnn.forward(conv.handle, xd, x_dev, wd, w_dev, cd, algo, workspace, ws_bytes, yd, y_dev)
    except api.ApiError as exc:
        if algo == api.IMPLICIT_GEMM or not _memory_status(exc.code, version):
            raise
        res["conv"]["fallback"] = {"from_algo": algo, "workspace": ws_bytes, "error": exc.to_dict()}
        algo, ws_bytes = api.IMPLICIT_GEMM, 0
        dnn.forward(conv.handle, xd, x_dev, wd, w_dev, cd, algo, None, 0, yd, y_dev)
    res["conv"].update(algo=algo, workspace=ws_bytes)
    progress("cuCtxSynchronize")
    driver.synchronize()  # also surfaces asynchronous kernel faults
    progress("cuMemcpyDtoH_v2")
    out = array("f", bytes(out_bytes))
    driver.to_host(out.buffer_info()[0], y_dev, out_bytes)
    res["timings"]["first_result_ms"] = _ms(started)

    progress("compare")
    error, nonfinite = cm.relative_error(out, cm.reference(x, w))
    res["conv"].update(poisoned=cm.poisoned_count(out.tobytes()), nonfinite=nonfinite,
                       max_rel_error=error if math.isfinite(error) else None, threshold=cm.THRESHOLD)


def _memory_status(code, version):
    """ALLOC_FAILED / INTERNAL_ERROR (any 4xxx in 9.x): worth one retry without workspace."""
    if version >= 90000:
        return code // 1000 == 4
    return code in (2, 4)


def op_smoke(task, progress):
    started = time.perf_counter()
    res = {"library": task["lib"], "device": {"index": int(task.get("device", 0))}, "timings": {}}
    progress.known = res
    driver, driver_error = _open_driver(task, res, progress)
    res["driver_error"] = driver_error

    progress("load cuDNN")
    try:
        dnn = api.Cudnn(task["lib"])
        res["version"] = dnn.version()
        res["cudart_version"] = dnn.cudart_version()
    except OSError as exc:
        res["error"] = {"api": "loader", "func": "dlopen", "message": str(exc)}
        return res
    except api.MissingSymbol as exc:
        res["error"] = {"api": "symbol", "func": str(exc)}
        return res
    res["timings"]["load_ms"] = _ms(started)
    if res["version"] < 7000:
        res["error"] = {"api": "smoke", "func": "cudnnGetVersion", "message": "unsupported version"}
        return res

    conv = _Conv(driver, dnn)
    try:
        progress("cudnnCreate")
        try:
            conv.handle = dnn.create()
            res["cudnn_create"] = {"code": 0}
        except api.ApiError as exc:
            res["cudnn_create"] = exc.to_dict()
            if driver_error is None:
                raise
        res["timings"]["create_ms"] = _ms(started)
        if driver_error is not None:
            return res  # cuDNN was asked anyway for its own answer, but without the driver nothing can run
        _run_conv(driver, dnn, conv, res["version"], res, progress, started)
    except api.ApiError as exc:
        res["error"] = exc.to_dict()
    except api.MissingSymbol as exc:
        res["error"] = {"api": "symbol", "func": str(exc)}
    finally:
        progress("cleanup")
        conv.close()
        if driver is not None and "handle" in res["device"]:
            _quietly(driver.release_primary_context, res["device"].pop("handle"))
        res["timings"]["total_ms"] = _ms(started)
    return res


def serve(op, progress_type):
    """The child protocol: tasks as JSON on stdin, a start line and a result line per task on stdout; an
    exception in one task is that task's error, naming the stage it reached (bench's child serves the same way)."""
    tasks = json.loads(sys.stdin.read() or "[]")
    for index, task in enumerate(tasks):
        _emit({"task": index, "state": "start"})
        progress = progress_type(task.get("progress"))
        try:
            result = op(task, progress)
        except Exception as exc:
            result = {"error": {"api": "child", "func": progress.stage,
                                "message": "%s: %s" % (type(exc).__name__, exc)}}
        _emit({"task": index, "result": result})


def main():
    serve(op_smoke, _Progress)


if __name__ == "__main__":
    main()
