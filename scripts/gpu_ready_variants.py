"""GPU machine only: how fast can readiness (cuInit, a context, the shipped kernel, its result checked) run on every
GPU of a node? Times the shapes the native child could take, each in a fresh process, three times:

  forks       one fork per GPU, each seeing only its own GPU (what `check --ready` does now)
  one-seq     one process, every GPU visible, one cuInit, then each GPU's context and kernel in turn
  one-threads one process, one cuInit, then a thread per GPU for its context and kernel
  single      one process seeing GPU 0 only (what one GPU costs alone)
  product     native/ready.py's op as check --ready runs it (one process, one connection, a watchdog)
  conn1       one-seq with CUDA_DEVICE_MAX_CONNECTIONS=1 (fewer hardware queues per context)
  pairs       two forks, each seeing half the GPUs, each one-seq
  init-K      cuInit alone with K GPUs visible (K = 1 .. all): what cuInit costs per GPU

    python3 scripts/gpu_ready_variants.py [--lib libcuda.so.1] [--rounds 3]

Prints one line per run: variant, wall ms, per-GPU phases. Reads only; changes no GPU setting.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from cudnn_doctor.native import ready  # noqa: E402  (standard library only)


def _call(cuda, name, *args):
    fn = getattr(cuda, name)
    fn.restype = ctypes.c_int
    status = int(fn(*args))
    if status != 0:
        raise RuntimeError("%s -> %d" % (name, status))


def _one_gpu(cuda, ordinal, t0):
    """Context, module, kernel and copy-back on device ``ordinal`` of an initialised driver; phases in ms."""
    marks = {}
    start = time.monotonic()
    device = ctypes.c_int(0)
    _call(cuda, "cuDeviceGet", ctypes.byref(device), ctypes.c_int(ordinal))
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    _call(cuda, "cuDeviceGetAttribute", ctypes.byref(major), ctypes.c_int(75), device)
    _call(cuda, "cuDeviceGetAttribute", ctypes.byref(minor), ctypes.c_int(76), device)
    ctx = ctypes.c_void_p()
    _call(cuda, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), device)
    _call(cuda, "cuCtxSetCurrent", ctx)
    marks["context"] = time.monotonic()
    module, kernel, out = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64(0)
    _call(cuda, "cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(ready._ptx(major.value, minor.value)))
    _call(cuda, "cuModuleGetFunction", ctypes.byref(kernel), module, b"doctor_ready")
    marks["module"] = time.monotonic()
    _call(cuda, "cuMemAlloc_v2", ctypes.byref(out), ctypes.c_size_t(4 * 64))
    arg = ctypes.c_uint64(out.value)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
    one = ctypes.c_uint(1)
    _call(cuda, "cuLaunchKernel", kernel, one, one, one, ctypes.c_uint(64), one, one, ctypes.c_uint(0),
          ctypes.c_void_p(), params, ctypes.c_void_p())
    host = (ctypes.c_uint32 * 64)()
    _call(cuda, "cuMemcpyDtoH_v2", host, ctypes.c_uint64(out.value), ctypes.c_size_t(4 * 64))
    marks["kernel"] = time.monotonic()
    ok = all(host[i] == i * 3 + 7 for i in range(64))
    phases, last = {}, start
    for name in ("context", "module", "kernel"):
        phases[name] = round((marks[name] - last) * 1000, 1)
        last = marks[name]
    return {"gpu": ordinal, "ok": ok, "start_ms": round((start - t0) * 1000, 1),
            "end_ms": round((last - t0) * 1000, 1), "phases_ms": phases}


def child(variant, lib):
    """Runs in a fresh process: one variant, printed as JSON."""
    t0 = time.monotonic()
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    if variant == "conn1":
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
    if variant.startswith("init-"):
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(int(variant[5:])))
        cuda = ctypes.CDLL(lib, mode=os.RTLD_NOW)
        loaded = time.monotonic()
        _call(cuda, "cuInit", ctypes.c_uint(0))
        return {"variant": variant, "wall_ms": round((time.monotonic() - t0) * 1000, 1),
                "init_ms": round((time.monotonic() - loaded) * 1000, 1), "gpus": []}
    if variant == "pairs":
        count = int(os.environ["GPUS"])
        halves = [list(range(count))[: count // 2], list(range(count))[count // 2:]]

        def half_of(half):
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, half))
            return child("one-seq", lib)

        done = ready._forked([lambda half=half: half_of(half) for half in halves], 60.0)
        gpus = [g for res in done for g in res.get("gpus", [dict(res, gpu="half")])]
        return {"variant": variant, "wall_ms": round((time.monotonic() - t0) * 1000, 1), "gpus": gpus}
    if variant == "product":  # what check --ready's child runs: native/ready.py's op, watchdog included
        count = int(os.environ["GPUS"])
        res = ready.op_cuda_ready({"lib": lib, "gpus": [{"index": i} for i in range(count)]})
        return {"variant": variant, "wall_ms": round((time.monotonic() - t0) * 1000, 1), "gpus": res["gpus"]}
    if variant == "single":
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
    if variant == "forks":  # the old shape: one fork per GPU, side by side
        count = int(os.environ["GPUS"])
        gpus = ready._forked([lambda i=i: ready._alone(lib, {"index": i}) for i in range(count)], 60.0)
        return {"variant": variant, "wall_ms": round((time.monotonic() - t0) * 1000, 1), "gpus": gpus}
    cuda = ctypes.CDLL(lib, mode=os.RTLD_NOW)
    loaded = time.monotonic()
    _call(cuda, "cuInit", ctypes.c_uint(0))
    inited = time.monotonic()
    count = ctypes.c_int(0)
    _call(cuda, "cuDeviceGetCount", ctypes.byref(count))
    gpus = []
    if variant == "one-threads":
        slots = [None] * count.value

        def work(i):
            try:
                slots[i] = _one_gpu(cuda, i, t0)
            except Exception as exc:  # noqa: BLE001  (reported, not hidden)
                slots[i] = {"gpu": i, "error": str(exc)}

        threads = [threading.Thread(target=work, args=(i,)) for i in range(count.value)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        gpus = slots
    else:
        for i in range(count.value):
            gpus.append(_one_gpu(cuda, i, t0))
    return {"variant": variant, "wall_ms": round((time.monotonic() - t0) * 1000, 1),
            "load_ms": round((loaded - t0) * 1000, 1), "init_ms": round((inited - loaded) * 1000, 1),
            "gpus": gpus}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="libcuda.so.1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child")
    parser.add_argument("--variants", help="comma-separated; default: all")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.lib)), flush=True)
        sys.stderr.write("exit at %.1f\n" % (time.monotonic() * 1000))
        return
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
    env = dict(os.environ, GPUS=str(gpus))
    print("GPUs: %d" % gpus)
    variants = args.variants.split(",") if args.variants else [
        "forks", "one-seq", "one-threads", "single", "conn1", "pairs"] + ["init-%d" % k for k in range(1, gpus + 1)]
    for rnd in range(args.rounds):
        for variant in variants:
            started = time.monotonic()
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", variant, "--lib", args.lib],
                                  capture_output=True, text=True, env=env, timeout=60)
            ended = time.monotonic()
            outer = round((ended - started) * 1000, 1)
            exit_at = [line for line in proc.stderr.splitlines() if line.startswith("exit at ")]
            teardown = round(ended * 1000 - float(exit_at[-1][8:]), 1) if exit_at else None
            try:
                res = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, ValueError):
                print("%-12s round %d failed: %s" % (variant, rnd, (proc.stderr or proc.stdout)[-400:]))
                continue
            parts = []
            for gpu in res["gpus"]:
                if "error" in gpu:
                    parts.append("gpu%s ERROR %s" % (gpu.get("gpu"), gpu["error"]))
                    continue
                ph = gpu.get("phases_ms", {})
                parts.append("gpu%s %s %s" % (gpu.get("gpu", gpu.get("index")), "ok" if gpu.get("ok") else "BAD",
                                              " ".join("%s=%s" % kv for kv in ph.items())))
            head = "%-12s round %d: process %7.1f ms, in-process %7.1f ms, exit+teardown %s ms" % (
                variant, rnd, outer, res["wall_ms"], teardown)
            if "init_ms" in res:
                head += ", cuInit %.1f ms" % res["init_ms"]
            print(head)
            for part in parts:
                print("    " + part)


if __name__ == "__main__":
    main()
