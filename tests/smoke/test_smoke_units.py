"""Smoke test pieces without a child process: the CPU reference, the status table, verdicts, library choice."""
from __future__ import annotations

import math
import struct
from array import array

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import CudnnCopy, Facts, Resolution
from cudnn_doctor.smoke import codes
from cudnn_doctor.smoke import conv_math as cm
from cudnn_doctor.smoke.choose import choose_libraries, driver_library, plain_process_choice
from cudnn_doctor.smoke.result import SmokeResult, interpret

# --- the CPU reference -----------------------------------------------------------------


def test_identity_filter_reproduces_the_input():
    x, _ = cm.random_inputs(7)
    w = [0.0] * (cm.K * cm.C * cm.R * cm.S)
    for k in range(cm.C):  # output channel k copies input channel k (centre tap)
        w[((k * cm.C + k) * cm.R + 1) * cm.S + 1] = 1.0
    y = cm.reference(x, w)
    n_, k_, p_, q_ = cm.output_dims()
    assert (n_, k_, p_, q_) == (2, 4, 16, 16)
    for n in range(cm.N):
        for k in range(cm.C):
            for i in range(cm.H * cm.W):
                assert y[((n * cm.K + k) * cm.H * cm.W) + i] == x[(n * cm.C + k) * cm.H * cm.W + i]
        assert all(v == 0.0 for v in y[(n * cm.K + 3) * 256:(n * cm.K + 4) * 256])


def test_padding_uses_zeros_at_the_border():
    x = [1.0] * (cm.N * cm.C * cm.H * cm.W)
    w = [1.0] * (cm.K * cm.C * cm.R * cm.S)
    y = cm.reference(x, w)
    assert y[0] == 4 * cm.C  # corner: 2×2 taps inside the image
    assert y[1] == 6 * cm.C  # edge: 2×3 taps
    assert y[17] == 9 * cm.C  # interior


def test_inputs_are_float32_and_depend_on_the_seed():
    x1, w1 = cm.random_inputs(1)
    x2, _ = cm.random_inputs(2)
    assert x1.typecode == "f" and len(x1) == 2 * 3 * 16 * 16 and len(w1) == 4 * 3 * 3 * 3
    assert list(x1) != list(x2) and list(x1) == list(cm.random_inputs(1)[0])
    assert all(-1.0 <= v < 1.0 for v in x1)


def test_relative_error_is_scaled_by_the_largest_reference_value():
    assert cm.relative_error([1.0, 2.0], [1.0, 2.0]) == (0.0, 0)
    err, bad = cm.relative_error([1.0, 4.001], [1.0, 4.0])
    assert bad == 0 and err == pytest.approx(0.001 / 4.0)
    assert cm.relative_error([float("nan"), 1.0], [1.0, 1.0]) == (math.inf, 1)
    assert cm.relative_error([1.0], [1.0, 2.0])[0] == math.inf


def test_poison_is_a_nan_and_is_counted():
    raw = bytes([cm.POISON_BYTE]) * 8 + struct.pack("<f", 1.5)
    assert math.isnan(struct.unpack("<f", raw[:4])[0])
    assert cm.poisoned_count(raw) == 2
    assert cm.poisoned_count(array("f", [0.0, -0.0]).tobytes()) == 0


# --- the status table --------------------------------------------------------------------


def test_every_same_as_points_at_an_entry_with_words():
    entries = load_compat().status_entries()
    for name, entry in entries.items():
        if "same_as" in entry:
            assert entry["same_as"] in entries, name
        else:
            assert {"headline", "diagnosis", "commands", "words", "catalogue"} <= set(entry), name


