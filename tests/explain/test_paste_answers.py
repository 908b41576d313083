"""The examples issue 30 names, answered from the text alone: a cause and a fix with --no-check, the same fix on
any machine, Windows fixes for Windows texts, the exit code following the answer; and the framework rules."""
from __future__ import annotations

import json

import pytest
from clirunner import CliRunner
from hypothesis import given, strategies as st

from cudnn_doctor.explain import explain
from cudnn_doctor.explain.decode_checks import fits
from hermetic import shipped_compat

COMPAT = shipped_compat()
# (text, words the cause must hold, words the fix must hold)
EXAMPLES = [
    ("Error 803: system has unsupported display driver / cuda driver combination", "different releases", "reboot"),
    ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "different releases", "reboot"),
    ('docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
     "Container Toolkit", "nvidia-ctk runtime configure"),
    ("RuntimeError: CUDA error: unspecified launch failure", "nvidia_uvm", "modprobe nvidia_uvm"),
    ("W external/xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:548] libdevice not found at "
     "./libdevice.10.bc", "XLA", "nvidia-cuda-nvcc"),
    ("E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting "
     "to register factory for plugin cuDNN when one has already been registered", "harmless", "nothing to fix"),
    ("ImportError: /venv/lib/python3.11/site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: "
     "undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12", "another copy of libnvJitLink.so.12",
     "LD_LIBRARY_PATH"),
    ("OSError: /opt/conda/lib/python3.8/site-packages/nvidia/cublas/lib/libcublas.so.11: symbol free_gemm_select "
     "version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference",
     "two copies of libcublasLt.so.11", "libcublasLt"),
    ('OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\\Python310\\lib\\'
     'site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its dependencies.', "error 127", "Get-Command"),
    ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
     '"C:\\Python39\\lib\\site-packages\\torch\\lib\\caffe2_detectron_ops_gpu.dll"', "paging file",
     "AutomaticManagedPagefile"),
    ("ImportError: libcublas.so.9.0: cannot open shared object file: No such file or directory", "CUDA 9.0",
     "CUDA 9.0 toolkit"),
    ("Could not load dynamic library 'libnvrtc-builtins.so.11.6'", "CUDA 11.6", "CUDA 11.6 toolkit"),
    ("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found", "CUDA 11.0 to 11.8",
     "nvidia-cuda-runtime-cu11"),
    ("Could not load dynamic library 'cudnn64_7.dll'", "cuDNN 7", "cuDNN 7"),
    ("Loaded runtime CuDNN library: 7.3.1 (compatibility version 7300) but source was compiled with 7.0.3 "
     "(compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match.",
     "same major and minor", "cuDNN 7.0.5"),
    ("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
     "compute capability 12.0", "whl/cu128"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver",
     "CUDA 12.4", "550.54.14"),
]


def _app():
    from cudnn_doctor.cli import app
    return app


@pytest.mark.parametrize("text,cause,fix", EXAMPLES, ids=[e[0][:40] for e in EXAMPLES])
def test_the_text_alone_gives_cause_and_fix(text, cause, fix):
    ex = explain(text, check=False).explanation
    assert ex.answer is not None and cause in ex.answer.cause, ex.answer
    assert fix in ex.fix.text, ex.fix.text
    windows = ex.evidence.platform == "windows"
    assert ("sudo" in ex.fix.text) is False or not windows  # a Windows text never gets a Linux command
    result = CliRunner().invoke(_app(), ["explain", "--no-check", "--json", text])
    doc = json.loads(result.stdout)
    assert doc["fix"] == ex.fix.text and doc["cause"] == ex.answer.cause
    assert result.exit_code == (1 if ex.answer.problem else 0)


def test_the_answer_is_the_same_on_any_machine(machine):
    text = EXAMPLES[6][0]
    here = explain(text, root=str(machine.root)).explanation
    assert here.checked and here.fix.text == explain(text, check=False).explanation.fix.text


