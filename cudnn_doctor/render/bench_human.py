"""The human `bench` report: the seed comparison, the per-layer tables and the verdicts, drawn with rich."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Union

from rich.table import Table
from rich.text import Text

from ..run_results import BenchResult
from .human import MARKS, SEVERITY_STYLE

MIB = 1 << 20


def _fmt_bytes(n: Optional[int]) -> str:
    if not n:
        return "0"
    if n < MIB:
        return "%.0f KiB" % max(1, n / 1024.0)
    return "%.0f MiB" % (n / MIB) if n < (1 << 30) else "%.1f GiB" % (n / float(1 << 30))


def _pct(x: Optional[float]) -> str:
    return "%.0f%%" % (100 * x) if x is not None else "–"


# The rate is the direct convolution's multiply-adds over the time; FFT and Winograd reach the same result with
# fewer, so their rate is an effective one and can pass the datasheet peak.
EFFECTIVE_NOTE = ("* effective TFLOP/s: counted as the direct convolution's 2·N·K·C·P·Q·R·S operations; FFT and "
                  "Winograd algorithms compute the same result with fewer multiply-adds, so their effective rate "
                  "can exceed 100% of the datasheet peak")


def _fewer_macs(algo: str) -> bool:
    return "FFT" in algo.upper() or "WINOGRAD" in algo.upper()


def render_bench(result: Union[BenchResult, Mapping[str, Any]], out) -> None:
    """Print a bench run (bench/report.build_result, or its fields by name) on the rich console ``out``."""
    report = result.fields() if isinstance(result, BenchResult) else result
    out.width = max(out.width, 132)  # the layer table has eleven columns; piped output must not wrap them
    gpu, nvml, peak = report["gpu"], report["nvml"], report.get("peak")
    out.print(Text("GPU %s: %s (compute %s, %s SMs) · cuDNN %s (%s)" % (
        gpu.get("index"), gpu.get("name"), gpu.get("cc"), gpu.get("sm_count"), report["cudnn"].get("version"),
        report["cudnn"].get("realpath")), style="bold"))
    state = []
    if nvml.get("sm_clock_mhz"):
        state.append("SM clock %s of %s MHz" % (nvml["sm_clock_mhz"], nvml.get("sm_clock_max_mhz")))
    if nvml.get("power_limit_w"):
        state.append("power limit %.0f W (default %.0f W, drawing %.0f W)" % (
            nvml["power_limit_w"], nvml.get("power_default_limit_w") or 0, nvml.get("power_w") or 0))
    if "throttle_reasons" in nvml:
        state.append("throttle: %s" % (", ".join(nvml["throttle_reasons"]) or "none"))
    if nvml.get("pcie_gen"):
        state.append("PCIe Gen%s x%s (max Gen%s x%s)" % (nvml["pcie_gen"], nvml.get("pcie_width"),
                                                         nvml.get("pcie_gen_max"), nvml.get("pcie_width_max")))
    if nvml.get("error"):
        state.append("NVML: %s" % nvml["error"])
    out.print(Text("    " + " · ".join(state)))
    if peak:
        out.print(Text("    datasheet (%s, boost %d MHz, %d SMs): dense %s TFLOP/s" % (
            peak["model"], peak["boost_mhz"], peak["sm_count"],
            ", ".join("%s %g" % (k.upper(), v) for k, v in peak["tflops"].items()))))
    if report.get("seed"):
        table = Table(title="The seed's CIFAR-10 network, one training step at batch %d, epoch = 45,000 images "
                            "(float32; dense layers left out)" % report["seed_raw"].get("batch", 32),
                      title_justify="left")
        for col in ("path", "seed (GTX 1060, 2017)", "here: s/epoch", "ms/step", "× CPU", "checked"):
            table.add_column(col, justify="left" if col == "path" else "right")
        names = {"cpu": "CPU (numpy im2col + BLAS)", "gpu_plain": "GPU without cuDNN (NVRTC)", "cudnn": "cuDNN"}
        for row in report["seed"]:
            if "epoch_s" in row:
                table.add_row(names[row["path"]], "%.0f s (%.1f×)" % (row["seed_epoch_s"], row["seed_speedup_vs_cpu"]),
                              "%.2f" % row["epoch_s"], "%.3f" % row["step_ms"],
                              "%.1f" % row["speedup_vs_cpu"] if row.get("speedup_vs_cpu") else "–",
                              ("%d ops ok" % row["checked_ops"] if row.get("correct") else "WRONG")
                              if "checked_ops" in row else "–")
            else:
                table.add_row(names[row["path"]], "%.0f s" % row["seed_epoch_s"], "skipped: %s" % row["skipped"],
                              "", "", "")
        out.print(table)
    if report.get("layers"):
        graph = report["cudnn"].get("graph_api")
        table = Table(title="Convolution layers (cudnnFind*%s, the fastest candidates re-timed as CUDA graphs; "
                            "TC = tensor-core math; tensor-core types NHWC, FP32 the faster of NCHW and NHWC)"
                      % (" and the backend API's engines (graph engN)" if graph else ""), title_justify="left")
        for col in ("layer", "type", "dir", "algo", "ms", "TFLOP/s", "peak", "workspace", "no-workspace algo",
                    "slowdown", "ok"):
            table.add_column(col, justify="left" if col in ("layer", "type", "dir", "algo", "no-workspace algo")
                             else "right")
        skipped = []
        fewer_macs = False  # an FFT or Winograd row: its rate is effective, not counted work
        for row in report["layers"]:
            if "skipped" in row or "error" in row:
                skipped.append("%s %s (%s)" % (row["layer"], row["dtype"], row.get("skipped") or
                                               row["error"].get("message") or row["error"].get("func")))
                continue
            for direction in ("fwd", "bwd_data", "bwd_filter"):
                e = row.get(direction)
                if not e:
                    continue
                if "error" in e:
                    table.add_row(row["layer"], row["dtype"], direction, "error: %s" % e["error"].get("func"),
                                  *[""] * 7)
                    continue
                nw = e.get("no_workspace") or {}
                algo = e["algo"] + (" (TC)" if e.get("math") in (1, 2) else "") + (
                    " " + e["layout"] if e.get("layout") and "/" in (row.get("layout") or "") else "")
                star = "*" if _fewer_macs(e["algo"]) else ""
                fewer_macs = fewer_macs or bool(star)
                table.add_row(row["layer"], row["dtype"], direction, algo, "%.3f" % e["time_ms"],
                              "%.3g%s" % (e["tflops"], star), _pct(e.get("peak_fraction")) + star,
                              _fmt_bytes(e["workspace"]),
                              nw.get("algo", "none"), "%.2f×" % nw["slowdown"] if nw.get("slowdown") else "–",
                              "✓" if e["check"]["ok"] else "WRONG")
        out.print(table)
        if fewer_macs:
            out.print(Text("    " + EFFECTIVE_NOTE))
        if skipped:
            out.print(Text("    not measured: " + ", ".join(skipped)))
        table = Table(title="All layers together (each weighted by its count in ResNet-50)", title_justify="left")
        for col in ("type", "dir", "effective TFLOP/s", "peak", "of peak", "largest workspace",
                    "no-workspace TFLOP/s", "slowdown"):
            table.add_column(col, justify="left" if col in ("type", "dir") else "right")
        for t in report["totals"]:
            table.add_row(t["dtype"], t["direction"], "%.3g" % t["tflops"],
                          "%g" % t["peak_tflops"] if t.get("peak_tflops") else "–", _pct(t.get("peak_fraction")),
                          _fmt_bytes(t.get("max_workspace")),
                          "%.3g" % t["no_workspace_tflops"] if t.get("no_workspace_tflops") else "–",
                          "%.2f×" % t["no_workspace_slowdown"] if t.get("no_workspace_slowdown") else "–")
        out.print(table)
    for f in report["findings"]:
        mark, style = MARKS[f.severity.value]
        head = Text()
        head.append(mark, style=style)
        head.append(" %s %s" % (f.id, f.title), style=SEVERITY_STYLE[f.severity])
        out.print(head)
        if f.detail:
            out.print(Text("    " + f.detail))
        if f.fix:
            out.print(Text("    fix: " + f.fix))
    out.print(Text("%s · %.1f s" % (report["timing"], report["duration_s"]), style="dim"))
