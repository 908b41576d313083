"""`cudnn-doctor bench` beside torch, shape by shape: TFLOP/s of the same convolutions through the same cuDNN.

    python3 benchmarks/bench_vs_torch.py [--torch-python /opt/torch/.venv/bin/python] [--quick]
           [--library PATH] [--dtype fp16 ...] [--shape N,C,H,W,K,R,S,stride,pad ...] [--save-bench FILE]

bench runs first (`cudnn-doctor bench --json`, this interpreter); torch runs in --torch-python with
torch.backends.cudnn.benchmark = True and channels_last for the tensor-core types and the faster of NCHW and
channels_last for strict float32, each direction captured in a CUDA graph and timed with
CUDA events, exactly as bench times cuDNN. By default bench is pointed at the cuDNN torch itself loads, so both
columns call the same library. Prints one row per layer, data type and direction, then the lowest ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]

TORCH_SCRIPT = r"""
import json, sys
import torch
import torch.nn.functional as F
spec = json.loads(sys.argv[1])
torch.backends.cudnn.benchmark = True
dtypes = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
out = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(), "rows": []}
if spec.get("where"):
    print(json.dumps({"cudnn_path": [p for p in open("/proc/self/maps").read().split() if "libcudnn.so" in p][:1]}))
    sys.exit(0)
