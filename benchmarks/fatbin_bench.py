"""Times the .nv_fatbin reader on real CUDA libraries, beside `cuobjdump --list-elf/--list-ptx` when present.

    python3 benchmarks/fatbin_bench.py LIBRARY...      (prints a table; cold = first read after the page cache
                                                        was not asked for, warm = the best of 5 further reads)
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cudnn_doctor.host import Host  # noqa: E402
from cudnn_doctor.probes.gpu_code import read_libraries  # noqa: E402


def _cuobjdump(path: str):
    tool = shutil.which("cuobjdump") or ("/usr/local/cuda/bin/cuobjdump" if os.path.exists(
        "/usr/local/cuda/bin/cuobjdump") else None)
    if not tool:
        return None, None
    start = time.perf_counter()
    out = ""
    for flag in ("--list-elf", "--list-ptx"):
        try:
            proc = subprocess.run([tool, flag, path], capture_output=True, text=True, timeout=40)
        except subprocess.TimeoutExpired:
            return None, None
        out += proc.stdout
    took = (time.perf_counter() - start) * 1000
    sass = sorted(set(re.findall(r"\.(sm_\d+a?)\.cubin", out)), key=lambda s: int(re.sub(r"\D", "", s)))
    ptx = sorted(set("compute_" + m for m in re.findall(r"\.sm_(\d+)a?\.ptx", out)), key=lambda s: int(s[8:]))
    return took, (sass, ptx)


def main(paths) -> None:
    host = Host()
    print("| library | MiB | containers | entries | cubins | PTX | reader cold ms | reader warm ms | "
          "cuobjdump ms | cuobjdump agrees |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in paths:
        start = time.perf_counter()
        got = read_libraries(host, [path])[0]
        cold = (time.perf_counter() - start) * 1000
        warm = []
        for _ in range(5):
            start = time.perf_counter()
            read_libraries(host, [path])
            warm.append((time.perf_counter() - start) * 1000)
        size = os.path.getsize(path) / (1 << 20)
        if got is None:
            print("| %s | %.0f | 0 | 0 | - | - | %.1f | %.1f | | |" % (path, size, cold, min(warm)))
            continue
        took, listed = _cuobjdump(path)
        agree = "" if listed is None else ("yes" if listed == (got["sass"], got["ptx"]) else "NO: %s %s" % listed)
        print("| %s | %.0f | %d | %d | %s | %s | %.1f | %.1f | %s | %s |" % (
            path, size, got["containers"], got["entries"], " ".join(got["sass"]), " ".join(got["ptx"]) or "-",
            cold, min(warm), "%.0f" % took if took else "n/a", agree or "n/a"), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
