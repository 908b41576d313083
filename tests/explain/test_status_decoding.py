"""Every status code of every generated table decodes from a paste: by its name, by its number after its C type,
and by the message its library prints for it; the answer to each names a fix."""
from __future__ import annotations

import pytest

from cudnn_doctor.explain.answer import answer
from cudnn_doctor.explain.decode import decode
from cudnn_doctor.explain.decode_status import decode_statuses
from hermetic import shipped_compat

# Tests here call builders (and judges) themselves: their fixes are written for Target().
pytestmark = pytest.mark.usefixtures("fix_target")

COMPAT = shipped_compat()
APIS = sorted(COMPAT.status_apis())
CODES = [c for api in APIS for c in COMPAT.status_codes_of(api) if c.number]


def test_every_library_the_issue_names_has_a_generated_table():
    types = {str(t["type"]) for t in COMPAT.status_apis().values()}
    assert types == {"cudaError_t", "CUresult", "cudnnStatus_t", "nvmlReturn_t", "ncclResult_t", "nvrtcResult",
                     "cublasStatus_t"}
    for api in APIS:
        table = COMPAT.status_apis()[api]
        assert "pypi.org/project/%s/%s/" % (table["wheel"], table["version"]) in table["source"]
        assert len(COMPAT.status_codes_of(api)) >= 8


@pytest.mark.parametrize("api", APIS)
def test_every_code_decodes_by_name(api):
    for code in COMPAT.status_codes_of(api):
        if not code.number:
            continue
        found = decode_statuses("error: %s" % code.name, COMPAT)
        assert [s.code.name for s in found] == [code.name], code
        assert COMPAT.status_by_name(code.name).number == code.number or api == "cudnn_legacy"


@pytest.mark.parametrize("api", APIS)
def test_every_number_decodes_after_its_type(api):
    for code in COMPAT.status_codes_of(api):
        if not code.number:
            continue
        first = COMPAT.status_by_number(api, code.number)  # aliases share a number: the first name speaks for it
        found = decode_statuses("failed with %s %d" % (code.ctype, code.number), COMPAT)
        assert [(s.code.api, s.code.name) for s in found] == [(api, first.name)], code


@pytest.mark.parametrize("code", [c for c in CODES if c.api in ("cuda_runtime", "nccl", "cublas")
                                  and len(c.message.split(" (run with")[0]) >= 12 and c.message != c.name],
                         ids=lambda c: c.name)
def test_every_library_message_decodes_to_a_code_with_that_message(code):
    said = code.message.split(" (run with")[0]
    found = decode_statuses("RuntimeError: CUDA error: %s" % said, COMPAT)
    assert any(s.code.message.split(" (run with")[0] == said for s in found), (code, found)


@pytest.mark.parametrize("code", CODES, ids=lambda c: "%s-%s" % (c.api, c.name))
def test_every_code_alone_gets_an_answer_with_a_fix(code):
    got = answer(decode(code.name, COMPAT), COMPAT)
    assert got is not None and got.fix.text and got.cause, code
    assert "  " not in got.cause and "%s" not in got.fix.text


def test_a_number_outside_a_cuda_text_is_not_a_status():
    assert decode_statuses("Error 2: file not found", COMPAT) == []
    assert decode_statuses("cudnn 8.9.7 installed", COMPAT) == []


def test_the_same_code_by_name_and_number_is_one_status():
    found = decode_statuses("CUDA error 803: system has unsupported display driver / cuda driver combination "
                            "(cudaErrorSystemDriverMismatch)", COMPAT)
    assert [s.code.name for s in found] == ["cudaErrorSystemDriverMismatch"]


def test_sublibrary_unavailable_says_what_still_runs_without_the_precompiled_engines():
    # Measured on an H200 (docs/real-stacks.md): torch 2.11's batch norm stopped at this status, its convolutions ran.
    from cudnn_doctor.explain import explain
    ex = explain("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", check=False).explanation
    assert "libcudnn_engines_precompiled" in ex.answer.cause and "batch normalization" in ex.answer.cause
    assert "LD_LIBRARY_PATH" in ex.fix.text


@pytest.mark.parametrize("code", [c for c in COMPAT.status_codes_of("cudnn_legacy") if c.number],
                         ids=lambda c: c.name)
def test_a_name_beside_the_older_tables_number_is_the_older_cudnns(code):
    # Caffe's glog check (OPN#2, cuDNN 5): "Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)
    # CUDNN_STATUS_BAD_PARAM" is cuDNN 7.x/8.x numbering, not cuDNN 9's 2000
    text = "cudnn.hpp:122] Check failed: status == CUDNN_STATUS_SUCCESS (%d vs. 0)  %s" % (code.number, code.name)
    [seen] = [s for s in decode_statuses(text, COMPAT) if s.code.name == code.name]
    assert (seen.code.api, seen.code.number) == ("cudnn_legacy", code.number)
    wrong = "Check failed: status == CUDNN_STATUS_SUCCESS (%d vs. 0)  %s" % (code.number + 1000, code.name)
    assert all(s.code.api != "cudnn_legacy" for s in decode_statuses(wrong, COMPAT))


def test_ollamas_cuinit_failure_is_the_driver_apis_code_and_names_the_hmm_workaround():
    """ollama#11593: "cuda driver library init failure: 3" is cuInit's CUresult; on drivers 570-580 the nvidia_uvm
    HMM bug (open-gpu-kernel-modules#901, #947) gives exactly that while nvidia-smi works."""
    text = ('msg="Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.575.57.08: cuda driver library '
            'init failure: 3"')
    assert [s.code.name for s in decode_statuses(text, COMPAT)] == ["CUDA_ERROR_NOT_INITIALIZED"]
    found = answer(decode(text, COMPAT), COMPAT)
    assert found is not None and "HMM" in found.cause
    assert "echo 'options nvidia_uvm uvm_disable_hmm=1' | sudo tee /etc/modprobe.d/nvidia-uvm-hmm.conf" in \
        found.fix.commands
