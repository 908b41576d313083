#!/usr/bin/env bash
# Everything that needs the GPU machine, in one run: check, smoke on every copy, GPU tests, an install with
# its smoke test and rollback, and the benchmarks. Run from the repository root through the device tool.
set -u
out=${OUT:-/tmp/gpu-verify}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NO_COLOR=1
site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
{
echo "== nvidia-smi"; nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total --format=csv
echo "== cudnn-doctor check -v"; python3 -m cudnn_doctor check -v; echo "exit=$?"
python3 -m cudnn_doctor check --json > "$out/check.json"; echo "check --json exit=$?"
echo "== cudnn-doctor smoke --all"; python3 -m cudnn_doctor smoke --all; echo "exit=$?"
python3 -m cudnn_doctor smoke --all --json > "$out/smoke.json"; echo "smoke --json exit=$?"
echo "== cudnn-doctor check --smoke -q"; python3 -m cudnn_doctor check --smoke -q; echo "exit=$?"
echo "== cudnn-doctor explain"; python3 -m cudnn_doctor explain "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime version (9, 14, 0)"; echo "exit=$?"
echo "== cudnn-doctor matrix --cuda 13.0"; python3 -m cudnn_doctor matrix --cuda 13.0 | head -20
echo "== tests/gpu"; python3 -m pytest -q -rs -p no:cacheprovider tests/gpu; echo "exit=$?"
echo "== install the pip cuDNN repacked as NVIDIA's tarball, with the smoke test, then roll back"
python3 - "$site" <<'PY'
import sys
sys.path.insert(0, "tests")
from pathlib import Path
from archive_factory import repack_wheel_as_tarball
version = [p.name[:-len(".dist-info")].split("-")[1] for p in Path(sys.argv[1]).glob("nvidia_cudnn_cu*-*.dist-info")][0]
print(repack_wheel_as_tarball(Path(sys.argv[1]), Path("/tmp/repack"), version=version, cuda="13", xz_level=0))
PY
archive=$(ls /tmp/repack/*.tar.xz | head -1)
tk=/tmp/fake-cuda-13.0; rm -rf "$tk"; mkdir -p "$tk/include" "$tk/lib64"
echo '#define CUDA_VERSION 13000' > "$tk/include/cuda.h"
python3 -m cudnn_doctor install "$archive" --cuda-home "$tk" --dry-run | tail -5; echo "dry-run exit=$?"
/usr/bin/time -f "install wall %e s" python3 -m cudnn_doctor install "$archive" --cuda-home "$tk"; echo "install exit=$?"
ls -la "$tk/lib64" | head -12
python3 -m cudnn_doctor smoke --library "$tk/lib64/libcudnn.so.9"; echo "smoke installed exit=$?"
python3 -m cudnn_doctor rollback --cuda-home "$tk"; echo "rollback exit=$?"
find "$tk" | sort
echo "== benchmarks"
python3 benchmarks/check_bench.py --runs 7
python3 benchmarks/smoke_bench.py --runs 5
} 2>&1 | tee "$out/verify.txt"
