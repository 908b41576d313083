"""On a real GPU machine: the doctor's facts agree with nvidia-smi, nvcc and the real dynamic loader."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu


def _run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


@pytest.fixture(scope="module")
def doc():
    if not shutil.which("nvidia-smi") or _run(["nvidia-smi", "-L"]).returncode != 0:
        pytest.skip("no usable NVIDIA GPU here")
    proc = _run([sys.executable, "-m", "cudnn_doctor", "check", "--json"])
    return json.loads(proc.stdout)


def _smi(field):
    return _run(["nvidia-smi", "--query-gpu=%s" % field, "--format=csv,noheader"]).stdout.strip().splitlines()


def test_driver_matches_nvidia_smi(doc):
    driver = doc["facts"]["driver"]
    assert driver["version"] == _smi("driver_version")[0]
    header = _run(["nvidia-smi"]).stdout
    cuda = re.search(r"CUDA Version:\s*(\d+\.\d+)", header).group(1)
    assert driver["cuda_version"] == cuda
    assert driver["kernel_module_version"] == driver["version"]


def test_gpus_match_nvidia_smi(doc):
    gpus = doc["facts"]["gpus"]
    assert [g["compute_capability"] for g in gpus] == _smi("compute_cap")
    assert [g["uuid"] for g in gpus] == _smi("uuid")
    assert [g["name"] for g in gpus] == _smi("name")


def test_toolkit_behind_usr_local_cuda_matches_nvcc(doc):
    nvcc = "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("no toolkit at /usr/local/cuda")
    release = re.search(r"release (\d+\.\d+)", _run([nvcc, "--version"]).stdout).group(1)
    tk = next(t for t in doc["facts"]["toolkits"] if t["path"] == "/usr/local/cuda")
    assert tk["version"].startswith(release) and tk["version_source"]


def test_every_cudnn_the_loader_cache_knows_is_reported(doc):
    cache = _run(["ldconfig", "-p"]).stdout
    listed = {os.path.realpath(m) for m in re.findall(r"=> (\S*libcudnn\.so\.\d+)$", cache, re.M)}
    found = {os.path.realpath(c["path"]) for c in doc["facts"]["cudnn"]}
    assert listed <= found
    for copy in doc["facts"]["cudnn"]:
        assert copy["version"] and copy["version_source"] == "cudnnGetVersion"
        if copy["header_version"]:
            assert copy["header_version"] == copy["version"], copy


def test_pip_cudnn_of_this_interpreter_is_reported(doc):
    import importlib.util

    spec = importlib.util.find_spec("nvidia.cudnn")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("no nvidia-cudnn wheel in this interpreter")
    lib = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    pip = [c for c in doc["facts"]["cudnn"] if c["origin"] == "pip" and os.path.realpath(c["directory"]) ==
           os.path.realpath(lib)]
    assert pip and pip[0]["package"].startswith("nvidia-cudnn")


def _loaded_by(code: str) -> str:
    """The libcudnn file a real process maps after running ``code``."""
    probe = code + "\nprint([l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn.so' in l][0])"
    proc = _run([sys.executable, "-c", probe])
    assert proc.returncode == 0, proc.stderr
    return os.path.realpath(proc.stdout.strip().splitlines()[-1])


def test_plain_process_resolution_matches_the_real_loader(doc):
    resolved = doc["facts"]["loader"]["resolved"]["libcudnn.so.9"]
    if not resolved["path"]:
        pytest.skip("no libcudnn.so.9 for a plain process")
    real = _loaded_by("import ctypes; ctypes.CDLL('libcudnn.so.9')")
    assert os.path.realpath(resolved["realpath"]) == real


def test_torch_resolution_matches_what_torch_loads(doc):
    torch = [f for f in doc["facts"]["python"]["frameworks"] if f["name"] == "torch" and f["resolved_cudnn"]]
    if not torch:
        pytest.skip("no CUDA torch here")
    real = _loaded_by("import torch; torch.backends.cudnn.version()")
    assert os.path.realpath(torch[0]["resolved_cudnn"]["realpath"]) == real