def test_a_start_up_error_on_a_machine_without_a_driver_says_so_first(machine):
    result = CliRunner().invoke(_app(), ["explain", "--root", str(machine.root),
                                         "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"])
    assert result.exit_code == 1
    here = result.stdout.split("On this machine\n", 1)[1]
    assert here.startswith("  ERROR and here: no NVIDIA driver at all")
    fix = result.stdout.split("\nFix\n", 1)[1]
    # check's own answer for a machine without a driver (CD101, remedies.driver.missing_driver_fix)
    assert fix.startswith("  If the machine has an NVIDIA GPU, install the driver") and "Then, for the error itself" in fix


versions = st.tuples(st.integers(5, 9), st.integers(0, 9), st.integers(0, 9)).map(lambda t: "%d.%d.%d" % t)


@given(versions, versions)
def test_framework_rules_nest(runtime, compiled):
    """Each rule accepts what a stricter one accepts; none accepts another major."""
    if fits("exact", runtime, compiled):
        assert fits("same-minor", runtime, compiled)
    if fits("same-minor", runtime, compiled):
        assert fits("same-major-newer-minor", runtime, compiled)
    if fits("same-major-newer-minor", runtime, compiled):
        assert fits("not-older", runtime, compiled) and fits("same-major", runtime, compiled)
    if runtime.split(".")[0] != compiled.split(".")[0]:
        assert not fits("same-major", runtime, compiled)


def test_each_framework_check_reads_its_rule_from_the_knowledge():
    rows = COMPAT.table("frameworks", "version_checks")["rows"]
    assert {r["rule"] for r in rows} <= {"same-minor", "same-major-newer-minor", "not-older", "same-major", "exact"}
    assert COMPAT.version_check_rule("TensorFlow 1.x", "cuDNN")["rule"] == "same-minor"


def test_a_machine_whose_framework_loads_the_cudnn_it_was_built_with_offers_no_machine_wide_cudnn():
    """On the H200, explain of torch's "compiled against (9, 19, 0) but found runtime version (9, 14, 0)" offered
    "and here" to register the torch venv's cuDNN 9.19 system-wide, where torch loads it from its own wheel (check
    finds nothing). The framework whose check the paste quotes decides, built with the pasted release; another
    framework's paste, another release, or a twin that refuses its copy keeps the fix."""
    from facts_factory import framework, real_machine, resolution

    from cudnn_doctor.explain.judge import one_fix
    from cudnn_doctor.explain.parse import PastedVersions
    from cudnn_doctor.model import Target
    from cudnn_doctor.remedies.acting import building_for
    from cudnn_doctor.remedies.explain import cudnn_version_fix, in_program_environment

    facts, compat = real_machine(), shipped_compat()

    def fix(framework_said, compiled, machine=facts):
        pasted = PastedVersions(compiled=compiled, runtime="9.14.0", framework=framework_said)
        return one_fix(compat, machine, "", pasted, [], []).text

    with building_for(Target()):
        gap = cudnn_version_fix(compat, facts, "9.14.0", "9.19.0").text
        assert "9.19" in gap
        assert fix("PyTorch", "9.19.0") == in_program_environment(True).text
        assert fix("TensorFlow/XLA", "9.19.0") == gap  # TensorFlow's check: torch here says nothing of it
        assert fix("", "9.19.0") == gap  # the framework that printed it is not known
        assert fix("PyTorch", "9.20.0") == cudnn_version_fix(compat, facts, "9.14.0", "9.20.0").text
        assert fix("PyTorch", "9.3.0") == cudnn_version_fix(compat, facts, "9.14.0", "9.3.0").text
        # a second torch here built with 9.19 that loads the system's 9.14 (refused): the fix stays
        twin = framework("torch", "2.11.0+cu130", location="/srv/other/lib/python3.12/site-packages",
                         requires=['nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"'],
                         resolved_cudnn=resolution("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"))
        facts.python.frameworks.append(twin)
        assert fix("PyTorch", "9.19.0") == gap
