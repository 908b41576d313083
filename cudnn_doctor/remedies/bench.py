"""Fixes for what `bench` measures: wrong numbers, a slow or throttled GPU, a narrow PCIe link, workspace size."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..model import Fix
from .acting import doctor, on_machine, set_variable, target_shell, unset_variable
from .shell import run, said, stated

MIB = 1 << 20


def workspace_fix(cap_bytes: float) -> Fix:
    """The seeds' DL4J advice (seeds/000) and the other frameworks' real knobs for the same trade-off, with the
    cap measured here (so the line runs as printed)."""
    cap = max(1, int(cap_bytes // MIB))
    # The DL4J and PyTorch settings are lines of the user's program (words); the exports are the shell's.
    torch, tf = set_variable("CUDNN_CONV_WSCAP_DBG", cap), set_variable("TF_CUDNN_WORKSPACE_LIMIT_IN_MB", cap)
    return run(torch, tf, shell=target_shell(), text="DL4J: .cudnnAlgoMode(ConvolutionLayer.AlgoMode.NO_WORKSPACE) on "
               "the NeuralNetConfiguration.Builder or the ConvolutionLayer.Builder; PyTorch: `%s` (cuDNN's own "
               "workspace cap, MiB) and torch.backends.cudnn.benchmark = False; TensorFlow: `%s` (default 4096)" % (
                   torch, tf))


def wrong_results_fix() -> Fix:
    return said("%s  # then `%s` to test each cuDNN copy, and `%s` for memory errors", doctor("check"),
                doctor("smoke --all"), on_machine("nvidia-smi -q -d ECC,PAGE_RETIREMENT", privileged=False))


def slow_gpu_fix(causes: Sequence[str], nvml: Mapping[str, Any]) -> Fix:
    """What to do about a GPU below its healthy share of peak, by the cause seen."""
    if any("TF32_OVERRIDE" in c for c in causes):
        return run(unset_variable("NVIDIA_TF32_OVERRIDE"), shell=target_shell())
    if any("power limit" in c for c in causes):
        return said("%s  # restore the default power limit", on_machine("nvidia-smi -pl %.0f"
                                                                       % nvml["power_default_limit_w"]))
    return said("%s  # see what holds the clocks down; check cooling and power",
                on_machine("nvidia-smi -q -d PERFORMANCE,CLOCK,POWER", privileged=False))


def throttled_fix() -> Fix:
    return said("%s  # then check cooling, power cables and `%s`", on_machine("nvidia-smi -q -d PERFORMANCE",
                                                                              privileged=False),
                on_machine("nvidia-smi -q -d POWER", privileged=False))


def pcie_link_fix() -> Fix:
    return said("%s  # reseat the card or move it to a full-width slot",
                on_machine("nvidia-smi -q -d PCIE", privileged=False))


def cudnn_slower_than_plain_fix() -> Fix:
    return said("%s  # is this cuDNN built for this GPU and CUDA?", doctor("check"))


def unknown_peak_fix() -> Fix:
    return stated("Add its dense peaks to compat/gpu_peaks.toml with the datasheet as source")
