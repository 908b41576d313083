"""cProfile of each probe, and of the rules, in one `check --json` run made serial (no deadline threads), so a
profile holds only its own probe's work. Prints, for each probe or phase over
--min-ms, its time and its functions by own time. A profiler slows call-heavy code: compare phases with each
other, and take whole-process times from check_bench.py.

    python3 benchmarks/probe_profile.py [--min-ms 4] [--top 12]
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import sys
import time

from serial_probes import plain_call

PROFILES = {}  # name -> (Profile, wall ms)


def _profiled(name, fn, *args, **kwargs):
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    try:
        return fn(*args, **kwargs)
    finally:
        prof.disable()
        PROFILES[name] = (prof, (time.perf_counter() - start) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-ms", type=float, default=4.0)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    import cudnn_doctor.probes as probes
    import cudnn_doctor.probes.executor as executor
    import cudnn_doctor.rules as rules

    real_meanwhile = probes._meanwhile

    def meanwhile(work):
        _profiled("(the rules' imports, while the native child works)", real_meanwhile, work)

    real_guard, real_evaluate = probes.guard, rules.evaluate
    executor.run_bounded = plain_call
    probes._meanwhile = meanwhile
    probes.guard = lambda facts, name, fn: _profiled("probe " + name, real_guard, facts, name, fn)
    rules.evaluate = lambda *a, **k: _profiled("rules.evaluate", real_evaluate, *a, **k)
    from cudnn_doctor.cli import main as cli_main
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            cli_main(["check", "--json"])
        except SystemExit:
            pass
    for name, (prof, ms) in sorted(PROFILES.items(), key=lambda kv: -kv[1][1]):
        if ms < args.min_ms:
            continue
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.sort_stats("tottime").print_stats(args.top)
        body = out.getvalue()
        body = body[body.find("   ncalls"):] if "   ncalls" in body else body
        print("== %s: %.1f ms (profiled)" % (name, ms))
        print("\n".join(line.replace(os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/", "")
                        for line in body.strip().splitlines()))
        print()


if __name__ == "__main__":
    main()
