"""`matrix` knows GPUs by the names NVIDIA's CUDA GPUs list gives them and which driver branch drives each
architecture: the pair question with --driver and --gpu/--cc says DOES NOT WORK where the driver predates the GPU
(R470 and Hopper, R550 and Blackwell) or cuDNN ships no code for it (9.11+ below Turing), and CUDA with a driver
is one call."""
from __future__ import annotations

import json

import pytest
from clirunner import CliRunner
from hypothesis import given, settings, strategies as st

from cudnn_doctor.cli import app
from cudnn_doctor.versions import major_of
from hermetic import shipped_compat

COMPAT = shipped_compat()


def matrix(*args):
    return CliRunner().invoke(app, ["matrix", *args])


@pytest.mark.parametrize("args,why", [
    (("--cuda", "12.8", "--cudnn", "9.8.0", "--driver", "550", "--gpu", "B200"), "R570"),
    (("--cuda", "11.8", "--cudnn", "8.9.7", "--driver", "470", "--gpu", "H100"), "R520"),
    (("--cuda", "12.8", "--cudnn", "9.11.0", "--cc", "6.1"), "7.5"),
    (("--cuda", "12.8", "--driver", "550", "--gpu", "RTX 5090"), "R570"),
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--driver", "535", "--gpu", "Tesla K80"), "R470"),
])
def test_the_driver_or_cudnn_cannot_serve_the_gpu(args, why):
    result = matrix(*args)
    assert result.exit_code == 1, result.output
    assert "DOES NOT WORK" in result.stdout
    doc = json.loads(matrix(*args, "--json").stdout)
    failed = [r for r in doc["reasons"] if r["ok"] is False]
    assert failed and any(why in r["text"] for r in failed) and all("https://" in r["source"] for r in failed)


def test_cuda_with_a_driver_is_one_call():
    result = matrix("--cuda", "12.8", "--driver", "550")
    assert result.exit_code == 0 and "CUDA 12.8, driver 550" in result.stdout and "MINOR-VERSION" in result.stdout
    assert matrix("--cuda", "13.0", "--driver", "550").exit_code == 1


@pytest.mark.parametrize("name,cc", [
    ("RTX 4090", "8.9"), ("NVIDIA GeForce RTX 3090", "8.6"), ("RTX5090", "12.0"), ("A10G", "8.6"),
    ("GTX 1080 Ti", "6.1"), ("Tesla K80", "3.7"), ("Jetson Orin", "8.7"), ("V100", "7.0"), ("T4", "7.5"),
    ("A100-SXM4-80GB", "8.0"), ("NVIDIA H100 80GB HBM3", "9.0"), ("H200", "9.0"), ("B200", "10.0"), ("L4", "8.9"),
    ("L40S", "8.9"), ("RTX 4000 Ada", "8.9"), ("Quadro RTX 4000", "7.5"), ("GTX TITAN X", "5.2"),
    ("NVIDIA TITAN X", "6.1"), ("GB200", "10.0"), ("Jetson AGX Xavier", "7.2"),
])
def test_gpu_names_from_nvidias_list(name, cc):
    assert COMPAT.cc_for_gpu(name) == cc
    doc = json.loads(matrix("--cuda", "12.8", "--cudnn", "9.10.2", "--gpu", name, "--json").stdout)
    assert doc["query"]["cc"] == cc


def test_the_first_driver_of_an_architecture_is_the_driver_of_its_first_cuda():
    """The [architectures] first_driver_branch column agrees with the toolkit table (CUDA release notes Table 3)
    wherever that table reaches the architecture's first CUDA release."""
    checked = 0
    for arch in COMPAT.architectures():
        for cc in arch.ccs:
            floor = COMPAT.min_driver(arch.first_cuda_for(cc), "linux")
            if floor is None or not arch.first_driver_for(cc):
                continue
            assert str(major_of(floor.version or floor.branch)) == arch.first_driver_for(cc), (arch.name, cc, floor)
            checked += 1
    assert checked >= 10


@settings(max_examples=200, deadline=None)
@given(gpu=st.sampled_from(shipped_compat().gpu_names()), branch=st.integers(min_value=300, max_value=700))
def test_a_driver_too_old_for_the_gpus_first_cuda_never_works(gpu, branch):
    """Any listed GPU with any driver branch: DOES NOT WORK exactly when the branch is older than the driver of
    the GPU's first CUDA release, or newer than the last branch of a retired architecture."""
    arch = COMPAT.arch_for_cc(gpu.cc)
    ok, why, source = COMPAT.driver_drives_gpu(str(branch), gpu.cc)
    first = arch.first_driver_for(gpu.cc)
    last = arch.last_driver_branch
    expected = not ((first and branch < int(first)) or (last and branch > int(last)))
    assert ok is expected and source, (gpu, branch, why)
