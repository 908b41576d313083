"""Times `cudnn-doctor fleet DIR --image REF` on 1k/10k generated node reports (a quarter on a driver too old for
the image) beside plain `fleet DIR`: wall seconds, CPU seconds, peak memory. The image is a real one built with
umoci from NVIDIA's PyPI wheels (tests/image_factory.py), else a hand-written layout with the same Env."""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import List, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

import fleet_bench  # noqa: E402  (the same report writer and table)
from fleet_bench import measure  # noqa: E402  (the same wrapper: a fresh process per run)


def make_image(work: Path) -> str:
    import image_factory

    if image_factory.tools_missing() is None:
        try:
            layout, _ = image_factory.build_cuda_image(work)
            return "oci:%s:v2" % layout
        except RuntimeError:
            pass
    layout = image_factory.write_layout(work / "plain", [image_factory.tar_bytes([])], image_factory.ENV, "v2")
    return "oci:%s:v2" % layout


def generate(folder: Path, n: int) -> int:
    """n reports as `check --json` writes them; every fourth node's driver is R535 (CUDA 12.2)."""
    from cudnn_doctor.fingerprint import fingerprint_id

    rng = random.Random(n)

    def old_driver(doc: dict) -> dict:
        if rng.random() < 0.25:
            fields = dict(doc["fingerprint"]["fields"], driver="535.183.01", driver_cuda="12.2",
                          kernel_module="535.183.01")
            doc = dict(doc, fingerprint=dict(doc["fingerprint"], id=fingerprint_id(fields), fields=fields))
        return doc

    return fleet_bench.generate(folder, n, edit=old_driver)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    fleet = [sys.executable, "-m", "cudnn_doctor", "fleet"]
    work = Path(tempfile.mkdtemp(prefix="fleet-image-bench-"))
    rows: List[Tuple[str, ...]] = []
    load = os.getloadavg()
    try:
        ref = make_image(work)
        for n in (int(s) for s in args.sizes.split(",")):
            folder = work / ("reports-%d" % n)
            folder.mkdir()
            size = generate(folder, n)
            for name, argv in (("fleet DIR", fleet + [str(folder)]),
                               ("fleet DIR --image REF", fleet + [str(folder), "--image", ref]),
                               ("fleet DIR --image REF --json", fleet + [str(folder), "--image", ref, "--json"])):
                rows.append(fleet_bench.table_row(n, size, name, measure(argv, env, args.runs)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("Image: %s" % ref.split(":")[0] + (" (real: umoci, NVIDIA wheels)" if "layout" in ref else " (Env only)"))
    print("Load average before the runs: %.2f %.2f %.2f on %d cores" % (load + (os.cpu_count() or 0,)))
    fleet_bench.print_table(rows, args.runs)


if __name__ == "__main__":
    main()
