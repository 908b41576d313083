"""bench's arithmetic and references without a GPU: FLOPs, epoch extrapolation, peaks, CPU baseline, verdicts."""
from __future__ import annotations

import math

import pytest

from cudnn_doctor.bench import peaks, refcheck, shapes, summary, verdicts
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import bench as bench_rules
from cudnn_doctor.bench.shapes import ConvShape
from facts_factory import bench_result

# Tests here call builders (and judges) themselves: their fixes are written for Target().
pytestmark = pytest.mark.usefixtures("fix_target")

try:
    import numpy as np
except ImportError:  # the CPU baseline is the optional `bench` extra; CI installs it through the test extra
    np = None
needs_numpy = pytest.mark.skipif(np is None, reason="numpy (the `bench` extra) is not installed")


def test_flops_of_a_convolution_count_one_multiply_and_one_add_per_tap():
    s = ConvShape(64, 64, 56, 56, 64, 3, 3, 1, 1)
    assert (s.p, s.q) == (56, 56)
    assert s.flops() == 2 * 64 * 64 * 56 * 56 * 64 * 9
    strided = ConvShape(64, 128, 56, 56, 128, 3, 3, 2, 1)
    assert (strided.p, strided.q) == (28, 28)


def test_resnet50_has_its_53_convolutions_and_4_1_gflops_per_image():
    layers = shapes.resnet50(1)
    assert sum(s.count for s in layers) == 53
    # ResNet-50's well-known ~4.1 GMACs per 224x224 image = ~8.2 GFLOPs (convolutions only, no FC layer)
    total = sum(s.flops() * s.count for s in layers)
    assert 7.9e9 < total < 8.3e9
    assert {s.name for s in layers} >= set(shapes.QUICK_LAYERS)


def test_seed_network_step_flops_and_epoch_extrapolation():
    convs = shapes.seed_convs(32)
    assert [(c.p, c.q) for c in convs] == [(32, 32), (30, 30), (15, 15), (13, 13)]
    assert shapes.seed_step_flops(32) == 3 * sum(c.flops() for c in convs) - convs[0].flops()
    # 45,000 images at 32 a step is 1,407 steps (the last one part-full)
    assert shapes.epoch_seconds(0.01) == pytest.approx(14.07)
    assert shapes.epoch_seconds(1.0, batch=45000) == 1.0


def test_weighted_tflops_counts_each_layer_as_often_as_the_network_uses_it():
    a = ConvShape(1, 1, 10, 10, 1, 1, 1, count=3)  # 200 FLOPs
    b = ConvShape(1, 1, 10, 10, 1, 1, 1, count=1)
    assert shapes.weighted_tflops([(a, 1e-12), (b, 3e-12)]) == pytest.approx((600 + 200) / (3e-12 + 3e-12) / 1e12)


@pytest.mark.parametrize("text, why", [
    ("1,2,3", "give N,C,H,W,K,R,S"), ("1,2,3,4,5,6,a", "whole number"), ("0,1,8,8,1,3,3", "at least 1"),
    ("1,1,2,2,1,5,5", "larger than the padded input"),
])
def test_bad_shapes_are_refused_with_the_reason(text, why):
    with pytest.raises(ValueError, match=why):
        shapes.parse_shape(text)


def test_a_shape_with_stride_and_padding():
    s = shapes.parse_shape("32,256,28,28,256,3,3,2,1")
    assert (s.n, s.c, s.k, s.stride, s.pad, s.p) == (32, 256, 256, 2, 1, 14)


