"""GPU tier: tests marked `gpu` run only where a GPU answers (NVML in a child process, else nvidia-smi), else skip."""
from __future__ import annotations

import functools
import shutil
import subprocess
from typing import Any, Dict, List, Tuple

import pytest

from cudnn_doctor.native.runner import run_native


def _nvml() -> Tuple[List[Dict[str, Any]], str]:
    [[answer]] = run_native([[{"op": "nvml"}]], timeout=30.0)
    if "crashed" in answer or "timeout" in answer:
        return [], "NVML query did not finish: %s" % answer
    if answer.get("init_error") or answer.get("error"):
        return [], "NVML: %s" % (answer.get("init_error") or answer.get("error"))
    return list(answer.get("gpus") or []), "NVML sees no GPU"


def _nvidia_smi() -> Tuple[List[Dict[str, Any]], str]:
    """Second opinion, for an interpreter without nvidia-ml-py."""
    if not shutil.which("nvidia-smi"):
        return [], "no nvidia-smi"
    proc = subprocess.run(["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=60)
    gpus = []
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        name, _, cc = line.rpartition(",")
        major, _, minor = cc.strip().partition(".")
        gpus.append({"name": name.strip(), "cc": [int(major), int(minor or 0)]})
    return gpus, "nvidia-smi: %s" % (proc.stderr.strip() or "no GPU")


@functools.lru_cache(maxsize=1)
def gpu_survey() -> Tuple[List[Dict[str, Any]], str]:
    """(GPUs with name and cc, why none): a crash or hang of the driver counts as no GPU."""
    gpus, why = _nvml()
    if not gpus:
        gpus, why_smi = _nvidia_smi()
        why = "%s; %s" % (why, why_smi)
    return gpus, why


def pytest_collection_modifyitems(config, items):
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    gpus, why = gpu_survey()
    if not gpus:
        skip = pytest.mark.skip(reason="needs a usable NVIDIA GPU (%s)" % why)
        for item in marked:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def nvml_gpus() -> List[Dict[str, Any]]:
    """The GPUs as NVML (or nvidia-smi) lists them: at least name and cc ([major, minor])."""
    return gpu_survey()[0]
