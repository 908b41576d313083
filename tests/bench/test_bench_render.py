"""bench's tables: FFT and Winograd rows are labelled as effective rates, with a word on why they pass 100%."""
from __future__ import annotations

import io

from rich.console import Console

from cudnn_doctor.render.bench_human import render_bench


def _entry(algo, tflops, fraction):
    return {"algo": algo, "time_ms": 0.5, "tflops": tflops, "peak_fraction": fraction, "workspace": 1 << 20,
            "check": {"ok": True}, "no_workspace": {"algo": "IMPLICIT_GEMM", "slowdown": 1.5}}


def _report(algos):
    layers = [{"layer": "conv%d" % i, "dtype": "fp32", "fwd": _entry(algo, 80.0, 1.23)} for i, algo in
              enumerate(algos)]
    return {"gpu": {"index": 0, "name": "H100", "cc": "9.0", "sm_count": 132}, "nvml": {},
            "cudnn": {"version": "9.19.0", "realpath": "/x/libcudnn.so.9"}, "layers": layers,
            "totals": [{"dtype": "fp32", "direction": "fwd", "tflops": 70.0, "peak_tflops": 67.0,
                        "peak_fraction": 1.04}],
            "findings": [], "timing": "t", "duration_s": 1.0}


def _render(report):
    out = io.StringIO()
    render_bench(report, Console(file=out, width=200, color_system=None))
    return out.getvalue()


def test_fft_and_winograd_rows_are_effective_rates_with_the_reason():
    text = _render(_report(["WINOGRAD_NONFUSED", "FFT_TILING", "IMPLICIT_PRECOMP_GEMM"]))
    rows = {line.split("│")[1].strip(): line for line in text.splitlines() if line.startswith("│ conv")}
    assert "80*" in rows["conv0"] and "123%*" in rows["conv0"] and "123%*" in rows["conv1"]
    assert "*" not in rows["conv2"].replace("IMPLICIT_PRECOMP_GEMM", "")
    assert "effective TFLOP/s" in text and "fewer multiply-adds" in text and "exceed 100%" in text


def test_no_note_without_fft_or_winograd():
    text = _render(_report(["IMPLICIT_GEMM"]))
    assert "fewer multiply-adds" not in text


def test_bench_modules_stay_under_400_lines():
    """The house keeps modules short; bench_child.py had grown to 412 lines before its NVML part moved out."""
    from pathlib import Path

    import cudnn_doctor.bench as bench

    long = {p.name: n for p in Path(bench.__file__).parent.glob("*.py")
            if (n := len(p.read_text().splitlines())) >= 400}
    assert long == {}