@pytest.mark.parametrize("name, sms, model", [
    ("NVIDIA H100 80GB HBM3", 132, "NVIDIA H100 SXM5"), ("NVIDIA H100 PCIe", 114, "NVIDIA H100 PCIe"),
    ("NVIDIA H100 NVL", 132, "NVIDIA H100 NVL"), ("NVIDIA H200", 132, "NVIDIA H200 SXM"),
    ("NVIDIA A100-SXM4-80GB", 108, "NVIDIA A100 SXM4"), ("NVIDIA A100 80GB PCIe", 108, "NVIDIA A100 PCIe"),
    ("NVIDIA A10", 72, "NVIDIA A10"), ("Tesla T4", 40, "Tesla T4"), ("NVIDIA L4", 58, "NVIDIA L4"),
    ("NVIDIA L40S", 142, "NVIDIA L40S"), ("Tesla V100-SXM2-32GB", 80, "Tesla V100 SXM2"),
    ("NVIDIA B200", 148, "NVIDIA B200 (HGX, 1000 W)"),
])
def test_datasheet_peaks_are_found_by_driver_name(name, sms, model):
    peak = peaks.find_peak(name, sms)
    assert peak is not None and peak.model == model
    assert peak.tflops["fp32"] > 0 and peak.boost_mhz > 1000 and peak.sm_count == sms


def test_peaks_tell_boards_apart_by_sm_count_and_know_pre_ampere_has_no_tf32():
    assert peaks.find_peak("NVIDIA H100 80GB HBM3", 114) is None  # not a known H100 SXM
    assert peaks.find_peak("GeForce GTX 1060", 10) is None
    v100 = peaks.find_peak("Tesla V100-PCIE-16GB", 80)
    assert v100.for_dtype("tf32") is None and v100.for_dtype("fp16") == 112.0
    h100 = peaks.find_peak("NVIDIA H100 80GB HBM3")
    # dense = the datasheet's sparse figure / 2 (989 TFLOPS TF32 with sparsity)
    assert h100.tflops["tf32"] == pytest.approx(989 / 2, rel=0.01)
    assert h100.tflops["fp16"] == h100.tflops["bf16"] == pytest.approx(2 * h100.tflops["tf32"], rel=0.01)


def test_peak_fractions():
    assert peaks.fraction(219.0, 989.5) == pytest.approx(0.2213, abs=1e-4)
    assert peaks.fraction(None, 10) is None and peaks.fraction(5, None) is None


def _conv_numpy(x, w, stride, pad):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p, q = (h + 2 * pad - r) // stride + 1, (wd + 2 * pad - s) // stride + 1
    y = np.zeros((n, k, p, q))
    for i in range(r):
        for j in range(s):
            patch = xp[:, :, i:i + stride * p:stride, j:j + stride * q:stride]
            y += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return y


@needs_numpy
@pytest.mark.parametrize("fmt", [refcheck.NCHW, refcheck.NHWC])
@pytest.mark.parametrize("stride, pad", [(1, 1), (2, 0), (2, 1)])
def test_sampled_references_match_a_full_convolution_and_its_gradients(fmt, stride, pad):
    rng = np.random.default_rng(3)
    n, c, h, w, k, r, s = 2, 3, 7, 7, 4, 3, 3
    x, wt = rng.standard_normal((n, c, h, w)), rng.standard_normal((k, c, r, s))
    g = refcheck.Conv(n, c, h, w, k, r, s, stride, pad, fmt)
    y = _conv_numpy(x, wt, stride, pad)
    dy = rng.standard_normal(y.shape)
    # gradients by the adjoint identity <conv(x), dy> = <x, dx> = <w, dw>, computed with numpy autodiff-free loops
    dx = np.zeros_like(x)
    dw = np.zeros_like(wt)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    dxp = np.zeros_like(xp)
    for i in range(r):
        for j in range(s):
            sl = (slice(None), slice(None), slice(i, i + stride * g.p, stride), slice(j, j + stride * g.q, stride))
            dw[:, :, i, j] = np.einsum("nchw,nkhw->kc", xp[sl], dy)
            dxp[sl] += np.einsum("nkhw,kc->nchw", dy, wt[:, :, i, j])
    dx = dxp[:, :, pad:pad + h, pad:pad + w]

    def flat(a, dims, index):
        out = [0.0] * a.size
        for pos in np.ndindex(*dims):
            out[index(*pos)] = float(a[pos])
        return out
    fx, fw, fdy = flat(x, g.xdims, g.xi), flat(wt, g.wdims, g.wi), flat(dy, g.ydims, g.yi)
    fy, fdx, fdw = flat(y, g.ydims, g.yi), flat(dx, g.xdims, g.xi), flat(dw, g.wdims, g.wi)
    for direction, ins, out in (("fwd", (fx, fw), fy), ("bwd_data", (fdy, fw), fdx), ("bwd_filter", (fx, fdy), fdw)):
        result = refcheck.check_conv(g, direction, ins, out.__getitem__, "fp32", seed=1)
        assert result["ok"] and result["max_error"] < 1e-12, (direction, result)
        wrong = refcheck.check_conv(g, direction, ins, lambda i: out[i] * 1.01 + 0.01, "fp32", seed=1)
        assert not wrong["ok"] and wrong["worst"]["at"]


