"""Bench child: times the seed network and convolution layers through cuDNN, plain CUDA (NVRTC) and reports them.

Speaks native/child.py's protocol (a JSON task list on stdin, one result line per task on stdout) so
native.runner.run_native can cut it off after a crash or hang. Standard library (+ pynvml when present) only;
its siblings and smoke's bindings are imported by file location. Progress goes to task["progress"] as JSON.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "smoke"))

import api  # noqa: E402  (bench's bindings, built on smoke's)
import refcheck as rc  # noqa: E402
import child as smoke_child  # noqa: E402  (smoke's driver start-up and helpers)
from child_common import DIRECTIONS, ConvOp, Progress, Session, _algo_name, _now, _perf_list, choose  # noqa: E402,F401
from seed_child import _seed  # noqa: E402



def bench_direction(sess, op, direction, ins, workspace, ws_limit, target_ms, seed, candidates=3):
    """Find, time cuDNN's few fastest candidates ourselves (Find's own ranking can be off by a wide margin for
    some shapes), check the winner's result against the CPU. The fastest algorithm without workspace and its
    slowdown come from the same Find: cuDNN timed every algorithm on these very buffers."""
    dnn = sess.dnn
    dnn.set_math(op, api.MATH[op.dtype])  # search under the data type's own math type
    perfs = [p for p in dnn.find(sess.handle, direction, op, workspace, ws_limit) if p.status == 0]
    if not perfs:
        return {"error": {"api": "cudnn", "func": dnn._FIND[direction], "message": "no algorithm succeeded"}}
    timed = []
    # Find's own ranking can be off by a wide margin (an algorithm it timed fast can run 20x slower in a loop):
    # its three fastest are timed here the way the winner will be, as its best can be the misjudged one.
    contenders = perfs[:candidates]
    for perf in contenders:
        algo, math_type, ws_bytes = choose(dnn, sess.handle, direction, op, perf)
        if ws_bytes > ws_limit:
            continue

        def call(a=algo, w=ws_bytes):
            dnn.run(sess.handle, direction, op, a, workspace, w)
        ms, how = sess.timed(call, target_ms / 2.0)
        timed.append((ms, how, perf, algo, math_type, ws_bytes, call))
    ms, how, best, algo, math_type, ws_bytes, call = min(timed, key=lambda t: t[0])
    dnn.set_math(op, math_type)
    out_ptr, count = op.output(direction)
    sess.poison(out_ptr, count * api.ELEMENT_BYTES[op.dtype])
    call()
    sess.driver.stream_sync(sess.stream)
    check = rc.check_conv(op.g, direction, ins, sess.fetcher(out_ptr, op.dtype), op.dtype, seed)
    res = {"algo": _algo_name(direction, algo), "math": math_type, "workspace": ws_bytes, "time_ms": ms,
           "timing": how, "check": check, "find": _perf_list(direction, perfs),
           "candidates": [{"algo": _algo_name(direction, t[3]), "math": t[4], "time_ms": t[0]} for t in timed]}
    no_ws = next((p for p in perfs if p.memory == 0), None)
    if no_ws is None:
        res["no_workspace"] = None
    elif no_ws.algo == best.algo and no_ws.mathType == best.mathType:
        res["no_workspace"] = {"algo": res["algo"], "find_ms": no_ws.time, "slowdown": 1.0, "time_ms": ms}
    else:
        slowdown = max(1.0, no_ws.time / best.time) if best.time > 0 else 1.0
        res["no_workspace"] = {"algo": _algo_name(direction, no_ws.algo), "find_ms": no_ws.time,
                               "slowdown": slowdown, "time_ms": ms * slowdown}
    return res


LAYOUT_NAMES = {rc.NCHW: "NCHW", rc.NHWC: "NHWC"}


def _cc_tuple(text):
    """'8.6' -> (8, 6); None when unknown."""
    try:
        return tuple(int(p) for p in str(text).split("."))
    except (TypeError, ValueError):
        return None


def layouts(dtype, direction=None):
    """Tensor-core types run NHWC, their native layout (torch's channels_last). Strict float32 has no such
    preference: on the H100 its fastest forward and backward-data kernels were NCHW (Winograd, FFT) for every
    ResNet-50 layer, while backward-filter went either way, so that direction tries both and keeps the faster."""
    if dtype != "fp32":
        return [rc.NHWC]
    return [rc.NCHW, rc.NHWC] if direction in (None, "bwd_filter") else [rc.NCHW]


def bench_layers(sess, task, progress, deadline, res):
    """Every requested shape × data type × direction, in the layouts of layouts(dtype)."""
    layers = task["layers"]
    dtypes = task["dtypes"]
    directions = task.get("directions") or list(DIRECTIONS)
    target_ms = float(task.get("target_ms", 20.0))
    geoms = [rc.Conv(l["n"], l["c"], l["h"], l["w"], l["k"], l["r"], l["s"], l["stride"], l["pad"], rc.NCHW)
             for l in layers]
    xmost = max(g.n * g.c * g.h * g.w for g in geoms)
    ymost = max(g.n * g.k * g.p * g.q for g in geoms)
    wmost = max(g.k * g.c * g.r * g.s for g in geoms)
    counts = {"x": xmost, "dx": xmost, "y": ymost, "dy": ymost, "w": wmost, "dw": wmost}
    bufs = {k: sess.alloc(v * 4) for k, v in counts.items()}
    free, _ = sess.driver.mem_info()
    ws_limit = int(min(task.get("workspace_limit") or (4 << 30), free // 2))
    workspace = sess.alloc(ws_limit) if ws_limit else 0
    res["workspace_limit"] = ws_limit
    rows = res.setdefault("layers", [])
    cc = _cc_tuple(res["device"].get("cc"))
    for dtype in dtypes:
        need = (task.get("dtype_min_cc") or {}).get(dtype)
        if need and cc and cc < _cc_tuple(need):
            for layer in layers:
                rows.append({"layer": layer["name"], "dtype": dtype,
                             "skipped": "%s needs compute capability %s or newer" % (dtype.upper(), need)})
            progress("%s unsupported here" % dtype, advance=len(layers) * len(directions))
            continue
        pats = {k: rc.Pattern(dtype, seed) for k, seed in (("x", 11), ("w", 12), ("dy", 13))}
        for key in pats:
            sess.fill(bufs[key], pats[key], counts[key])
        fmts = layouts(dtype)
        for li, (layer, g0) in enumerate(zip(layers, geoms)):
            row = {"layer": layer["name"], "dtype": dtype, "layout": "/".join(LAYOUT_NAMES[f] for f in fmts)}
            rows.append(row)
            if _now() > deadline:
                row["skipped"] = "time budget"
                progress("skipped %s %s" % (layer["name"], dtype), advance=len(directions))
                continue
            ops = []
            for fmt in fmts:
                g = rc.Conv(g0.n, g0.c, g0.h, g0.w, g0.k, g0.r, g0.s, g0.stride, g0.pad, fmt)
                try:
                    ops.append((fmt, ConvOp(sess, g, dtype, fmt, bufs)))
                except api.ApiError as exc:
                    row["error"] = exc.to_dict()
            if not ops:
                progress("%s %s unsupported" % (layer["name"], dtype), advance=len(directions))
                continue
            row.pop("error", None)
            ins = {"fwd": (pats["x"], pats["w"]), "bwd_data": (pats["dy"], pats["w"]),
                   "bwd_filter": (pats["x"], pats["dy"])}
            for direction in directions:
                progress("%s %s %s" % (layer["name"], dtype, direction))
                best = None
                for fmt, op in [(f, o) for f, o in ops if f in layouts(dtype, direction)] or ops:
                    try:
                        got = bench_direction(sess, op, direction, ins[direction], workspace, ws_limit, target_ms,
                                              seed=li * 7 + len(rows))
                    except api.ApiError as exc:
                        got = {"error": exc.to_dict()}
                    got["layout"] = LAYOUT_NAMES[fmt]
                    if best is None or "error" in best or ("error" not in got and got["time_ms"] < best["time_ms"]):
                        best = got
                row[direction] = best
                progress("%s %s %s" % (layer["name"], dtype, direction), advance=1)



# --- NVML facts ---------------------------------------------------------------------------------------------

THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                 0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
                 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}


def nvml_facts(index, pci_bus=None):
    """Clocks, power limit, throttle reasons and PCIe link from NVML; {"error": ...} when it cannot answer."""
    try:
        import pynvml as nv
    except ImportError as exc:
        return {"error": "pynvml: %s" % exc}
    out = {}
    try:
        nv.nvmlInit()
    except Exception as exc:
        return {"error": str(exc)}
    try:
        h = nv.nvmlDeviceGetHandleByPciBusId(pci_bus) if pci_bus else nv.nvmlDeviceGetHandleByIndex(index)
        calls = {
            "sm_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            "sm_clock_max_mhz": lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            "power_limit_w": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
            "power_default_limit_w": lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0,
            "power_w": lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "temperature_c": lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            "throttle_mask": lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h),
            "pcie_gen": lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h),
            "pcie_gen_max": lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h),
            "pcie_width": lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h),
            "pcie_width_max": lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h),
            "gpu_max_pcie_gen": lambda: nv.nvmlDeviceGetGpuMaxPcieLinkGeneration(h),
        }
        for key, call in calls.items():
            try:
                out[key] = call()
            except Exception as exc:  # a call this driver or board lacks: record it and go on
                out.setdefault("unavailable", {})[key] = str(exc)
        mask = out.get("throttle_mask")
        if isinstance(mask, int):
            out["throttle_reasons"] = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    except Exception as exc:
        out["error"] = str(exc)
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass
    return out


# --- the task ----------------------------------------------------------------------------------------------

def op_bench(task, progress):
    started = _now()
    deadline = started + float(task.get("budget_s", 50.0))
    res = {"library": task["lib"], "device": {"index": int(task.get("device", 0))}, "timings": {}}
    progress.known = res
    progress.total = int(task.get("total_steps", 0))
    driver = None
    orig = api.base.Driver
    api.base.Driver = api.Driver  # smoke's start-up builds our richer Driver
    try:
        driver, error = smoke_child._open_driver(task, res, progress)
    finally:
        api.base.Driver = orig
    if error is not None:
        res["error"] = error
        return res
    dev = res["device"]["handle"]
    try:
        res["device"]["sm_count"] = driver.attribute(api.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
        free, total = driver.mem_info()
        res["device"]["memory_free"], res["device"]["memory_total"] = free, total
    except (api.ApiError, api.MissingSymbol) as exc:
        res["device"]["attribute_error"] = str(exc)
    progress("NVML")
    res["nvml"] = nvml_facts(int(task.get("device", 0)))
    progress("load cuDNN")
    sess = None
    try:
        dnn = api.Cudnn(task["lib"])
        res["version"] = dnn.version()
        progress("cudnnCreate")
        sess = Session(driver, dnn, dev)
        sess.min_iters = int(task.get("min_iters", 3))
        res["timings"]["start_ms"] = smoke_child._ms(started)
        if task.get("seed", True):
            _seed(sess, task, res, progress)
            res["timings"]["seed_ms"] = smoke_child._ms(started)
        if task.get("layers"):
            bench_layers(sess, task, progress, deadline, res)
            res["timings"]["layers_ms"] = smoke_child._ms(started)
        res["capture_error"] = sess.capture_error
    except OSError as exc:
        res["error"] = {"api": "loader", "func": "dlopen", "message": str(exc)}
    except api.ApiError as exc:
        res["error"] = exc.to_dict()
        res["error"]["stage"] = progress.stage
    except api.MissingSymbol as exc:
        res["error"] = {"api": "symbol", "func": str(exc), "stage": progress.stage}
    finally:
        progress("cleanup")
        if sess is not None:
            sess.close()
        smoke_child._quietly(driver.release_primary_context, res["device"].pop("handle", 0))
        res["timings"]["total_ms"] = smoke_child._ms(started)
    return res




def main():
    smoke_child.serve(op_bench, Progress)


if __name__ == "__main__":
    main()
