"""Texts that share words with a family but are not of it, and answers that must not overreach: found by a review of
round 33's families. TensorFlow's cuda_dnn.cc check is not Caffe's CUDNN_CHECK; diffusers' ONNX pipeline files are not
PyTorch; a batch number beside "error" is not CUDA error 804; the CUDA nvidia-smi prints is the driver's, not the one
ONNX Runtime runs with; LLVM's words beside Julia are not Triton's; a PyTorch handle that will not start is GPU memory
first; and a build for the newest CUDA says which GPUs it leaves out."""
from __future__ import annotations

from explain_grading import assert_answer

from cudnn_doctor.explain import explain
from cudnn_doctor.explain.paste_facts import read_paste


def _answer(text: str):
    return explain(text, check=False).explanation


def test_tensorflow_s_own_check_is_not_caffe_s():
    text = ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: "
            "CUDNN_STATUS_INTERNAL_ERROR\nF tensorflow/core/kernels/conv_ops.cc:713] Check failed: status == "
            "CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.")
    assert not read_paste(text).runs("Caffe")
    assert "engine: CAFFE" not in _answer(text).fix.text


def test_diffusers_onnx_pipeline_is_not_pytorch():
    for name in ("pipeline_stable_diffusion_onnx.py", "pipeline_stable_diffusion_img2img_onnx.py",
                 "pipeline_stable_diffusion_oneflow.py"):
        assert not read_paste('File "/x/diffusers/%s", line 5' % name).runs("PyTorch"), name
    assert read_paste('File "/x/diffusers/pipeline_stable_diffusion_img2img.py", line 5').runs("PyTorch")


def test_a_batch_number_beside_error_is_not_error_804():
    assert _answer("Using device cuda:0, batch 804 error: loss is nan").answer is None


def test_nvidia_smi_s_cuda_is_not_the_cuda_onnx_runtime_runs_with():
    ex = _answer("NVIDIA-SMI 515.65   Driver Version: 515.65   CUDA Version: 11.7\nFailed to create "
                 "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*")
    assert "the CUDA here is" not in ex.answer.cause


def test_llvm_beside_julia_is_not_answered_with_pytorch():
    ex = _answer("julia> using CUDA.jl\n'sm_120' is not a recognized processor for this target (ignoring processor)")
    assert "torch" not in ex.fix.text and "upgrade the program" in ex.fix.text


def test_a_pytorch_handle_that_will_not_start_is_memory_first():
    assert _answer("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED").fix.text.startswith("free GPU memory")


def test_the_newest_build_says_which_gpus_it_leaves_out():
    assert_answer("RuntimeError: CUDA error: no kernel image is available for execution on the device", [],
                  ["from compute capability 7.5", "an older GPU needs the CUDA 12.6 build, from 5.0"], [])