def test_an_unwritten_output_fails_the_check():
    g = refcheck.Conv(1, 1, 4, 4, 1, 3, 3, 1, 1, refcheck.NCHW)
    pat = refcheck.Pattern("fp32", 1)
    result = refcheck.check_conv(g, "fwd", (pat, pat), lambda i: float("nan"), "fp32", seed=0)
    assert not result["ok"] and result["max_error"] is None


@pytest.mark.parametrize("dtype, size", [("fp32", 4), ("fp16", 2), ("bf16", 2)])
def test_patterns_hold_exact_values_of_their_type_and_decode_back(dtype, size):
    pat = refcheck.Pattern(dtype, 7, period=31)
    raw = pat.raw()
    assert len(raw) == 31 * size
    for i in range(31):
        assert refcheck.decode(dtype, raw[i * size:(i + 1) * size]) == pat[i] == pat[i + 31]
    assert all(-1.0 <= v <= 1.0 for v in pat.values)


def test_maxpool_check_accepts_ties_and_refuses_misplaced_gradients():
    x = [1.0, 1.0, 0.0, 0.0]  # one 2x2 window with a tie
    dims = (1, 1, 2, 2)
    ok = refcheck.check_maxpool(dims, 2, x.__getitem__, None, fetch_dx=[0.0, 5.0, 0, 0].__getitem__,
                                dy=[5.0].__getitem__, samples=1)
    assert ok["ok"]
    bad = refcheck.check_maxpool(dims, 2, x.__getitem__, None, fetch_dx=[0.0, 0.0, 5.0, 0].__getitem__,
                                 dy=[5.0].__getitem__, samples=1)
    assert not bad["ok"]


@needs_numpy
def test_cpu_training_step_gradients_match_finite_differences():
    from cudnn_doctor.bench import cpu

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 32, 32, 3))  # channels-last, as the CPU path keeps activations
    weights = [rng.standard_normal((c.k, c.c, 3, 3)) * 0.2 for c in shapes.seed_convs(2)]
    dloss = rng.standard_normal((2, 6, 6, 64))

    def loss(ws):
        h = x
        for i, (shape, w) in enumerate(zip(shapes.seed_convs(2), ws)):
            h = np.maximum(cpu.conv_forward(h, w, shape.pad)[0], 0)
            if i in (1, 3):
                h = cpu.maxpool(h)
        return float((h * dloss).sum())
    grads = cpu.training_step(x, weights, dloss)  # conv4, conv3, conv2, conv1
    for layer, grad in zip((3, 2, 1, 0), grads):
        eps = 1e-6
        bumped = [w.copy() for w in weights]
        bumped[layer][1, 0, 2, 1] += eps
        numeric = (loss(bumped) - loss(weights)) / eps
        assert numeric == pytest.approx(grad[1, 0, 2, 1], rel=1e-3, abs=1e-3), layer


