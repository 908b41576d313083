"""On the GPU machine: what each installed framework really loads, beside what `check` predicts, per set-up."""
# The oracle is the framework itself: it runs a convolution on the GPU (so cuDNN and its sub-libraries are
# loaded for real), then this script reads /proc/self/maps and asks every mapped libcudnn for its version.
# The prediction is `cudnn-doctor check --json` run with the same environment. One line per (set-up,
# framework); a JSON file with both sides goes to $OUT.
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile

VENV_PY = os.environ.get("REALSTACK_PYTHON", "/opt/torch/.venv/bin/python3")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.environ.get("OUT", "/tmp")

PROBE = r"""
import ctypes, json, os, sys
fw = sys.argv[1]
res = {"framework": fw, "error": None, "reported": None}
try:
    if fw == "torch":
        import torch
        x = torch.randn(1, 3, 16, 16, device="cuda"); w = torch.randn(4, 3, 3, 3, device="cuda")
        torch.nn.functional.conv2d(x, w); torch.cuda.synchronize()
        res["reported"] = torch.backends.cudnn.version()
    elif fw == "cupy":
        import cupy, importlib.util
        # CuPy up to 13 has a cuDNN module (cupy_backends.cuda.libs.cudnn); CuPy 14 ships none.
        if importlib.util.find_spec("cupy_backends.cuda.libs.cudnn") is None:
            res["error"] = "this CuPy has no cuDNN module"
        else:
            from cupy_backends.cuda.libs import cudnn
            res["reported"] = cudnn.getVersion()
        cupy.ones(4).sum()
    elif fw == "jax":
        import jax, jax.numpy as jnp
        x = jnp.ones((1, 3, 16, 16)); w = jnp.ones((4, 3, 3, 3))
        jax.lax.conv(x, w, (1, 1), "SAME").block_until_ready()
        res["platform"] = jax.devices()[0].platform
except Exception as exc:  # the framework's own failure is part of the oracle
    res["error"] = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0][:300] if str(exc) else "")
maps = []
with open("/proc/self/maps") as fh:
    for line in fh:
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if "libcudnn" in os.path.basename(path) and path not in maps:
            maps.append(path)
res["maps"] = maps
versions = {}
for path in maps:
    try:
        lib = ctypes.CDLL(path)
        if hasattr(lib, "cudnnGetVersion"):
            versions[path] = lib.cudnnGetVersion()
    except OSError:
        pass
res["versions"] = versions
print(json.dumps(res))
"""


def system_cudnn_dir():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "libcudnn_graph.so.9 " in line or line.strip().startswith("libcudnn_graph.so.9"):
            return os.path.dirname(os.path.realpath(line.split("=>")[-1].strip()))
    return None


def setups(tmp):
    sysdir = system_cudnn_dir()
    yield "plain", {}
    if sysdir:
        yield "LD_LIBRARY_PATH=system cuDNN", {"LD_LIBRARY_PATH": sysdir}
        only_graph = os.path.join(tmp, "graph-only")
        os.makedirs(only_graph, exist_ok=True)
        for src in glob.glob(os.path.join(sysdir, "libcudnn_graph.so.9*")):
            dst = os.path.join(only_graph, os.path.basename(src))
            if not os.path.exists(dst):
                os.symlink(src, dst)
        yield "LD_LIBRARY_PATH=only system graph lib", {"LD_LIBRARY_PATH": only_graph}


def run_oracle(fw, extra):
    env = dict(os.environ, **extra)
    proc = subprocess.run([VENV_PY, "-c", PROBE, fw], capture_output=True, text=True, env=env, timeout=300)
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"framework": fw, "error": "probe crashed: %s" % proc.stderr.strip()[-300:], "maps": [], "versions": {}}


def run_check(extra):
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = REPO
    proc = subprocess.run([VENV_PY, "-m", "cudnn_doctor", "check", "--json"], capture_output=True, text=True,
                          env=env, timeout=300, cwd=REPO)
    return json.loads(proc.stdout)


FW_NAMES = {"torch": ("torch",), "cupy": ("cupy",), "jax": ("jax-cuda", "jaxlib")}


def predicted(report, fw):
    """The framework entries check found, and what it says each loads."""
    rows = []
    for entry in report["facts"]["python"]["frameworks"]:
        if entry["location"].startswith("/opt/torch/.venv") and entry["name"].startswith(FW_NAMES[fw]):
            res = entry.get("resolved_cudnn") or {}
            rows.append((entry["name"], res.get("realpath") or res.get("path"), entry.get("cudnn_loads")))
    return rows


def copy_version(report, realpath):
    for copy in report["facts"]["cudnn"]:
        if realpath and os.path.dirname(realpath) == copy.get("directory"):
            return copy.get("version")
    return None


def main():
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, extra in setups(tmp):
            report = run_check(extra)
            ids = sorted({f["id"] for f in report["findings"]})
            for fw in ("torch", "cupy", "jax"):
                oracle = run_oracle(fw, extra)
                shim = [p for p in oracle["maps"] if os.path.basename(p).startswith("libcudnn.so")]
                dirs = sorted({os.path.dirname(os.path.realpath(p)) for p in oracle["maps"]})
                pred = predicted(report, fw)
                pred_paths = [os.path.realpath(p) for _, p, _ in pred if p]
                # Agreement: the shim the process mapped is the file predicted, or nothing mapped and none predicted.
                agree = (any(os.path.realpath(shim[0]) == p for p in pred_paths) if shim else not pred_paths)
                mixed = len(dirs) > 1
                # CD709 names the framework whose cuDNN it finds mixed; another framework's CD709 is not this one's.
                mixed_found = any(f["id"] == "CD709" and
                                  str(f["evidence"].get("framework", "")).startswith(FW_NAMES[fw])
                                  for f in report["findings"])
                results.append({"setup": label, "framework": fw, "oracle": oracle, "predicted": pred,
                                "findings": ids, "mixed": mixed, "cd709": mixed_found,
                                "agree": agree and mixed == mixed_found})
                print("%-40s %-6s oracle: %s from %s%s | predicted: %s (%s)%s | %s" % (
                    label, fw, oracle.get("reported") or sorted(set(oracle["versions"].values())),
                    ", ".join(dirs) or "nothing", " MIXED" if mixed else "",
                    ", ".join(p for p in pred_paths) or "nothing",
                    ", ".join(str(copy_version(report, p)) for p in pred_paths),
                    " + mixed copies (CD709)" if mixed_found else "",
                    "AGREE" if agree and mixed == mixed_found else "DIFFER"))
                if oracle.get("error"):
                    print("    framework error: %s" % oracle["error"])
            print("    check findings: %s" % ", ".join(ids))
    with open(os.path.join(OUT, "realstack-gpu.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
