"""Where the node health reads spend their time, by NVML function, for this tree and others; and whether the NVLink
error counters equal nvidia-smi nvlink -e's. Reads only; changes no GPU setting.

    python3 benchmarks/nvml_health_profile.py [--tree NAME=DIR ...] [--runs 3] [--nvml PATH]

Per tree (this checkout first): node_health's wall on its third run (NVML already started), then each NVML
function's calls and summed time (threads' times add up, so the sum may pass the wall); for a tree that reads the
NVLink counters only when asked (check --ready), once without and once with them. Then per GPU the error
counters four ways: every active link's nvmlDeviceGetNvLinkErrorCounter summed (the reference), each tree's
answer, and nvidia-smi nvlink -e's lines summed by their label.
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import threading
import time
from typing import Dict, List, Tuple

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_gpu_health(tree: str, label: str):
    """The gpu_health module of ``tree`` under a name of its own (two trees' copies side by side)."""
    path = os.path.join(tree, "cudnn_doctor", "native", "gpu_health.py")
    spec = importlib.util.spec_from_file_location("gpu_health_" + re.sub(r"\W", "_", label), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class Timed:
    """pynvml with every nvml* call counted and timed (thread-safe)."""

    def __init__(self, pynvml) -> None:
        self.pynvml = pynvml
        self.spent: Dict[str, List[float]] = collections.defaultdict(lambda: [0, 0.0])
        self.lock = threading.Lock()

    def __getattr__(self, name: str):
        fn = getattr(self.pynvml, name)
        if not callable(fn) or not name.startswith("nvml"):
            return fn

        def timed(*args):
            start = time.perf_counter()
            try:
                return fn(*args)
            finally:
                with self.lock:
                    entry = self.spent[name]
                    entry[0] += 1
                    entry[1] += time.perf_counter() - start
        return timed


def profile(module, pynvml, runs: int, **kwargs) -> Tuple[float, Timed, dict]:
    """(wall ms of the last run, its Timed wrapper, its answer)."""
    for _ in range(runs):
        timed = Timed(pynvml)
        start = time.perf_counter()
        answer = module.node_health(timed, **kwargs)
        wall = (time.perf_counter() - start) * 1000
    return wall, timed, answer


def print_profile(label: str, wall: float, timed: Timed, gpus: int) -> None:
    calls = sum(int(n) for n, _ in timed.spent.values())
    print("%s: node_health %.1f ms on %d GPUs, %d NVML calls" % (label, wall, gpus, calls))
    for name, (n, seconds) in sorted(timed.spent.items(), key=lambda kv: -kv[1][1]):
        if seconds * 1000 >= 0.2:
            print("    %-44s calls %4d  total %8.2f ms  per call %.3f ms" % (name, n, seconds * 1000,
                                                                          seconds * 1000 / n))


def reference_counters(pynvml, handle, links: List[dict]) -> Dict[str, int]:
    """nvidia-smi nvlink -e's way: each counter of each active link, one call each, summed."""
    names = (("replay", 0), ("recovery", 1), ("crc_flit", 2), ("crc_data", 3))
    totals: Dict[str, int] = {}
    for entry in links:
        if not entry["active"]:
            continue
        for name, counter in names:
            try:
                value = pynvml.nvmlDeviceGetNvLinkErrorCounter(handle, entry["link"], counter)
            except Exception:
                continue
            totals[name] = totals.get(name, 0) + int(value)
    return totals


def smi_counters(index: int) -> Dict[str, int]:
    """nvidia-smi nvlink -e -i INDEX's "Link N: <label>: <count>" lines, summed by label."""
    try:
        out = subprocess.run(["nvidia-smi", "nvlink", "-e", "-i", str(index)], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"(nvidia-smi failed: %s)" % exc: 0}
    sums: Dict[str, int] = {}
    for label, value in re.findall(r"Link \d+: ([^:\n]+?)\s*:\s*(\d+)", out):
        sums[label] = sums.get(label, 0) + int(value)
    return sums


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR", help="another tree to profile")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nvml", help="libnvidia-ml to use (default: the loader's libnvidia-ml.so.1)")
    args = parser.parse_args()
    import pynvml

    if args.nvml:
        import ctypes

        pynvml.nvmlLib = ctypes.CDLL(args.nvml)
    start = time.perf_counter()
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        print("NVML does not start here (%s): nothing to profile" % exc)
        return 0
    print("nvmlInit %.1f ms; driver %s" % ((time.perf_counter() - start) * 1000, pynvml.nvmlSystemGetDriverVersion()))
    gpus = pynvml.nvmlDeviceGetCount()
    trees = [("this tree", REPO)] + [tuple(spec.split("=", 1)) for spec in args.tree]  # type: ignore[misc]
    answers = {}
    for label, tree in trees:
        module = load_gpu_health(tree, label)
        wall, timed, answers[label] = profile(module, pynvml, args.runs)
        print_profile(label, wall, timed, gpus)
        if "counters" in inspect.signature(module.node_health).parameters:  # a tree that reads them only on ask
            wall, timed, answers[label] = profile(module, pynvml, args.runs, counters=True)
            print_profile(label + ", with the NVLink counters (check --ready)", wall, timed, gpus)
    first = trees[0][0]
    for label, _ in trees[1:]:
        print("%s's answer equals %s's (NVLink counters aside): %s" % (first, label, _same(answers[first],
                                                                                        answers[label])))
    own = load_gpu_health(REPO, "counters")
    print("NVLink error counters per GPU: reference (every link's call), each tree, nvidia-smi nvlink -e")
    for index in range(gpus):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        links = own._nvlinks(pynvml, handle, getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18), {})
        print("  GPU %d (%d links active)" % (index, sum(1 for e in links if e["active"])))
        print("    %-22s %s" % ("reference", reference_counters(pynvml, handle, links)))
        first = next((e["link"] for e in links if e["active"]), 0)
        asked = [(field, first) for _, field, _ in own._NVLINK_COUNTERS]
        print("    %-22s %s" % ("field rc (link %d)" % first, dict(zip(map(str, asked), [
            rc for rc, _ in own._field_values(pynvml, handle, asked)]))))
        for label, _ in trees:
            print("    %-22s %s" % (label, answers[label]["gpus"][index].get("nvlink_errors")))
        print("    %-22s %s" % ("nvidia-smi nvlink -e", smi_counters(index)))
    pynvml.nvmlShutdown()
    return 0


def _same(a: dict, b: dict) -> bool:
    """Equal answers, the NVLink counters left out (they are compared one by one below), and the NVLink P2P status
    of pairs a link joins directly (this tree no longer asks it there)."""
    def strip(answer: dict) -> dict:
        return dict(answer, gpus=[{k: v for k, v in g.items() if k != "nvlink_errors"} for g in answer["gpus"]],
                    pairs=[{k: v for k, v in p.items() if k != "p2p_nvlink"} for p in answer["pairs"]])
    return strip(a) == strip(b)


if __name__ == "__main__":
    sys.exit(main())
