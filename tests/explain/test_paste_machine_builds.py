"""Issue 44 ("the same judge"): a PyTorch build without kernels for the paste's GPU is answered with the build check
would choose on the machine the paste describes: best_torch_variant over compat's rows, with the paste's driver,
GPU and Python (each row's Python range is read from its release's PyPI wheel tags: tests/knowledge/
test_pytorch_1x_rows.py). Releases before PyTorch's per-CUDA indexes are installed as PyTorch's own page says."""
from __future__ import annotations

import shlex

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from cudnn_doctor.explain import explain
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import DriverFacts, Facts, GpuFacts
from cudnn_doctor.queries import best_torch_variant
from cudnn_doctor.remedies.software import torch_source

NO_KERNEL = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
RTX3090_DRIVER_418 = ("1.6.0+cu101 10.1\n| NVIDIA-SMI 418.87.01    Driver Version: 418.87.01    CUDA Version: 10.1 |\n"
                      "|   0  GeForce RTX 3090    Off  | 00000000:01:00.0 Off |                  N/A |\n"
                      '  File "/home/u/.local/lib/python3.6/site-packages/torch/nn/modules/conv.py", line 419\n'
                      + NO_KERNEL)
GTX1080_DRIVER_418 = ("Python 3.6.9\ntorch 1.6.0+cu101\n"
                      "NVIDIA-SMI 418.87.00    Driver Version: 418.87.00    CUDA Version: 10.1\nGeForce GTX 1080\n"
                      + NO_KERNEL)


def _fix(text: str) -> str:
    return explain(text, check=False).explanation.fix.text


def _pip_words(fix: str) -> list:
    line = fix[fix.index("pip install"):].split(";")[0]
    return shlex.split(line)


def test_a_gpu_the_pastes_driver_cannot_drive_gets_the_driver_first_then_a_build_for_its_python():
    # RTX 3090 (sm_86) under driver 418 (CUDA 10.1, before Ampere): no build runs there. Python 3.6 caps PyTorch at
    # 1.10, whose CUDA 11.1 build has sm_86 (PyTorch's page lists 1.10.0+cu111; PyPI's 1.10.2 is the CUDA 10.2
    # build); CUDA 11.1 needs driver 455.23.
    fix = _fix(RTX3090_DRIVER_418)
    assert fix.index("455.23") < fix.index("torch==1.10.0+cu111"), fix
    words = _pip_words(fix)
    assert words[words.index("-f") + 1] == "https://download.pytorch.org/whl/torch_stable.html"
    assert Requirement(next(w for w in words if w.startswith("torch=="))).specifier.contains("1.10.0+cu111")


def test_a_build_the_pastes_driver_runs_is_chosen_and_never_the_one_that_failed():
    fix = _fix(GTX1080_DRIVER_418)
    assert "cu118" not in fix and "cu129" not in fix and "1.6.0+cu101" not in fix, fix
    words = _pip_words(fix)
    req = Requirement(next(w for w in words if w.startswith("torch==")))
    local = str(req.specifier).split("+")[1]
    compat = load_compat()
    # the build named is one the driver runs (418 runs CUDA 10.1 at most) and that has wheels for Python 3.6
    cuda = "%s.%s" % (local[2:-1], local[-1])
    assert compat.driver_runs_cuda("418.87.00", cuda)[0] is not False, fix
    row = next(r for r in compat.framework_rows("pytorch") if str(req.specifier).startswith("==" + r["torch"] + ".")
               and r["cuda"] == cuda)
    assert SpecifierSet(row["python"]).contains("3.6")


def test_the_python_filter_keeps_only_builds_with_wheels_for_it():
    compat = load_compat()
    ampere = Facts(driver=DriverFacts(version="535.104.05"), gpus=[GpuFacts(index=0, compute_capability="8.6")])
    assert best_torch_variant(ampere, compat, None, python="3.6")["torch"] == "1.10"
    newest = best_torch_variant(ampere, compat, None)
    assert newest is not None and newest["torch"] != "1.10"
    # CUDA 10.2 predates Ampere: with no table of a 1.x build's kernels, it is not offered for sm_86
    assert best_torch_variant(ampere, compat, "1.10.2", python="3.6")["cuda"] == "11.1"


def test_torch_source_follows_pytorchs_page_for_each_release():
    compat = load_compat()
    assert torch_source(compat, "1.10.2", "11.1") == \
        "torch==1.10.2+cu111 -f https://download.pytorch.org/whl/torch_stable.html"
    assert torch_source(compat, "1.8", "10.1") == "torch==1.8.0+cu101 -f https://download.pytorch.org/whl/torch_stable.html"
    assert torch_source(compat, "1.10.2", "10.2") == "torch==1.10.2"  # the build PyPI itself serves
    assert torch_source(compat, "2.5.1", "12.4") == "torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124"
    assert torch_source(compat, None, "12.8") == "torch --index-url https://download.pytorch.org/whl/cu128"
    # No per-CUDA index serves CUDA 10.0 or 9.2 (every release built for them predates the indexes): the newest
    # release built for it is named, as its own page gives it (ivadomed#69: "found version 10000")
    assert torch_source(compat, None, "10.0") == "torch==1.2"
    assert torch_source(compat, None, "9.2") == "torch==1.7.0+cu92 -f https://download.pytorch.org/whl/torch_stable.html"


def test_a_driver_of_cuda_10_0_gets_the_newest_pytorch_built_for_it():
    fix = explain("AssertionError: \nThe NVIDIA driver on your system is too old (found version 10000).\n",
                  check=False).explanation.fix
    assert "pip install --force-reinstall torch==1.2" in fix.commands, fix.commands
    assert "whl/cu100" not in fix.text