@needs_numpy
def test_cpu_convolution_matches_the_reference_layout_for_layout():
    from cudnn_doctor.bench import cpu

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 3, 7, 7)), rng.standard_normal((4, 3, 3, 3))
    y, _ = cpu.conv_forward(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), w, 1)
    assert np.allclose(y.transpose(0, 3, 1, 2), _conv_numpy(x, w, 1, 1))


@needs_numpy
def test_cpu_baseline_times_steps():
    from cudnn_doctor.bench import cpu

    out = cpu.run_cpu(budget_s=0.1, steps=1, batch=2)
    assert out["steps"] == 1 and out["step_ms"] > 0


# --- verdicts ---------------------------------------------------------------------------------------------

def _report(**over):
    h100 = peaks.find_peak("NVIDIA H100 80GB HBM3").to_dict()
    base = {"gpu": {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "sm_count": 132, "memory_free": 80 << 30},
            "peak": h100, "nvml": {"sm_clock_mhz": 1980, "sm_clock_max_mhz": 1980, "throttle_reasons": [],
                                   "power_limit_w": 700.0, "power_default_limit_w": 700.0},
            "seed": [], "seed_raw": {}, "layers": [], "totals": []}
    base.update(over)
    return bench_result(**base)


def _ids(findings):
    return [f.id for f in findings]


def test_healthy_run_has_no_warnings():
    total = {"dtype": "fp16", "direction": "fwd", "tflops": 330.0, "peak_tflops": 989.5,
             "peak_fraction": 330 / 989.5}
    assert not [f for f in verdicts.judge(_report(totals=[total])) if f.severity.value != "info"]


def test_slow_fp16_names_the_power_cap_and_the_fix():
    total = {"dtype": "fp16", "direction": "fwd", "tflops": 30.0, "peak_tflops": 989.5, "peak_fraction": 30 / 989.5}
    nvml = {"sm_clock_mhz": 800, "sm_clock_max_mhz": 1980, "throttle_reasons": ["sw_power_cap"],
            "power_limit_w": 300.0, "power_default_limit_w": 700.0}
    found = verdicts.judge(_report(totals=[total], nvml=nvml))
    slow = next(f for f in found if f.id == "CD951")
    assert "3%" in slow.title and "power limit is 300 W" in slow.detail and "sw_power_cap" in slow.detail
    assert slow.fix.startswith("sudo nvidia-smi -pl 700")
    assert "CD952" in _ids(found)


def test_slow_tf32_with_tf32_switched_off_says_so():
    total = {"dtype": "tf32", "direction": "fwd", "tflops": 20.0, "peak_tflops": 494.5, "peak_fraction": 20 / 494.5}
    found = verdicts.judge(_report(totals=[total]), env={"NVIDIA_TF32_OVERRIDE": "0"})
    slow = next(f for f in found if f.id == "CD951")
    assert "NVIDIA_TF32_OVERRIDE=0" in slow.detail and slow.fix == "unset NVIDIA_TF32_OVERRIDE"


def test_a_huge_workspace_gets_the_frameworks_real_settings():
    entry = {"algo": "FFT", "workspace": 30 << 30, "time_ms": 1.0, "check": {"ok": True},
             "no_workspace": {"algo": "IMPLICIT_GEMM", "slowdown": 2.5, "time_ms": 2.5}}
    found = verdicts.judge(_report(layers=[{"layer": "l1.conv2", "dtype": "fp32", "fwd": entry}]))
    ws = next(f for f in found if f.id == "CD954")
    assert "30.0 GiB" in ws.title and "2.50x slower" in ws.detail
    assert ".cudnnAlgoMode(ConvolutionLayer.AlgoMode.NO_WORKSPACE)" in ws.fix
    assert "CUDNN_CONV_WSCAP_DBG" in ws.fix and "TF_CUDNN_WORKSPACE_LIMIT_IN_MB" in ws.fix
    assert "<" not in ws.fix  # the cap is a number measured here, not a placeholder
    free = _report().gpu["memory_free"]
    cap = int(bench_rules.healthy(load_compat())["workspace_warn_fraction"] * free) >> 20
    assert "CUDNN_CONV_WSCAP_DBG=%d`" % cap in ws.fix and "TF_CUDNN_WORKSPACE_LIMIT_IN_MB=%d`" % cap in ws.fix
    info = next(f for f in found if f.id == "CD955")
    assert "CUDNN_CONV_WSCAP_DBG=%d`" % (30 << 10) in info.fix  # the largest workspace measured, in MiB


