"""Read the GPU code of framework wheels and print compat/framework_builds.toml [wheel_code] rows.

    python scripts/read_build_code.py WHEEL...        # local .whl files (e.g. ~/.cache/cudnn-doctor-tests/wheels)
    python scripts/read_build_code.py --pip torch==2.14.1 tensorflow==2.20.0   # pip download them first

Each wheel's CUDA libraries (the ones `check` reads, cudnn_doctor/probes/gpu_code.py) are unpacked one at a time
and read with readers/fatbin.py; the CUDA a row names is the wheel's Requires-Dist pin where the derived knowledge
has it, else the CUDA major its libraries link. `cudnn-doctor update` does not do this: a wheel is 0.2-1 GB.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cudnn_doctor.knowledge import load_compat  # noqa: E402
from cudnn_doctor.refresh.wheel_code import project_of, wheel_code  # noqa: E402

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def fetch(spec: str, folder: str) -> str:
    argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
            "3.12", "-d", folder, spec]
    for platform in PLATFORMS:
        argv[5:5] = ["--platform", platform]
    before = set(os.listdir(folder))
    subprocess.run(argv, check=True)
    return os.path.join(folder, sorted(set(os.listdir(folder)) - before)[0])


def row(wheel: str) -> str:
    code = wheel_code(wheel)
    if code is None:
        return "# %s: no CUDA library with GPU code" % os.path.basename(wheel)
    name = os.path.basename(wheel)
    version = name.split("-")[1]
    pins = [r for r in load_compat().framework_pins() if r["project"] == code["project"] and r["version"] == version]
    tested = load_compat().tensorflow_row(version) if code["project"] == "tensorflow" else None
    cuda = (pins[0]["cuda"] if pins else "") or (tested["cuda"] if tested else "") or code["cuda_major"]
    fields = {"project": code["project"], "version": version, "cuda": cuda, "wheel": name,
              "library": ", ".join(code["libraries"]), "sass": code["sass"], "ptx": code["ptx"],
              "source": "https://pypi.org/project/%s/%s/" % (project_of(name), version)}
    return "  { %s }," % ", ".join("%s = %s" % (k, json.dumps(v)) for k, v in fields.items())


def main(argv: list) -> int:
    if argv[:1] == ["--pip"]:
        with tempfile.TemporaryDirectory() as folder:
            for spec in argv[1:]:
                print(row(fetch(spec, folder)), flush=True)
        return 0
    for wheel in argv:
        print(row(wheel), flush=True)
    return 0 if argv else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
