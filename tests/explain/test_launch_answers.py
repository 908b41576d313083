"""What launchers and serving stacks say of the GPU they were given, answered from the numbers their own words carry
(explain/answer_launch.py; the runtime's names of three errors in compat/status_codes.toml). Each text is a real paste
from the thread named beside it, found by a breadth sweep of 63 real errors (round 32: 17 unrecognised before)."""
from __future__ import annotations

import pytest

from cudnn_doctor.explain import explain

# (thread, text, words the cause says, words the fix says, words the fix must not say)
CASES = [
    ("https://github.com/apple/ml-cross-entropy/issues/41",
     "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found NVIDIA GeForce GTX 1070 "
     "which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only supports "
     "devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     ["compute capability 7.0 or newer", "GTX 1070 is 6.1"], ["export TORCH_COMPILE_DISABLE=1", "aot_eager"],
     ["pip install"]),
    ("https://github.com/substratusai/vllm-docker/issues/37",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", ["8.0 or newer", "Tesla T4 is 7.5"], ["--dtype=half"], []),
    ("https://github.com/opendatalab/MinerU/issues/1508",
     "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmStridedBatchedEx(handle, opa, opb, "
     "m, n, k, (void*)(&falpha), a, CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, (void*)(&fbeta), c, "
     "CUDA_R_16BF, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
     ["bfloat16", "compute capability 8.0"], ["float16"], []),
    ("https://github.com/OFA-Sys/Chinese-CLIP/issues/279",
     'File "C:\\Users\\me\\miniconda3\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 895\n'
     "RuntimeError: Distributed package doesn't have NCCL built in", ["no NCCL", "Windows"], ['backend="gloo"'], []),
    ("https://github.com/hiyouga/LlamaFactory/issues/7396",
     "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran "
     "for 600060 milliseconds before timing out.", ["ALLREDUCE collective waited 600 s"],
     ["NCCL_DEBUG=INFO", "timeout="], []),
    ("https://github.com/verl-project/verl/issues/1874",
     "RuntimeError: CUDA error: peer access is not supported between these two devices", ["peer-to-peer"],
     ["export NCCL_P2P_DISABLE=1"], []),
    ("https://github.com/ovg-project/kvcached/issues/110",
     "ValueError: Free memory on device (67.24/79.25 GiB) on startup is less than desired GPU memory utilization (0.9, "
     "71.33 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     ["only 67.24 GiB are free"], ["--gpu-memory-utilization 0.83", "nvidia-smi"], []),
    ("https://github.com/NVIDIA/gpu-driver-container/issues/44",
     "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module was "
     "built against the wrong or improperly configured kernel sources", ["Secure Boot", "nouveau"],
     ["dmesg", "mokutil"], []),
    ("https://github.com/NVIDIA/NVSentinel/issues/155",
     "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system has\nNVRM: "
     "fallen off the bus and is not responding to commands.", ["Xid 79"], ["reboot", "power"], []),
    ("https://github.com/NVIDIA/k8s-device-plugin/issues/852",
     "Warning  FailedScheduling  26m (x150 over 12h)  default-scheduler  0/1 nodes are available: 1 Insufficient "
     "nvidia.com/gpu.", ["device plugin"], ["kubectl describe nodes", "--set-as-default"], []),
    # LLVM's own words: Triton's where the text names Triton or PyTorch, else any LLVM-based compiler's (Julia, TVM)
    ("https://github.com/pytorch/pytorch/issues/148551",
     "torch._inductor.exc.InductorError: 'sm_120' is not a recognized processor for this target (ignoring processor)",
     ["LLVM inside the build's Triton"], ["PyTorch build for CUDA 12.9"], []),
    ("https://github.com/pytorch/pytorch/issues/148551#bare",
     "'sm_120' is not a recognized processor for this target (ignoring processor)",
     ["LLVM inside the program's compiler"], [], ["torch"]),
    ("https://github.com/jax-ml/jax/issues/22416",
     "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version "
     "(0.54) and framework PJRT API version 0.51).", ["another release than jaxlib"], ['jax[cuda12]'], []),
    ("https://github.com/enhuiz/vall-e/issues/78", "AssertionError: CUDA_HOME does not exist, unable to compile CUDA "
     "op(s)", ["CUDA_HOME"], ["install the CUDA toolkit", "CUDA_HOME"], []),
    ("https://github.com/ollama/ollama/issues/1649",
     "CUDA error 700 at ggml-cuda.cu:8111: an illegal memory access was encountered\ncurrent device: 1",
     ["bug of the program"], ["newest releases", "CUDA_VISIBLE_DEVICES"], []),
    ("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1559",
     "WARNING: BNB_CUDA_VERSION=124 environment variable detected; loading libbitsandbytes_cuda124.so.\nCould not find "
     "the bitsandbytes CUDA binary at PosixPath('/notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cuda124.so')\n"
     "Could not load bitsandbytes native library: /notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cpu.so: cannot "
     "open shared object file: No such file or directory",
     ["BNB_CUDA_VERSION=124", "source checkout (/notebooks/bitsandbytes)"],
     ["unset BNB_CUDA_VERSION", "pip install -U bitsandbytes", "cd /notebooks/bitsandbytes && cmake -DCOMPUTE_BACKEND=cuda"],
     ["ldconfig", "&& make"]),
    # a CPU-only torch where xFormers was built for that release's CUDA 12.1 build ("CUDA 1201")
    ("https://github.com/facebookresearch/xformers/issues/982",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.2.0+cu121 "
     "with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)", ["the CPU-only build"],
     ["torch==2.2.0 --index-url https://download.pytorch.org/whl/cu121"], []),
    ("https://github.com/NVIDIA/nvidia-container-toolkit/issues/842",
     ">>> pynvml.nvmlDeviceGetMemoryInfo(handle)\n    raise NVMLError(ret)\npynvml.NVMLError_NoPermission: Insufficient "
     "Permissions", ["MIG instances"], ["nvmlDeviceGetMigDeviceHandleByIndex"], []),
    ("https://github.com/NVIDIA/TensorRT-LLM/issues/1796",
     "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/tmp/tritonbuild/tensorrtllm/"
     "tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)", ["tp * pp"], ["mpirun -n <tp*pp>"], []),
    ("https://github.com/huggingface/text-generation-inference/issues/2238",
     "Shard process was signaled to shutdown with signal 4 rank=0\nError: ShardCannotStart", ["SIGILL", "AVX"],
     ["/proc/cpuinfo"], []),
    ("https://github.com/jax-ml/jax/issues/29068",
     "ERROR:2025-05-28 18:06:26,600:jax._src.xla_bridge:444: Jax plugin configuration error: Exception when calling "
     "jax_plugins.xla_cuda12.initialize()", ["another release than jaxlib"], ['jax[cuda12]'], []),
    ("https://github.com/meta-llama/llama3/issues/215",
     "ggml_cuda_init: failed to initialize CUDA: initialization error", ["kernel module"], ["nvidia-smi"], []),
]


@pytest.mark.parametrize("url, text, cause, fix, not_in_fix", CASES, ids=[c[0].split("github.com/")[1] for c in CASES])
def test_a_launcher_s_own_words_are_answered_with_their_numbers(url, text, cause, fix, not_in_fix):
    ex = explain(text, check=False).explanation
    assert ex.answer is not None, url
    assert [c for c in cause if c not in ex.answer.cause] == [], ex.answer.cause
    assert [f for f in fix if f not in ex.fix.text] == [], ex.fix.text
    assert [f for f in not_in_fix if f in ex.fix.text] == [], ex.fix.text


def test_torch_compile_off_is_written_for_powershell_on_windows():
    text = ('File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py"\nRuntimeError: Found NVIDIA '
            "GeForce GTX 1060 which is too old to be supported by the triton GPU compiler, which is used as the "
            "backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1")
    ex = explain(text, check=False).explanation
    assert "$env:TORCH_COMPILE_DISABLE = '1'" in ex.fix.text and "export" not in ex.fix.text


def test_an_extension_s_kernel_saying_c10_s_words_is_not_answered_with_pytorch():
    """c10's 'RuntimeError: CUDA error:' is raised by an extension's kernels too: a frame of mmcv's (a review of
    round 32) means its build lacks the GPU, and a PyTorch reinstall would also break its compiled ops."""
    text = ('  File "/usr/lib/python3/site-packages/mmcv/ops/roi_align.py", line 4, in forward\nRuntimeError: CUDA '
            "error: no kernel image is available for execution on the device")
    fix = explain(text, check=False).explanation.fix.text
    assert "rebuild" in fix and "pip install --force-reinstall torch" not in fix, fix


def test_bfloat16_is_not_blamed_on_an_ampere_gpu():
    text = ("GPU 0: NVIDIA A100-SXM4-80GB\nRuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling "
            "`cublasGemmEx(handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF)`")
    ex = explain(text, check=False).explanation
    assert "Ampere) on" not in (ex.answer.cause if ex.answer else ""), ex.answer.cause


def test_vllm_s_bfloat16_words_wrapped_across_lines_keep_its_flag():
    text = ("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU "
            "has compute\ncapability 7.5. You can use float16 instead")
    assert "--dtype=half" in explain(text, check=False).explanation.fix.text
