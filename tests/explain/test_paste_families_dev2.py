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


# pip's "No matching distribution" for a pinned release: the Pythons that release has wheels for decide it.
PIP_PY311 = ("(venv) $ python --version\nPython 3.11.4\n$ pip install torch==1.12.1\n"
             "ERROR: Could not find a version that satisfies the requirement torch==1.12.1 (from versions: 2.0.0, "
             "2.0.1)\nERROR: No matching distribution found for torch==1.12.1")
PIP_NO_PYTHON = ("ERROR: Could not find a version that satisfies the requirement torch==1.4.0\n"
                 "ERROR: No matching distribution found for torch==1.4.0")
PIP_LOCAL_TAG = "ERROR: No matching distribution found for torch==1.12.1+cu116"


def test_pip_finds_no_wheel_for_the_pastes_python():
    ex = _ex(PIP_PY311)
    assert ex.understood and ex.answer is not None, ex.answer
    assert "Python 3.11" in ex.answer.cause and "3.7-3.10" in ex.answer.cause, ex.answer.cause
    assert "python3.10 -m venv" in ex.fix.text and "torch==1.12.1" in ex.fix.text, ex.fix.text


def test_pip_without_a_python_names_the_pythons_either_side():
    ex = _ex(PIP_NO_PYTHON)
    assert ex.answer is not None and "Python 3.5-3.8" in ex.answer.cause, ex.answer
    assert "Python 3.9 or newer" in ex.answer.cause and "Python 3.8" in ex.fix.text, (ex.answer.cause, ex.fix.text)


def test_pip_and_a_local_build_tag_is_pytorchs_own_index():
    ex = _ex(PIP_LOCAL_TAG)
    assert ex.answer is not None and "download.pytorch.org" in ex.answer.cause, ex.answer
    assert "--index-url https://download.pytorch.org/whl/cu116" in ex.fix.text, ex.fix.text
