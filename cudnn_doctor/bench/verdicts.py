"""Bench's findings (CD95x): wrong results, cuDNN slower than it should be and why, workspace advice."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ..knowledge import load_compat
from ..model import Finding, Severity
from .shapes import DIRECTIONS

GIB = float(1 << 30)
MIB = 1 << 20


def workspace_fix(cap_bytes: float) -> str:
    """The seeds' DL4J advice (seeds/000) and the other frameworks' real knobs for the same trade-off, with the
    cap measured here (so the line runs as printed)."""
    cap = max(1, int(cap_bytes // MIB))
    return ("DL4J: `.cudnnAlgoMode(ConvolutionLayer.AlgoMode.NO_WORKSPACE)` on the NeuralNetConfiguration.Builder "
            "or the ConvolutionLayer.Builder; "
            "PyTorch: `export CUDNN_CONV_WSCAP_DBG=%d` (cuDNN's own workspace cap, MiB) and "
            "`torch.backends.cudnn.benchmark = False`; "
            "TensorFlow: `export TF_CUDNN_WORKSPACE_LIMIT_IN_MB=%d` (default 4096)" % (cap, cap))
BAD_THROTTLES = ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown")


def _healthy() -> Dict[str, Any]:
    return load_compat().gpu_peaks()["healthy"]


def _wrong_results(report: Dict[str, Any]) -> List[Finding]:
    bad = []
    for path in ("cudnn", "gpu_plain"):
        got = (report.get("seed_raw") or {}).get(path) or {}
        for check in got.get("checks", []):
            if not check.get("ok"):
                bad.append({"where": "seed network, %s" % path, "op": check.get("op"), "worst": check.get("worst")})
    for row in report.get("layers", []):
        for direction in DIRECTIONS:
            entry = row.get(direction) or {}
            check = entry.get("check")
            if check and not check.get("ok"):
                bad.append({"where": "%s %s %s" % (row["layer"], row["dtype"], direction), "algo": entry.get("algo"),
                            "worst": check.get("worst"), "max_error": check.get("max_error")})
    if not bad:
        return []
    first = bad[0]
    return [Finding(
        "CD950", Severity.ERROR, "cuDNN returned wrong numbers: %s" % first["where"],
        detail=("The first result of %d operation(s) differs from the CPU reference. A fast wrong answer trains a "
                "wrong model: usually a cuDNN build that does not match this driver or GPU, or failing GPU memory."
                % len(bad)),
        fix="cudnn-doctor check  # then `cudnn-doctor smoke --all` to test each cuDNN copy, and "
            "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` for memory errors",
        evidence={"failures": bad[:10]}, alias="bench-wrong-result")]


def _causes(nvml: Mapping[str, Any], dtype: str, env: Mapping[str, str]) -> List[str]:
    causes = []
    reasons = [r for r in nvml.get("throttle_reasons", []) if r in BAD_THROTTLES]
    if reasons:
        causes.append("the GPU is throttled (%s)" % ", ".join(reasons))
    limit, default = nvml.get("power_limit_w"), nvml.get("power_default_limit_w")
    if limit and default and limit < 0.9 * default:
        causes.append("the power limit is %.0f W, below the board's default %.0f W" % (limit, default))
    clock, top = nvml.get("sm_clock_mhz"), nvml.get("sm_clock_max_mhz")
    if clock and top and clock < 0.7 * top:
        causes.append("the SM clock is %d MHz of %d MHz" % (clock, top))
    if dtype == "tf32" and env.get("NVIDIA_TF32_OVERRIDE") == "0":
        causes.append("NVIDIA_TF32_OVERRIDE=0 switches TF32 off for every library in this environment")
    return causes


def _slow(report: Dict[str, Any], env: Mapping[str, str]) -> List[Finding]:
    peak = report.get("peak")
    if not peak:
        return []
    minimum = _healthy()["min_peak_fraction"]
    nvml = report.get("nvml") or {}
    out = []
    for total in report.get("totals", []):
        if total["direction"] != "fwd" or total.get("peak_fraction") is None:
            continue
        floor = minimum.get(total["dtype"])
        if floor is None or total["peak_fraction"] >= floor:
            continue
        causes = _causes(nvml, total["dtype"], env)
        fix = ("sudo nvidia-smi -pl %.0f  # restore the default power limit" % nvml["power_default_limit_w"]
               if any("power limit" in c for c in causes) else
               "nvidia-smi -q -d PERFORMANCE,CLOCK,POWER  # see what holds the clocks down; check cooling and power")
        if any("TF32_OVERRIDE" in c for c in causes):
            fix = "unset NVIDIA_TF32_OVERRIDE"
        out.append(Finding(
            "CD951", Severity.WARNING,
            "cuDNN reaches %.0f%% of this GPU's %s peak (%.1f of %.0f TFLOP/s)" % (
                100 * total["peak_fraction"], total["dtype"].upper(), total["tflops"], total["peak_tflops"]),
            detail=("A healthy %s reaches at least %.0f%% on these layers. Likely cause: %s." % (
                peak["model"], 100 * floor,
                "; ".join(causes) if causes else
                "no throttling is visible, so suspect a cuDNN build without precompiled engines for this GPU "
                "(compute capability %s) or a debug/fallback path" % (report.get("gpu") or {}).get("cc"))),
            fix=fix, evidence={"total": total, "causes": causes}, alias="bench-slow"))
    return out


def _throttled(report: Dict[str, Any]) -> List[Finding]:
    nvml = report.get("nvml") or {}
    reasons = [r for r in nvml.get("throttle_reasons", []) if r in BAD_THROTTLES]
    out = []
    if reasons:
        out.append(Finding(
            "CD952", Severity.WARNING, "The GPU was throttled: %s" % ", ".join(reasons),
            detail="Throttled clocks slow every kernel, cuDNN's included.",
            fix="nvidia-smi -q -d PERFORMANCE  # then check cooling, power cables and `nvidia-smi -q -d POWER`",
            evidence={k: nvml.get(k) for k in ("throttle_reasons", "sm_clock_mhz", "sm_clock_max_mhz",
                                               "power_limit_w", "power_default_limit_w", "temperature_c")},
            alias="gpu-throttled"))
    width, width_max = nvml.get("pcie_width"), nvml.get("pcie_width_max")
    if width and width_max and width < width_max:
        out.append(Finding(
            "CD953", Severity.WARNING, "PCIe link runs at x%d of x%d lanes" % (width, width_max),
            detail=("A narrow link slows every host-device copy (data loading, checkpoints); convolutions on the GPU "
                    "are not affected. An idle link may lower its generation to save power, but not its width."),
            fix="nvidia-smi -q -d PCIE  # reseat the card or move it to a full-width slot",
            evidence={k: nvml.get(k) for k in ("pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max")},
            alias="pcie-link-degraded"))
    return out


def _workspace(report: Dict[str, Any]) -> List[Finding]:
    free = (report.get("gpu") or {}).get("memory_free")
    heavy = []
    slowdowns = []
    largest = 0
    for row in report.get("layers", []):
        for direction in DIRECTIONS:
            entry = row.get(direction) or {}
            if "workspace" not in entry:
                continue
            largest = max(largest, entry["workspace"])
            if free and entry["workspace"] > _healthy()["workspace_warn_fraction"] * free:
                heavy.append((entry["workspace"], row["layer"], row["dtype"], direction, entry))
            if entry.get("no_workspace") and entry["no_workspace"].get("slowdown"):
                slowdowns.append(entry["no_workspace"]["slowdown"])
    out = []
    if heavy:
        heavy.sort(reverse=True)
        ws, layer, dtype, direction, entry = heavy[0]
        nows = entry.get("no_workspace") or {}
        out.append(Finding(
            "CD954", Severity.WARNING,
            "cuDNN's fastest %s algorithm for %s (%s) needs %.1f GiB of workspace, %.0f%% of the free GPU memory" % (
                direction, layer, dtype, ws / GIB, 100.0 * ws / free),
            detail=("With a real model's activations beside it this may not fit, and frameworks then fail at start-up "
                    "with odd errors (DL4J's warning in seeds/000). The fastest algorithm without workspace, %s, "
                    "is %.2fx slower on this layer." % (nows.get("algo", "none"), nows.get("slowdown") or 0)),
            # The cap: the share of free memory a workspace may take before it crowds out the model.
            fix=workspace_fix(_healthy()["workspace_warn_fraction"] * free),
            evidence={"layers": [h[1:4] + (h[0],) for h in heavy[:10]], "free": free},
            alias="bench-workspace"))
    if slowdowns:
        worst = max(slowdowns)
        out.append(Finding(
            "CD955", Severity.INFO,
            "No-workspace algorithms cost up to %.1fx on these layers" % worst,
            detail=("What DL4J's NO_WORKSPACE mode (and a workspace cap elsewhere) trades for memory here, measured "
                    "layer by layer; the totals table shows it for all layers together."),
            # A cap at the largest workspace measured keeps every fastest algorithm: what memory that much buys.
            fix=workspace_fix(largest), evidence={"worst_slowdown": worst, "largest_workspace": largest},
            alias="bench-no-workspace-cost"))
    return out


def _plain_faster(report: Dict[str, Any]) -> List[Finding]:
    rows = {r["path"]: r for r in report.get("seed", [])}
    dnn, plain = rows.get("cudnn", {}).get("step_ms"), rows.get("gpu_plain", {}).get("step_ms")
    if dnn and plain and dnn > plain:
        return [Finding(
            "CD956", Severity.WARNING,
            "cuDNN (%.2f ms a step) is slower than naive CUDA kernels (%.2f ms) on the seed network" % (dnn, plain),
            detail="cuDNN should be several times faster than plain loops; it is likely running a fallback path.",
            fix="cudnn-doctor check  # is this cuDNN built for this GPU and CUDA?", evidence={"cudnn_ms": dnn,
                                                                                          "plain_ms": plain},
            alias="bench-cudnn-slower-than-cuda")]
    return []


def _unknown_gpu(report: Dict[str, Any]) -> List[Finding]:
    if report.get("peak") or not report.get("gpu"):
        return []
    return [Finding(
        "CD957", Severity.INFO, "No datasheet peak is known for %s" % report["gpu"].get("name"),
        detail="bench measures it anyway; the fractions of peak are left out.",
        fix="Add its dense peaks to compat/gpu_peaks.toml with the datasheet as source",
        evidence={"name": report["gpu"].get("name"), "sm_count": report["gpu"].get("sm_count")},
        alias="gpu-peak-unknown")]


def judge(report: Dict[str, Any], env: Optional[Mapping[str, str]] = None) -> List[Finding]:
    """Pure: the findings for a bench report (see commands/bench.py for its shape)."""
    env = env or {}
    findings: List[Finding] = []
    for rule in (_wrong_results, _plain_faster, _throttled, _unknown_gpu, _workspace):
        findings += rule(report)
    findings += _slow(report, env)
    return findings