@pytest.mark.parametrize("api, code, version, name", [
    ("cudnn", 1, 8907, "CUDNN_STATUS_NOT_INITIALIZED"),
    ("cudnn", 1001, 90100, "CUDNN_STATUS_NOT_INITIALIZED"),
    ("cudnn", 6, 7605, "CUDNN_STATUS_ARCH_MISMATCH"),
    ("cudnn", 1008, 91400, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
    ("cuda", 100, None, "CUDA_ERROR_NO_DEVICE"),
    ("cuda", 34, None, "CUDA_ERROR_STUB_LIBRARY"),
    ("cuda", 804, None, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
    ("cuda_runtime", 35, None, "cudaErrorInsufficientDriver"),
])
def test_status_names_by_numbering(api, code, version, name):
    assert codes.status_name(api, code, version) == name


def test_unknown_codes_get_an_honest_placeholder():
    assert codes.status_name("cudnn", 77, 8907) == "cudnnStatus_t 77"
    assert codes.status_name("cuda", 35) == "CUresult 35"  # 35 is a runtime code only


@pytest.mark.parametrize("name, words", [
    ("CUDNN_STATUS_NOT_INITIALIZED", "driver"),
    ("CUDNN_STATUS_ARCH_MISMATCH", "too old"),
    ("CUDNN_STATUS_ALLOC_FAILED", "no-workspace"),
    ("CUDNN_STATUS_INTERNAL_ERROR", "no-workspace"),
    ("CUDNN_STATUS_EXECUTION_FAILED", "GPU"),
    ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "coherent"),
    ("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "libcudnn_"),
    ("CUDA_ERROR_NO_DEVICE", "nvidia-smi"),
    ("CUDA_ERROR_STUB_LIBRARY", "stubs"),
    ("cudaErrorInsufficientDriver", "Upgrade the NVIDIA driver"),
    ("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "compat"),
    ("CUDA_ERROR_UNKNOWN", "nvidia_uvm"),
    ("CUDA_ERROR_NOT_INITIALIZED", "nvidia-smi"),
])
def test_mapped_statuses_have_a_diagnosis_and_a_fix(fix_target, name, words):
    from cudnn_doctor.remedies.doctor import smoke_status_fix

    words_for = codes.explain(name)
    fix = smoke_status_fix(load_compat(), name).text
    assert words_for.headline and words_for.diagnosis and fix
    assert words in " ".join((words_for.headline, words_for.diagnosis, fix))


def test_cudnn9_sub_codes_fall_back_to_their_category():
    got = codes.explain("CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", 5002, 90100)
    assert got.headline == codes.explain("CUDNN_STATUS_EXECUTION_FAILED").headline


# --- verdicts from runner records ---------------------------------------------------------


def test_a_crash_names_the_signal_and_the_stage():
    result = interpret({"crashed": "SIGSEGV"}, "libcudnn.so.9", "/x/libcudnn.so.9.1.0", "cudnnCreate")
    assert not result.ok and result.status == "SMOKE_CRASHED" and result.failed_call == "cudnnCreate"
    assert "SIGSEGV during cudnnCreate" in result.summary and result.diagnosis


def test_a_timeout_before_any_stage():
    result = interpret({"timeout": 5.0}, "libcudnn.so.9", None, None)
    assert result.status == "SMOKE_TIMEOUT" and "during start-up" in result.summary


def test_a_child_that_could_not_start():
    result = interpret({"error": "could not start the native child: boom"}, "lib", None, None)
    assert result.status == "SMOKE_CHILD_ERROR" and "boom" in result.summary


def test_nonfinite_output_without_poison_is_its_own_failure():
    raw = {"version": 90100, "conv": {"elements": 4, "poisoned": 0, "nonfinite": 1, "max_rel_error": None, "algo": 0}}
    assert interpret(raw, "lib", None, None).status == "SMOKE_NONFINITE"


def test_error_exactly_at_the_threshold_passes():
    raw = {"version": 90100, "conv": {"elements": 4, "poisoned": 0, "nonfinite": 0, "max_rel_error": cm.THRESHOLD,
                                      "algo": 1, "workspace": 0}}
    assert interpret(raw, "lib", None, None).ok


# --- which libraries to test ----------------------------------------------------------------


def _facts(resolved=(), copies=()):
    facts = Facts()
    for soname, path in resolved:
        facts.loader.resolved[soname] = Resolution(name=soname, path=path)
    facts.cudnn = [CudnnCopy(path=p, directory=p.rsplit("/", 1)[0]) for p in copies]
    return facts


def test_plain_process_prefers_the_newest_major_the_loader_resolves():
    facts = _facts([("libcudnn.so.8", "/usr/lib/libcudnn.so.8"), ("libcudnn.so.9", "/usr/lib/libcudnn.so.9")])
    assert plain_process_choice(facts) == "/usr/lib/libcudnn.so.9"
    assert choose_libraries(facts) == ["/usr/lib/libcudnn.so.9"]
    assert plain_process_choice(_facts([("libcudnn.so.9", None)])) is None


def test_all_copies_are_tested_once_each_loaders_choice_first():
    facts = _facts([("libcudnn.so.9", "/usr/lib/libcudnn.so.9"), ("libcuda.so.1", "/usr/lib/libcuda.so.1")],
                   ["/opt/venv/nvidia/cudnn/lib/libcudnn.so.9", "/usr/lib/libcudnn.so.9.14.0", "/old/libcudnn.so.8"])
    same = {"/usr/lib/libcudnn.so.9": "/usr/lib/libcudnn.so.9.14.0"}
    chosen = choose_libraries(facts, all_copies=True, realpath=lambda p: same.get(p, p))
    assert chosen == ["/usr/lib/libcudnn.so.9", "/opt/venv/nvidia/cudnn/lib/libcudnn.so.9", "/old/libcudnn.so.8"]
    assert driver_library(facts) == "/usr/lib/libcuda.so.1"


def test_nothing_resolves_and_nothing_found():
    assert choose_libraries(_facts()) == [] and choose_libraries(_facts(), all_copies=True) == []
    assert choose_libraries(_facts(copies=["/x/libcudnn.so.9"])) == []
    assert driver_library(_facts()) is None


def _failed_with(name, api, code=None, version=None):
    from cudnn_doctor.smoke.result import _apply

    result = SmokeResult(ok=False, library="/x/libcudnn.so.9", version_code=version)
    _apply(result, name, api, code, "cudnnCreate", None, version)
    return result


@pytest.mark.parametrize("name, api, code, version", [
    *[(n, "smoke", None, None) for n in load_compat().status_entries() if n.startswith("SMOKE_")],
    ("CUDNN_STATUS_NOT_INITIALIZED", "cudnn", 1001, 90100),
    ("CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", "cudnn", 5002, 90100),  # a cuDNN 9 sub-code: its category's words
    ("cudnnStatus_t 77", "cudnn", 77, 8907),
    ("CUresult 999", "cuda", 999, None),  # unknown CUDA code on a cuDNN 9 copy: never cuDNN's category
    ("CUDA_ERROR_NO_DEVICE", "cuda", 100, None),
    ("cudaErrorInsufficientDriver", "cuda_runtime", 35, None),
])
def test_cd510_builds_the_same_fix_the_smoke_result_says(fix_target, name, api, code, version):
    """The one builder of smoke's and CD510's fix (remedies.doctor.smoke_result_fix) reads the status with cuDNN's
    version only when cuDNN returned it (cuDNN 9's renumbering), never with the copy's version for a CUDA status."""
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.remedies.doctor import smoke_result_fix, smoke_status_fix
    from cudnn_doctor.remedies.driver import missing_driver_fix

    result = _failed_with(name, api, code, version if api == "cudnn" else None)
    result.version_code = 91400  # the copy's version, which a CUDA status must not be read with
    fix = smoke_result_fix(load_compat(), result, "host")
    if name == "SMOKE_NO_DRIVER_LIBRARY":  # no libcuda: the missing driver's one answer, for where it comes from
        assert fix == missing_driver_fix("host")
        return
    assert fix.text == smoke_status_fix(load_compat(), name, code, version if api == "cudnn" else None).text


@pytest.mark.parametrize("raw", [
    {"crashed": "SIGSEGV"},
    {"timeout": 30},
    {"version": 90100, "error": {"api": "cudnn", "code": 5002, "func": "cudnnCreate"}},
    {"error": {"api": "cuda", "code": 100, "func": "cuInit"}},
], ids=["crashed", "timeout", "cudnn-sub-code", "cuda"])
def test_smoke_and_cd510_give_the_one_fix_remedies_builds(fix_target, raw):
    """smoke --json's fix line and check --smoke's CD510 fix come from one builder (remedies.doctor)."""
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.remedies.doctor import smoke_result_fix
    from cudnn_doctor.rules import RuleContext, evaluate

    result = interpret(raw, "/usr/lib/libcudnn.so.9", None, "cudnnCreate")
    result.fix = smoke_result_fix(load_compat(), result, "host").text  # as run_smoke sets it on a machine of its own
    assert not result.ok and result.fix
    findings, _ = evaluate(Facts(), RuleContext(compat=load_compat(), smoke=result))
    cd510 = next(f for f in findings if f.id == "CD510")
    assert cd510.remedy.text == result.fix