def test_a_wrong_result_is_an_error_with_where_it_happened():
    entry = {"algo": "ALGO_1", "workspace": 0, "time_ms": 1.0,
             "check": {"ok": False, "worst": {"at": [0, 1, 2, 3], "got": 1.0, "expected": 2.0}, "max_error": 0.5}}
    found = verdicts.judge(_report(layers=[{"layer": "l3.conv2", "dtype": "bf16", "bwd_data": entry}]))
    err = found[0]
    assert err.id == "CD950" and err.severity.value == "error" and "l3.conv2 bf16 bwd_data" in err.title


def test_cudnn_slower_than_plain_cuda_and_degraded_pcie_are_flagged():
    seed = [{"path": "cudnn", "step_ms": 9.0}, {"path": "gpu_plain", "step_ms": 8.0}]
    nvml = dict(_report().nvml, pcie_width=8, pcie_width_max=16, pcie_gen=5, pcie_gen_max=5)
    found = _ids(verdicts.judge(_report(seed=seed, nvml=nvml)))
    assert "CD956" in found and "CD953" in found


def test_unknown_gpu_is_measured_without_fractions():
    found = verdicts.judge(_report(peak=None, gpu={"name": "GeForce GTX 1060", "sm_count": 10}))
    assert _ids(found) == ["CD957"]


def test_seed_table_puts_the_articles_figures_beside_the_measured_ones():
    seed = {"batch": 32, "step_flops": shapes.seed_step_flops(), "cpu": {"step_ms": 100.0},
            "gpu_plain": {"step_ms": 10.0, "checks": [{"ok": True}], "ok": True},
            "cudnn": {"step_ms": 1.0, "checks": [{"ok": True}] * 2, "ok": True}}
    rows = {r["path"]: r for r in summary.seed_table(seed)}
    assert rows["cpu"]["seed_epoch_s"] == 152.0 and rows["cudnn"]["seed_epoch_s"] == 7.0
    assert rows["cudnn"]["epoch_s"] == pytest.approx(1.407)
    assert rows["cudnn"]["speedup_vs_cpu"] == pytest.approx(100.0)
    assert rows["gpu_plain"]["correct"] and rows["cudnn"]["checked_ops"] == 2
    assert math.isclose(rows["cudnn"]["seed_speedup_vs_cpu"], 152 / 7)


def test_a_bench_rule_that_raises_costs_its_finding_not_the_measurements(monkeypatch):
    """Bench rules run through rules.evaluate: a rule bug becomes a warning about itself, the others still judge."""
    from cudnn_doctor import rules as rules_pkg

    broken = next(r for r in rules_pkg.registered(rules_pkg.BENCH) if r.id == "CD953")

    def boom(facts, ctx):
        raise KeyError("pcie_width")

    swapped = [r._replace(func=boom) if r is broken else r for r in rules_pkg.RULES]
    monkeypatch.setattr(rules_pkg, "RULES", swapped)
    found = verdicts.judge(_report(peak=None, gpu={"name": "GeForce GTX 1060", "sm_count": 10}))
    crashed = next(f for f in found if f.id == "CD953")
    assert crashed.severity.value == "warning" and "could not run: KeyError" in crashed.title and crashed.fix
    assert "CD957" in _ids(found)  # the rules that did not raise still judged the run
