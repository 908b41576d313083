"""Issue 44, item 3, the families dev2's misses group into: each a short real-looking text (none copied from the
corpus) that the decoder answered wrongly or not at all before its family was added, answered with --no-check."""
from __future__ import annotations

from cudnn_doctor.explain import explain

# A paste that names no PyTorch release: the warning itself says which release printed it.
PLAN_NO_RELEASE = ("/srv/env/lib/python3.11/site-packages/torch/nn/modules/conv.py:456: UserWarning: Plan failed with "
                   "a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed "
                   "cudnn_status: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at "
                   "../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)")
PLAN_TAIL_ONLY = ("cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: "
                  "CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at ..\\aten\\src\\ATen\\native\\cudnn\\Conv_v8.cpp:919.)")


def _ex(text):
    return explain(text, check=False).explanation


def test_a_release_only_warning_names_its_release_when_the_paste_does_not():
    for text in (PLAN_NO_RELEASE, PLAN_TAIL_ONLY):
        ex = _ex(text)
        assert ex.answer is not None and not ex.answer.problem, ex.answer
        assert "2.3.0" in ex.answer.cause and "2.3.1" in ex.fix.text, (ex.answer.cause, ex.fix.text)


def test_the_same_words_in_an_error_of_a_named_other_release_are_not_called_harmless():
    ex = _ex("torch 2.1.0\nRuntimeError: cuDNN error: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize "
             "Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED")
    assert ex.answer is None or "harmless" not in ex.answer.cause, ex.answer
