"""CD95x: what `bench` measured, judged (wrong numbers, a slow or throttled GPU, PCIe width, workspace size).

These rules read the bench run in RuleContext.bench, a BenchResult (and the environment it ran in, RuleContext.env); they belong
to the bench stage, so `check` never runs them, but `check --list-checks` lists them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from ..knowledge import Compat
from ..model import BENCH_DIRECTIONS as DIRECTIONS, Facts, Finding, Severity
from ..remedies.bench import (cudnn_slower_than_plain_fix, pcie_link_fix, slow_gpu_fix, throttled_fix,
                              unknown_peak_fix, workspace_fix, wrong_results_fix)
from . import BENCH, RuleContext, rule
from .common import compat_of, finding

if TYPE_CHECKING:
    from ..run_results import BenchResult

GIB = float(1 << 30)

BAD_THROTTLES = ("sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                 "hw_power_brake_slowdown")


def healthy(compat: Compat) -> Dict[str, Any]:
    """What a healthy GPU reaches (compat/gpu_peaks.toml [healthy])."""
    shares: Dict[str, Any] = compat.gpu_peaks()["healthy"]
    return shares


@rule("CD950", "bench-wrong-result", "cuDNN returned numbers that differ from the CPU reference", stage=BENCH,
      section="policy")
def wrong_results(facts: Facts, ctx: RuleContext) -> List[Finding]:
    report = ctx.bench
    if report is None:
        return []
    bad = []
    for path in ("cudnn", "gpu_plain"):
        got = report.seed_raw.get(path) or {}
        for check in got.get("checks", []):
            if not check.get("ok"):
                bad.append({"where": "seed network, %s" % path, "op": check.get("op"), "worst": check.get("worst")})
    for row in report.layers:
        for direction in DIRECTIONS:
            entry = row.get(direction) or {}
            check = entry.get("check")
            if check and not check.get("ok"):
                bad.append({"where": "%s %s %s" % (row["layer"], row["dtype"], direction), "algo": entry.get("algo"),
                            "worst": check.get("worst"), "max_error": check.get("max_error")})
    if not bad:
        return []
    first = bad[0]
    return [finding(
        Severity.ERROR, "cuDNN returned wrong numbers: %s" % first["where"],
        detail=("The first result of %d operation(s) differs from the CPU reference. A fast wrong answer trains a "
                "wrong model: usually a cuDNN build that does not match this driver or GPU, or failing GPU memory."
                % len(bad)),
        remedy=wrong_results_fix(),
        evidence={"failures": bad[:10]})]


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


@rule("CD951", "bench-slow", "cuDNN reaches less of the GPU's peak than a healthy GPU", stage=BENCH, section="policy")
def slow(facts: Facts, ctx: RuleContext) -> List[Finding]:
    report, env, compat = ctx.bench, ctx.env or {}, compat_of(ctx)
    peak = report.peak if report is not None else None
    if report is None or not peak:
        return []
    minimum = healthy(compat)["min_peak_fraction"]
    nvml = report.nvml
    out = []
    for total in report.totals:
        if total["direction"] != "fwd" or total.get("peak_fraction") is None:
            continue
        floor = minimum.get(total["dtype"])
        if floor is None or total["peak_fraction"] >= floor:
            continue
        causes = _causes(nvml, total["dtype"], env)
        out.append(finding(
            Severity.WARNING,
            "cuDNN reaches %.0f%% of this GPU's %s peak (%.1f of %.0f TFLOP/s)" % (
                100 * total["peak_fraction"], total["dtype"].upper(), total["tflops"], total["peak_tflops"]),
            detail=("A healthy %s reaches at least %.0f%% on these layers. Likely cause: %s." % (
                peak["model"], 100 * floor,
                "; ".join(causes) if causes else
                "no throttling is visible, so suspect a cuDNN build without precompiled engines for this GPU "
                "(compute capability %s) or a debug/fallback path" % report.gpu.get("cc"))),
            remedy=slow_gpu_fix(causes, nvml), evidence={"total": total, "causes": causes}))
    return out


@rule("CD952", "gpu-throttled", "The GPU was throttled while bench ran", stage=BENCH, section="policy")
def throttled(facts: Facts, ctx: RuleContext) -> List[Finding]:
    nvml = ctx.bench.nvml if ctx.bench is not None else {}
    reasons = [r for r in nvml.get("throttle_reasons", []) if r in BAD_THROTTLES]
    if not reasons:
        return []
    return [finding(
        Severity.WARNING, "The GPU was throttled: %s" % ", ".join(reasons),
        detail="Throttled clocks slow every kernel, cuDNN's included.",
        remedy=throttled_fix(),
        evidence={k: nvml.get(k) for k in ("throttle_reasons", "sm_clock_mhz", "sm_clock_max_mhz",
                                           "power_limit_w", "power_default_limit_w", "temperature_c")})]


@rule("CD953", "pcie-link-degraded", "The GPU's PCIe link runs narrower than it can", stage=BENCH, section="policy")
def pcie_link(facts: Facts, ctx: RuleContext) -> List[Finding]:
    nvml = ctx.bench.nvml if ctx.bench is not None else {}
    width, width_max = nvml.get("pcie_width"), nvml.get("pcie_width_max")
    if not (width and width_max and width < width_max):
        return []
    return [finding(
        Severity.WARNING, "PCIe link runs at x%d of x%d lanes" % (width, width_max),
        detail=("A narrow link slows every host-device copy (data loading, checkpoints); convolutions on the GPU "
                "are not affected. An idle link may lower its generation to save power, but not its width."),
        remedy=pcie_link_fix(),
        evidence={k: nvml.get(k) for k in ("pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max")})]


HeavyLayer = Tuple[int, str, str, str, Dict[str, Any]]  # (workspace bytes, layer, dtype, direction, its entry)


def _workspace_scan(report: Optional[BenchResult], compat: Compat) -> Tuple[List[HeavyLayer], List[float], int]:
    """(layers whose fastest algorithm needs too much workspace, no-workspace slowdowns, largest workspace)."""
    free = report.gpu.get("memory_free") if report is not None else None
    heavy: List[HeavyLayer] = []
    slowdowns: List[float] = []
    largest = 0
    for row in report.layers if report is not None else []:
        for direction in DIRECTIONS:
            entry = row.get(direction) or {}
            if "workspace" not in entry:
                continue
            largest = max(largest, entry["workspace"])
            if free and entry["workspace"] > healthy(compat)["workspace_warn_fraction"] * free:
                heavy.append((entry["workspace"], row["layer"], row["dtype"], direction, entry))
            if entry.get("no_workspace") and entry["no_workspace"].get("slowdown"):
                slowdowns.append(entry["no_workspace"]["slowdown"])
    return heavy, slowdowns, largest


@rule("CD954", "bench-workspace", "cuDNN's fastest algorithm needs much of the free GPU memory", stage=BENCH,
      section="policy")
def workspace(facts: Facts, ctx: RuleContext) -> List[Finding]:
    report, compat = ctx.bench, compat_of(ctx)
    free = report.gpu.get("memory_free") if report is not None else None
    heavy, _, _ = _workspace_scan(report, compat)
    out: List[Finding] = []
    if heavy and free:  # a layer is heavy only against a known free memory
        heavy.sort(reverse=True)
        ws, layer, dtype, direction, entry = heavy[0]
        nows = entry.get("no_workspace") or {}
        out.append(finding(
            Severity.WARNING,
            "cuDNN's fastest %s algorithm for %s (%s) needs %.1f GiB of workspace, %.0f%% of the free GPU memory" % (
                direction, layer, dtype, ws / GIB, 100.0 * ws / free),
            detail=("With a real model's activations beside it this may not fit, and frameworks then fail at start-up "
                    "with odd errors (DL4J's warning in seeds/000). The fastest algorithm without workspace, %s, "
                    "is %.2fx slower on this layer." % (nows.get("algo", "none"), nows.get("slowdown") or 0)),
            # The cap: the share of free memory a workspace may take before it crowds out the model.
            remedy=workspace_fix(healthy(compat)["workspace_warn_fraction"] * free),
            evidence={"layers": [h[1:4] + (h[0],) for h in heavy[:10]], "free": free}))
    return out


@rule("CD955", "bench-no-workspace-cost", "What algorithms without workspace cost on these layers", stage=BENCH,
      section="policy")
def no_workspace_cost(facts: Facts, ctx: RuleContext) -> List[Finding]:
    _, slowdowns, largest = _workspace_scan(ctx.bench, compat_of(ctx))
    out: List[Finding] = []
    if slowdowns:
        worst = max(slowdowns)
        out.append(finding(
            Severity.INFO,
            "No-workspace algorithms cost up to %.1fx on these layers" % worst,
            detail=("What DL4J's NO_WORKSPACE mode (and a workspace cap elsewhere) trades for memory here, measured "
                    "layer by layer; the totals table shows it for all layers together."),
            # A cap at the largest workspace measured keeps every fastest algorithm: what memory that much buys.
            remedy=workspace_fix(largest), evidence={"worst_slowdown": worst, "largest_workspace": largest}))
    return out


@rule("CD956", "bench-cudnn-slower-than-cuda", "cuDNN is slower than naive CUDA kernels", stage=BENCH, section="policy")
def plain_faster(facts: Facts, ctx: RuleContext) -> List[Finding]:
    rows = {r["path"]: r for r in (ctx.bench.seed if ctx.bench is not None else [])}
    dnn, plain = rows.get("cudnn", {}).get("step_ms"), rows.get("gpu_plain", {}).get("step_ms")
    if dnn and plain and dnn > plain:
        return [finding(
            Severity.WARNING,
            "cuDNN (%.2f ms a step) is slower than naive CUDA kernels (%.2f ms) on the seed network" % (dnn, plain),
            detail="cuDNN should be several times faster than plain loops; it is likely running a fallback path.",
            remedy=cudnn_slower_than_plain_fix(), evidence={"cudnn_ms": dnn, "plain_ms": plain})]
    return []


@rule("CD957", "gpu-peak-unknown", "No datasheet peak is known for the GPU", stage=BENCH, section="policy")
def unknown_gpu(facts: Facts, ctx: RuleContext) -> List[Finding]:
    report = ctx.bench
    if report is None or report.peak or not report.gpu:
        return []
    return [finding(
        Severity.INFO, "No datasheet peak is known for %s" % report.gpu.get("name"),
        detail="bench measures it anyway; the fractions of peak are left out.",
        remedy=unknown_peak_fix(),
        evidence={"name": report.gpu.get("name"), "sm_count": report.gpu.get("sm_count")})]
