"""On a real GPU: every cuDNN copy on the machine runs the smoke convolution and matches the CPU."""
from __future__ import annotations

import glob
import json
import os
import site
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

from cudnn_doctor.smoke import run_smoke
from cudnn_doctor.smoke.choose import choose_libraries, driver_library

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("fix_target")]  # run_smoke writes its fix for Target()
REPO = Path(__file__).resolve().parents[2]
PATTERNS = ("/usr/lib/x86_64-linux-gnu/libcudnn.so.[0-9]", "/usr/lib64/libcudnn.so.[0-9]",
            "/usr/local/cuda*/lib64/libcudnn.so.[0-9]", "/usr/local/cuda*/lib/libcudnn.so.[0-9]")


def _globbed() -> List[str]:
    """A second opinion beside `check`'s probes: the usual system folders and this interpreter's site-packages."""
    dirs = [p for p in sys.path if p.endswith("site-packages")] + list(site.getsitepackages())
    patterns = list(PATTERNS) + [os.path.join(d, "nvidia", "cudnn", "lib", "libcudnn.so.[0-9]") for d in dirs]
    return [hit for pattern in patterns for hit in sorted(glob.glob(pattern))]


@pytest.fixture(scope="module")
def copies() -> Tuple[List[str], Optional[str]]:
    """(every cuDNN copy found, the libcuda the loader resolves)."""
    found: List[str] = []
    driver = None
    try:
        from cudnn_doctor.diagnose import collect_facts

        facts = collect_facts(root="/", env=None)
        found = choose_libraries(facts, all_copies=True)
        driver = driver_library(facts)
    except ImportError:
        pass
    seen = {os.path.realpath(p) for p in found}
    for path in _globbed():
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            found.append(path)
    if not found:
        pytest.fail("a GPU machine without any cuDNN copy: nothing to smoke-test")
    return found, driver


def test_every_cudnn_copy_matches_the_cpu(copies, nvml_gpus):
    libraries, driver = copies
    failures = []
    for lib in libraries:
        result = run_smoke(lib, device=0, timeout=180.0, driver_library=driver)
        print(result.summary)
        if not result.ok:
            failures.append("%s\n    why: %s\n    fix: %s" % (result.summary, result.diagnosis, result.fix))
            continue
        assert result.max_rel_error < 1e-5 and result.unwritten == 0 and result.nonfinite == 0
        # CUDA numbers devices fastest first, NVML by PCI bus: compare with the set, not index 0.
        assert result.gpu_name in {g.get("name") for g in nvml_gpus}
        assert result.gpu_cc in {"%d.%d" % tuple(g["cc"]) for g in nvml_gpus if g.get("cc")}
        assert result.algorithm and result.workspace_bytes is not None
        assert 0 < result.first_result_ms <= result.total_ms
    assert not failures, "\n".join(failures)


def test_every_visible_gpu_passes_with_the_loaders_cudnn(copies, nvml_gpus):
    libraries, driver = copies
    for device in range(len(nvml_gpus)):
        result = run_smoke(libraries[0], device=device, timeout=180.0, driver_library=driver)
        assert result.ok and result.device_index == device, result.summary


def test_a_device_index_past_the_last_gpu_is_the_drivers_invalid_device(copies, nvml_gpus):
    libraries, driver = copies
    result = run_smoke(libraries[0], device=len(nvml_gpus) + 7, timeout=180.0, driver_library=driver)
    assert not result.ok
    assert (result.status, result.status_code, result.failed_call) == ("CUDA_ERROR_INVALID_DEVICE", 101, "cuDeviceGet")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "cudnn_doctor", "smoke", *args], cwd=str(REPO), env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_smoke_all_passes():
    proc = _cli("--all", "--json")
    doc = json.loads(proc.stdout)
    summaries = "\n".join(r["summary"] for r in doc["results"])
    assert proc.returncode == 0 and doc["exit_code"] == 0, summaries + proc.stderr
    assert doc["results"] and all(r["ok"] for r in doc["results"])


def test_cli_smoke_default_passes_in_human_form():
    proc = _cli()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("[✓] cuDNN ")
