"""Two frameworks of one paste's environment that need different cuDNN majors (onnxruntime-22491): the answer
reads both releases, says whose cuDNN the process has, and names the release of either framework built on the
other's major, each a release PyPI's recorded index holds and compat's build rows confirm. Before: a bare
'reinstall onnxruntime' (error 126) that named neither cuDNN."""
from __future__ import annotations

import re

import pytest

from cudnn_doctor.explain import explain
from cudnn_doctor.explain.paste_facts import read_paste
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.knowledge.wheel_index import load_wheel_index
from cudnn_doctor.versions import major_of

# https://github.com/microsoft/onnxruntime/issues/22491 (trimmed): the user's own prints, then the provider's failure
PRINTS = ("HJH Check Python Ver.3.11.8 HJH Check CUDA Ver.12.1 HJH Check Torch Ver.2.3.1+cu121 HJH Check cuDNN Ver. "
          "8907 HJH Check ONNXRuntime Ver. 1.19.2\n")
LOAD_126 = ('[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 "" when trying to load '
            '"C:\\Work\\python_embeded\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"')
# ONNX Runtime 1.19's own words beside a pip list of a CUDA 11.8 PyTorch
REQUIRE = ("torch==2.3.1+cu118\nonnxruntime-gpu==1.19.2\nFailed to create CUDAExecutionProvider. Require cuDNN 9.* and "
           "CUDA 12.*, and the latest MSVC runtime.")


def test_a_user_s_own_version_prints_are_read():
    facts = read_paste(PRINTS)
    assert facts.python is not None and facts.python.value == "3.11"
    assert [(p.release, p.tag) for p in facts.programs if p.name == "PyTorch"] == [("2.3.1", "cu121")]
    assert [p.release for p in facts.programs if p.name == "ONNX Runtime" and p.release] == ["1.19.2"]
    assert facts.cudnn_loaded is not None and facts.cudnn_loaded.value == "8.9.7"


@pytest.mark.parametrize("text", ["cudnn 2018 release notes", "cuDNN 8.9.7 for CUDA 12", "cudnn-8907x.tar"])
def test_only_cudnn_s_own_integer_encoding_is_read_as_the_one_loaded(text):
    assert read_paste(text).cudnn_loaded is None


def _fix_releases(fix_text: str, project: str) -> list:
    return re.findall(r"%s(?:\[[\w,]+\])?==([\d.]+)" % re.escape(project), fix_text)


def test_onnxruntime_on_cudnn_9_beside_pytorch_on_cudnn_8_without_a_cuda_12_build_of_the_other():
    ex = explain(PRINTS + LOAD_126, check=False).explanation
    cause, fix = ex.answer.cause, ex.fix.text
    assert "cuDNN 9" in cause and "8.9.7" in cause and "PyTorch 2.3.1" in cause, cause
    # no onnxruntime-gpu on PyPI links cuDNN 8 with CUDA 12, so only PyTorch's release on cuDNN 9 for CUDA 12.1
    assert _fix_releases(fix, "onnxruntime-gpu") == [] and "download.pytorch.org/whl/cu121" in fix, fix
    [torch] = _fix_releases(fix, "torch")
    compat = load_compat()
    assert torch in load_wheel_index().versions("torch")
    [row] = [r for r in compat.torch_rows(torch) if r["cuda"] == "12.1"]
    assert major_of(row["cudnn"]) == 9 and "nvidia-cudnn" not in fix


def test_the_release_of_either_framework_is_named_where_both_exist():
    ex = explain(REQUIRE, check=False).explanation
    fix = ex.fix.text
    [ort] = _fix_releases(fix, "onnxruntime-gpu")
    build = load_compat().framework_build("onnxruntime_gpu", ort)
    assert ort in load_wheel_index().versions("onnxruntime-gpu")
    assert build is not None and build["cudnn_major"] == 8 and major_of(build["cuda"]) == 11
    assert fix.index("onnxruntime-gpu==") < fix.index("torch==")  # the change to one framework only, first
    assert ex.fix.commands[0] == "pip install onnxruntime-gpu==%s" % ort


def test_frameworks_on_one_major_are_left_to_the_other_answers():
    ex = explain("torch==2.4.1+cu121\nonnxruntime-gpu==1.19.2\n" + LOAD_126, check=False).explanation
    assert "one libcudnn major" not in (ex.answer.cause if ex.answer else "")


def test_pytorch_s_build_brings_the_cuda_major_onnx_runtime_links():
    # onnxruntime-gpu 1.19.2 links CUDA 12: a cu118 PyTorch on cuDNN 9 would still lack it (review of round 25)
    fix = explain(REQUIRE, check=False).explanation.fix.text
    assert "download.pytorch.org/whl/cu12" in fix and "whl/cu118" not in fix, fix


def test_an_onnxruntime_release_offered_links_the_cuda_major_pytorch_brings():
    # onnxruntime-gpu 1.27 on is CUDA 13's (its Requires-Dist names nvidia-cudnn-cu13): beside a CUDA 12 PyTorch on
    # cuDNN 9, the release offered is the newest CUDA 12 one
    text = ("torch==2.5.1+cu124\nonnxruntime-gpu==1.18.1\nFailed to create CUDAExecutionProvider. Require cuDNN 8.* "
            "and CUDA 11.*")
    fix = explain(text, check=False).explanation.fix.text
    [ort] = _fix_releases(fix, "onnxruntime-gpu")
    build = load_compat().framework_build("onnxruntime_gpu", ort)
    assert build is not None and build["cuda"] == "12" and build["cudnn_major"] == 9, (ort, build)


@pytest.mark.parametrize("failure", ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                                     "RuntimeError: CUDA error: no kernel image is available for execution on the "
                                     "device"])
def test_a_version_list_alone_does_not_take_over_another_failure(failure):
    ex = explain("torch==2.3.1+cu121\nonnxruntime-gpu==1.19.2\n" + failure, check=False).explanation
    assert "one libcudnn major" not in ex.answer.cause and "onnxruntime" not in ex.fix.text, ex.answer.cause


@pytest.mark.parametrize("text, release", [("torch.backends.cudnn.version(): 8902", "8.9.2"),
                                           ("cudnn version: 90100", "9.1.0")])
def test_cudnn_s_integer_is_read_after_its_version_word(text, release):
    said = read_paste(text).cudnn_loaded
    assert said is not None and said.value == release


@pytest.mark.parametrize("text", ["cudnn 4096 workspace", "use cudnn 8000 MB"])
def test_a_number_beside_cudnn_without_its_version_word_is_not_a_release(text):
    assert read_paste(text).cudnn_loaded is None


def test_onnxruntime_s_release_is_read_against_the_cuda_the_paste_states():
    # https://github.com/microsoft/onnxruntime/issues/19292 (the reporter's own spelling): 1.16.2 is CUDA 11.8's
    text = ("'Failed to create CUDAExecutionProvider. Please reference https://onnxruntime.ai/docs/reference/"
            "execution-providers/CUDA-ExecutionProvider.html#requirements to ensure all dependencies are met.'\n"
            "onnxrumtime 1.16.2\nCUDA12.1")
    ex = explain(text, check=False).explanation
    assert "CUDA 11.8" in ex.answer.cause and "12.1" in ex.answer.cause, ex.answer.cause
    [ort] = _fix_releases(ex.fix.text, "onnxruntime-gpu")
    build = load_compat().framework_build("onnxruntime_gpu", ort)
    assert ort in load_wheel_index().versions("onnxruntime-gpu") and build is not None and build["cuda"] == "12"