dev = torch.device("cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

def timed(fn, target_ms):
    fn(); torch.cuda.synchronize()
    start.record(); fn(); end.record(); end.synchronize()
    iters = int(max(3, min(200, target_ms / max(start.elapsed_time(end), 1e-3))))
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(iters):
            fn()
    g.replay(); torch.cuda.synchronize()
    start.record(); g.replay(); end.record(); end.synchronize()
    return start.elapsed_time(end) / iters

for L in spec["layers"]:
    for dt in spec["dtypes"]:
        torch.backends.cudnn.allow_tf32 = dt == "tf32"
        t = dtypes[dt]
        # bench's layouts for the type (channels_last for tensor cores; both for strict float32, fastest kept)
        names = spec["layouts"].get(dt, "NHWC").split("/")
        best = {}
        for name in names:
            fmt = torch.channels_last if name == "NHWC" else torch.contiguous_format
            x = torch.randn(L["n"], L["c"], L["h"], L["w"], device=dev, dtype=t).to(memory_format=fmt)
            w = torch.randn(L["k"], L["c"], L["r"], L["s"], device=dev, dtype=t).to(memory_format=fmt)
            st, pad = [L["stride"]] * 2, [L["pad"]] * 2
            y = F.conv2d(x, w, stride=st, padding=pad)
            dy = torch.randn_like(y).contiguous(memory_format=fmt)
            ops = {
                "fwd": lambda: F.conv2d(x, w, stride=st, padding=pad),
                "bwd_data": lambda: torch.ops.aten.convolution_backward(dy, x, w, None, st, pad, [1, 1], False,
                                                                        [0, 0], 1, [True, False, False]),
                "bwd_filter": lambda: torch.ops.aten.convolution_backward(dy, x, w, None, st, pad, [1, 1], False,
                                                                          [0, 0], 1, [False, True, False]),
            }
            for d in spec["directions"]:
                ms = timed(ops[d], spec["target_ms"])
                best[d] = min(best.get(d, (ms, name)), (ms, name))
            del x, w, y, dy
        for d in spec["directions"]:
            out["rows"].append({"layer": L["name"], "dtype": dt, "dir": d, "ms": best[d][0], "layout": best[d][1]})
print(json.dumps(out))
"""


def torch_cudnn_path(torch_python: str) -> str:
    """The libcudnn.so.9 torch's own process maps, so bench measures that same file."""
    code = ("import torch, torch.nn.functional as F; "
            "F.conv2d(torch.ones(1,1,3,3,device='cuda'), torch.ones(1,1,1,1,device='cuda')); "
            "print([l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn.so' in l][0])")
    return subprocess.run([torch_python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch-python", default="/opt/torch/.venv/bin/python")
    ap.add_argument("--library", help="cuDNN for bench (default: the one torch loads)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dtype", action="append", default=[])
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--save-bench", metavar="FILE", help="also write bench's JSON document there")
    args = ap.parse_args(argv)
    library = args.library or torch_cudnn_path(args.torch_python)
    cmd = [sys.executable, "-m", "cudnn_doctor", "bench", "--json", "--no-cpu", "--library", library,
           "--timeout", "400"]
    cmd += ["--quick"] if args.quick else []
    for d in args.dtype:
        cmd += ["--dtype", d]
    for s in args.shape:
        cmd += ["--shape", s]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO)] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        sys.stderr.write("bench failed (exit %d): %s\n" % (proc.returncode, proc.stderr.strip()[-2000:]))
        return 1
    if args.save_bench:
        Path(args.save_bench).write_text(proc.stdout)
    layers = {}
    for row in doc["layers"]:
        shape = row["shape"]
        layers[row["layer"]] = {k: shape[k] for k in ("n", "c", "h", "w", "k", "r", "s", "stride", "pad")}
        layers[row["layer"]]["name"] = row["layer"]
    layouts = {row["dtype"]: row.get("layout") or "NHWC" for row in doc["layers"]}
    spec = {"layers": list(layers.values()), "dtypes": doc["plan"]["dtypes"], "directions": doc["plan"]["directions"],
            "layouts": layouts,
            "target_ms": 3.0 if args.quick else 10.0}
    tproc = subprocess.run([args.torch_python, "-c", TORCH_SCRIPT, json.dumps(spec)], capture_output=True, text=True)
    if tproc.returncode != 0:
        sys.stderr.write("torch failed: %s\n" % tproc.stderr.strip()[-2000:])
        return 1
    tdoc = json.loads(tproc.stdout.strip().splitlines()[-1])
    torch_ms: Dict[Tuple[str, str, str], float] = {(r["layer"], r["dtype"], r["dir"]): r["ms"] for r in tdoc["rows"]}
    torch_layout = {(r["layer"], r["dtype"], r["dir"]): r.get("layout", "") for r in tdoc["rows"]}
    print("bench: cuDNN %s at %s" % (doc["cudnn"]["version"], doc["cudnn"]["realpath"]))
    print("torch %s: cuDNN %s (cudnn.benchmark=True; bench's layout per type: %s; CUDA graphs)" % (
        tdoc["torch"], tdoc["cudnn"], ", ".join("%s %s" % kv for kv in layouts.items())))
    head = "%-12s %-5s %-10s %-28s %10s %10s %7s" % ("layer", "type", "dir", "bench algo (layout)", "bench TF/s",
                                                     "torch TF/s (layout)", "ratio")
    print(head)
    print("-" * len(head))
    ratios, sums = [], {}
    for row in doc["layers"]:
        flops = row["shape"]["flops"]
        count = row["shape"]["count"]
        for d in doc["plan"]["directions"]:
            e = row.get(d) or {}
            t = torch_ms.get((row["layer"], row["dtype"], d))
            if "time_ms" not in e or not t:
                print("%-12s %-5s %-10s %s" % (row["layer"], row["dtype"], d, "n/a (%s)" % (
                    e.get("error") or row.get("skipped") or row.get("error"))))
                continue
            b_tf, t_tf = flops / e["time_ms"] / 1e9, flops / t / 1e9
            ratio = b_tf / t_tf
            ratios.append(ratio)
            acc = sums.setdefault((row["dtype"], d), [0.0, 0.0, 0.0])
            acc[0] += flops * count
            acc[1] += e["time_ms"] * count
            acc[2] += t * count
            algo = "%s (%s)" % (e["algo"], e.get("layout") or "")
            t_text = "%.1f (%s)" % (t_tf, torch_layout.get((row["layer"], row["dtype"], d)))
            print("%-12s %-5s %-10s %-28s %10.1f %19s %6.2fx" % (row["layer"], row["dtype"], d, algo, b_tf, t_text,
                                                                 ratio))
    print()
    print("%-5s %-10s %12s %12s %7s" % ("type", "dir", "bench TF/s", "torch TF/s", "ratio"))
    for (dt, d), (fl, bms, tms) in sums.items():
        print("%-5s %-10s %12.1f %12.1f %6.2fx" % (dt, d, fl / bms / 1e9, fl / tms / 1e9, tms / bms))
    if ratios:
        print("\nlowest ratio %.2fx, median %.2fx over %d rows (goal: >= 0.90x everywhere)" % (
            min(ratios), sorted(ratios)[len(ratios) // 2], len(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
