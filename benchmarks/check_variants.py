"""`check --json` whole processes in three ways, interleaved: as shipped (the rules imported on the main thread
once the probes are done, while the native child works); with them imported on a thread beside the probes, as
round 6 shipped it; with a shorter interpreter-lock switch interval. Tells whether a thread beside the probes
wins or loses on this machine (threads share one lock: a probe that waits on a read may wait again for the
lock). Also the interpreter's own start, the floor under every Python tool here.

    python3 benchmarks/check_variants.py [--runs 15] [--tree DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANT = r'''
import sys, os
mode = os.environ["CHECK_VARIANT"]
if mode == "beside":
    import threading
    import cudnn_doctor.probes as probes
    real_collect = probes._collect
    def collect(host, timeout, meanwhile, *args, **kwargs):
        helper = threading.Thread(target=meanwhile, daemon=True) if meanwhile else None
        if helper:
            helper.start()
        try:
            return real_collect(host, timeout, None, *args, **kwargs)
        finally:
            if helper:
                helper.join()
    probes._collect = collect
elif mode == "switch 0.2 ms":
    sys.setswitchinterval(0.0002)
from cudnn_doctor.cli import main
sys.exit(main(["check", "--json"]))
'''


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tree", default=REPO)
    args = parser.parse_args()
    rows = {"python3 -c pass": [sys.executable, "-c", "pass"],
            "python3 -S -c pass": [sys.executable, "-S", "-c", "pass"]}
    for mode in ("as shipped", "beside", "switch 0.2 ms"):
        rows["check --json, " + mode] = [sys.executable, "-c", VARIANT]
    times = {name: [] for name in rows}
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.tree))
    for _ in range(args.runs):
        for name, argv in rows.items():
            mode = name.partition(", ")[2] or "as shipped"
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir(),
                           env=dict(env, CHECK_VARIANT=mode))
            times[name].append(time.perf_counter() - start)
    print("%-34s %8s %8s" % ("whole process (%d interleaved runs)" % args.runs, "median", "min"))
    for name, values in times.items():
        print("%-34s %7.1fms %7.1fms" % (name, statistics.median(values) * 1000, min(values) * 1000))


if __name__ == "__main__":
    main()
