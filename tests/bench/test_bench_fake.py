"""`bench` against gcc-built fakes: the child's real ctypes path (driver API, cudnnFind*Ex, the three directions,
pooling, ReLU) runs; the fake cuDNN computes on the CPU, so every check against the reference is real."""
from __future__ import annotations

import hashlib
import json

import pytest

from clirunner import CliRunner
from kit import FAKELIBS, build_lib, commands_run_native_here, have_gcc, native_host

from cudnn_doctor.bench.run import BenchPlan, run_bench
from cudnn_doctor.bench.shapes import parse_shape
from cudnn_doctor.cli import app

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

SHAPE = "2,4,6,6,8,3,3,1,1"


def _included(*names):
    # build_lib keys its cache on the top source only; the fakes #include the smoke test's fakes
    return hashlib.sha256(b"".join((FAKELIBS / n).read_bytes() for n in names)).hexdigest()[:12]


def fake_cuda(**defines) -> str:
    defines.setdefault("INCLUDED", _included("fake_cuda_mem.c"))
    return str(build_lib("bench_cuda", source=FAKELIBS / "fake_cuda_bench.c", **defines))


def fake_cudnn(**defines) -> str:
    defines.setdefault("INCLUDED", _included("fake_cudnn_conv.c", "fake_cudnn_graph.c"))
    return str(build_lib("bench_cudnn", source=FAKELIBS / "fake_cudnn_bench.c", **defines))


def plan(**over) -> BenchPlan:
    base = dict(layers=[parse_shape(SHAPE)], dtypes=["fp32"], cpu=False, seed_batch=1, min_iters=1,
                target_ms=0.1, seed_target_ms=0.1)
    base.update(over)
    return BenchPlan(**base)


@pytest.fixture(autouse=True)
def bench_through_a_test_host(monkeypatch):
    """`bench` in this process runs its child through a test's Host: the live one is refused here (conftest.py)."""
    commands_run_native_here(monkeypatch)


def bench_cli(*args, cudnn=None, cuda=None):
    argv = ["bench", "--library", cudnn or fake_cudnn(), "--driver-library", cuda or fake_cuda(), "--seed-batch", "1",
            "--no-cpu"] + list(args)
    return CliRunner().invoke(app, argv)


@pytest.fixture(scope="module")
def healthy():
    return run_bench(fake_cudnn(), plan(), driver_library=fake_cuda(), timeout=120, host=native_host())


def test_seed_network_step_runs_through_cudnn_and_every_op_is_checked(healthy):
    seed = healthy["seed"]
    assert seed["batch"] == 1
    kinds = [c["op"].split()[0] for c in seed["cudnn"]["checks"]]
    assert kinds.count("conv_fwd") == 4 and kinds.count("conv_bwd_filter") == 4
    assert kinds.count("conv_bwd_data") == 3  # the image's own gradient is never computed
    assert {"relu_fwd", "relu_bwd", "pool_fwd", "pool_bwd"} <= set(kinds)
    assert seed["cudnn"]["ok"] and seed["cudnn"]["step_ms"] > 0
    assert seed["cudnn"]["timing"] == "loop"  # the fake driver cannot capture graphs
    assert seed["gpu_plain"]["skipped"] == "libnvrtc not found"


def test_each_direction_of_a_layer_is_found_timed_and_checked(healthy):
    [row] = healthy["layers"]
    assert row["layout"] == "NCHW/NHWC"  # strict float32 tries both
    for direction in ("fwd", "bwd_data", "bwd_filter"):
        entry = row[direction]
        assert entry["check"]["ok"] and entry["check"]["checked"] >= 1
        assert entry["workspace"] == 4096  # Find's fastest algorithm, with the workspace it asked for
        # Find timed the fake's algorithm 0 (no workspace) at twice algorithm 1's; the slowdown itself scales measured
        # wall times, which a loaded machine moves (a timed assertion failed once beside a wheel download): at least 1
        free = entry["no_workspace"]
        assert free["find_ms"] == pytest.approx(2.0) and free["slowdown"] >= 1.0 and free["algo"] != entry["algo"]
        assert {c["algo"] for c in entry["candidates"]} >= {entry["algo"]}
    assert "error" not in healthy and healthy["version"] == 90100


def test_the_backend_api_engines_are_contenders_filtered_as_torch_filters_them(healthy):
    assert healthy["graph_api"] is True
    for direction in ("fwd", "bwd_data", "bwd_filter"):
        entry = healthy["layers"][0][direction]
        names = [c["algo"] for c in entry["candidates"]]
        # engine 0 is timed; 1 (tensor cores: TF32, not strict float32) and 2 (down-converts) never run
        assert "graph eng0" in names and "graph eng1" not in names and "graph eng2" not in names
        assert "graph_error" not in entry
        # three engines offered by the instant heuristics, engine 0 again by the fallback list (as torch, both
        # are tried: the real library repeats an engine with other knob choices)
        assert entry["graph"]["offered"] == 2 and entry["graph"]["ran"] == 2 and entry["graph"]["compiled"] == 0
        assert entry["algo"] == "ALGO_1" or entry["algo"] == "IMPLICIT_PRECOMP_GEMM"  # the fake's fastest


def test_a_fast_wrong_engine_of_the_backend_api_is_caught():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32", "--json", cudnn=fake_cudnn(GRAPH_BAD=True))
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    row = doc["layers"][0]
    assert {row[d]["algo"] for d in ("fwd", "bwd_data", "bwd_filter")} == {"graph eng0"}
    assert all(row[d]["check"]["ok"] is False for d in ("fwd", "bwd_data", "bwd_filter"))
    assert "CD950" in [f["id"] for f in doc["findings"]]


def test_a_library_without_the_backend_api_is_benched_through_the_legacy_one():
    raw = run_bench(fake_cudnn(NO_GRAPH_API=True), plan(seed=False), driver_library=fake_cuda(), timeout=120,
                    host=native_host())
    assert raw["graph_api"] is False
    entry = raw["layers"][0]["fwd"]
    assert entry["check"]["ok"] and not any(c["algo"].startswith("graph") for c in entry["candidates"])


def test_a_wrong_backward_data_is_an_error_finding_and_exit_1():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32", "--json", cudnn=fake_cudnn(BAD_BWD_DATA=True))
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["command"] == "bench" and doc["exit_code"] == 1 and doc["schema_version"]
    wrong = [f for f in doc["findings"] if f["id"] == "CD950"]
    assert wrong and wrong[0]["severity"] == "error"
    assert doc["layers"][0]["bwd_data"]["check"]["ok"] is False
    assert doc["layers"][0]["fwd"]["check"]["ok"] is True


def test_json_envelope_of_a_healthy_run():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["tool"]["name"] == "cudnn-doctor" and doc["gpu"]["name"] == "Fake GPU"
    assert doc["gpu"]["sm_count"] == 132 and doc["peak"] is None
    assert {r["path"] for r in doc["seed"]} == {"cpu", "gpu_plain", "cudnn"}
    assert doc["totals"][0]["dtype"] == "fp32" and doc["totals"][0]["tflops"] > 0
    assert "CD957" in [f["id"] for f in doc["findings"]]


def test_human_output_shows_the_seed_comparison_and_the_layer_table():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "seed (GTX 1060, 2017)" in out and "152 s" in out and "skipped: libnvrtc not found" in out
    assert "no-workspace" in out and "bwd_filter" in out and "4 KiB" in out
    assert ".cudnnAlgoMode(ConvolutionLayer.AlgoMode.NO_WORKSPACE)" in out


def test_a_type_the_library_cannot_do_is_reported_per_row():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp16", "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0
    assert doc["layers"][0]["error"]["func"] == "cudnnSetTensor4dDescriptor"


def test_no_gpu_is_one_line_and_exit_1():
    result = bench_cli("--shape", SHAPE, cuda=fake_cuda(INITRC=100))
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "no usable NVIDIA GPU" in result.stderr and "cuInit" in result.stderr
    assert result.stdout == ""


def test_no_driver_at_all_is_one_line_and_exit_1(monkeypatch):
    from cudnn_doctor import diagnose
    from cudnn_doctor.model import Facts

    monkeypatch.setattr(diagnose, "collect_facts", lambda root="/", env=None, timeout=None: Facts())
    result = CliRunner().invoke(app, ["bench"])
    assert result.exit_code == 1
    assert result.stderr.startswith("cudnn-doctor: error: no NVIDIA GPU here") and result.stderr.count("\n") == 1


def test_a_hang_is_cut_off_and_named_by_its_stage():
    raw = run_bench(fake_cudnn(HANG_AT='"find_bwd_filter"'), plan(seed=False), driver_library=fake_cuda(),
                    timeout=8, host=native_host())
    assert raw["timeout"] and "bwd_filter" in raw["stage"]


@pytest.mark.parametrize("bad", [["--shape", "1,2,3"], ["--dtype", "fp8"], ["--nvrtc", "/nonexistent"]])
def test_bad_options_are_usage_errors(bad):
    result = bench_cli(*bad)
    assert result.exit_code == 2 and result.stderr.startswith("cudnn-doctor: error:")


def test_workspace_that_does_not_fit_gets_the_dl4j_advice():
    cuda = fake_cuda(FREE_BYTES=16 << 20)  # 16 MiB free; Find's fastest algorithm wants 8 MiB of it
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32", "--json", cudnn=fake_cudnn(FIND_WS=8 << 20), cuda=cuda)
    doc = json.loads(result.stdout)
    ws = [f for f in doc["findings"] if f["id"] == "CD954"]
    assert ws and "NO_WORKSPACE" in ws[0]["fix"] and ws[0]["severity"] == "warning"


def test_types_the_gpu_generation_lacks_are_skipped_with_the_reason():
    cuda = fake_cuda(CC_MAJOR=7, CC_MINOR=5)  # Turing: no TF32 or BF16 tensor cores
    raw = run_bench(fake_cudnn(), plan(seed=False, dtypes=["tf32", "bf16"]), driver_library=cuda, timeout=60,
                    host=native_host())
    assert [r["skipped"] for r in raw["layers"]] == ["TF32 needs compute capability 8.0 or newer",
                                                     "BF16 needs compute capability 8.0 or newer"]


def test_a_crash_keeps_what_was_measured_and_names_the_stage():
    result = bench_cli("--shape", SHAPE, "--dtype", "fp32", "--json", cudnn=fake_cudnn(CRASH_AT='"bwd_filter"'))
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["error"]["crashed"] == "SIGSEGV" and "bwd_filter" in doc["error"]["stage"]
    assert doc["gpu"]["name"] == "Fake GPU"  # learnt before the crash, still reported
