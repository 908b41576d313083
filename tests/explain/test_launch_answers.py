"""What launchers and serving stacks say of the GPU they were given, answered from the numbers their own words carry
(explain/answer_launch.py; the runtime's names of three errors in compat/status_codes.toml). Each text is a real paste
from the thread named beside it, found by a breadth sweep of 63 real errors (round 32: 17 unrecognised before)."""
from __future__ import annotations

import pytest
from explain_grading import assert_answer

from cudnn_doctor.explain import explain

# (thread, text, words the cause says, words the fix says, words the fix must not say)
CASES = [
    ("https://github.com/apple/ml-cross-entropy/issues/41",
     "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found NVIDIA "
     'GeForce GTX 1070 '
     'which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton '
     'only supports '
     "devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.1",
     ["compute capability 7.0 or newer", "GTX 1070 is 6.1"], ["export TORCH_COMPILE_DISABLE=1", "aot_eager"],
     ["pip install"]),
    ("https://github.com/substratusai/vllm-docker/issues/37",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
     "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
     "--dtype=half.", ["8.0 or newer", "Tesla T4 is 7.5"], ["--dtype=half"], []),
    ("https://github.com/opendatalab/MinerU/issues/1508",
     'RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling '
     '`cublasGemmStridedBatchedEx(handle, opa, opb, '
     "m, n, k, (void*)(&falpha), a, CUDA_R_16BF, lda, stridea, b, CUDA_R_16BF, ldb, strideb, (void*)(&fbeta), c, "
     "CUDA_R_16BF, ldc, stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`",
     ["bfloat16", "compute capability 8.0"], ["float16"], []),
    ("https://github.com/OFA-Sys/Chinese-CLIP/issues/279",
     'File "C:\\Users\\me\\miniconda3\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 895\n'
     "RuntimeError: Distributed package doesn't have NCCL built in", ["no NCCL", "Windows"], ['backend="gloo"'], []),
    ("https://github.com/hiyouga/LlamaFactory/issues/7396",
     "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
     'timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, '
     'Timeout(ms)=600000) ran '
     "for 600060 milliseconds before timing out.", ["ALLREDUCE collective waited 600 s"],
     ["NCCL_DEBUG=INFO", "timeout="], []),
    ("https://github.com/verl-project/verl/issues/1874",
     "RuntimeError: CUDA error: peer access is not supported between these two devices", ["peer-to-peer"],
     ["export NCCL_P2P_DISABLE=1"], []),
    ("https://github.com/ovg-project/kvcached/issues/110",
     'ValueError: Free memory on device (67.24/79.25 GiB) on startup is less than desired GPU memory '
     'utilization (0.9, '
     "71.33 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
     ["only 67.24 GiB are free"], ["--gpu-memory-utilization 0.83", "nvidia-smi"], []),
    ("https://github.com/NVIDIA/gpu-driver-container/issues/44",
     "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module was "
     "built against the wrong or improperly configured kernel sources", ["Secure Boot", "nouveau"],
     ["dmesg", "MOK"], []),
    ("https://github.com/NVIDIA/NVSentinel/issues/155",
     '[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:26b5) installed in this system '
     'has\nNVRM: '
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
     # no program named: the cause blames none, the fix gives Triton's case (the likeliest) as a case, then the rest
     ["LLVM inside the program's compiler"], ["where it is PyTorch's torch.compile", "otherwise upgrade the program"],
     ["nvcc -gencode"]),
    ("https://github.com/jax-ml/jax/issues/22416",
     "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version "
     "(0.54) and framework PJRT API version 0.51).", ["another release than jaxlib"], ['jax[cuda12]'], []),
    ("https://github.com/enhuiz/vall-e/issues/78", "AssertionError: CUDA_HOME does not exist, unable to compile CUDA "
     "op(s)", ["CUDA_HOME"], ["install the CUDA toolkit", "CUDA_HOME"], []),
    ("https://github.com/ollama/ollama/issues/1649",
     "CUDA error 700 at ggml-cuda.cu:8111: an illegal memory access was encountered\ncurrent device: 1",
     ["bug of the program"], ["newest releases", "CUDA_VISIBLE_DEVICES"], []),
    ("https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1559",
     'WARNING: BNB_CUDA_VERSION=124 environment variable detected; loading '
     'libbitsandbytes_cuda124.so.\nCould not find '
     "the bitsandbytes CUDA binary at PosixPath('/notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cuda124.so')\n"
     'Could not load bitsandbytes native library: '
     '/notebooks/bitsandbytes/bitsandbytes/libbitsandbytes_cpu.so: cannot '
     "open shared object file: No such file or directory",
     ["BNB_CUDA_VERSION=124", "source checkout (/notebooks/bitsandbytes)"],
     ["unset BNB_CUDA_VERSION", "pip install -U bitsandbytes",
      "cd /notebooks/bitsandbytes && cmake -DCOMPUTE_BACKEND=cuda"],
     ["ldconfig", "&& make"]),
    # a CPU-only torch where xFormers was built for that release's CUDA 12.1 build ("CUDA 1201")
    ("https://github.com/facebookresearch/xformers/issues/982",
     "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n    PyTorch 2.2.0+cu121 "
     "with CUDA 1201 (you have 2.2.0+cpu)\n    Python  3.11.7 (you have 3.11.0)", ["the CPU-only build"],
     ["torch==2.2.0 --index-url https://download.pytorch.org/whl/cu121"], []),
    ("https://github.com/NVIDIA/nvidia-container-toolkit/issues/842",
     '>>> pynvml.nvmlDeviceGetMemoryInfo(handle)\n    raise NVMLError(ret)\npynvml.NVMLError_NoPermission: '
     'Insufficient '
     "Permissions", ["MIG instances"], ["nvmlDeviceGetMigDeviceHandleByIndex"], []),
    ("https://github.com/NVIDIA/TensorRT-LLM/issues/1796",
     "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/tmp/tritonbuild/tensorrtllm/"
     "tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:99)", ["tp * pp"], ["mpirun -n"], []),
    ("https://github.com/huggingface/text-generation-inference/issues/2238",
     "Shard process was signaled to shutdown with signal 4 rank=0\nError: ShardCannotStart", ["SIGILL", "AVX"],
     ["/proc/cpuinfo"], []),
    ("https://github.com/jax-ml/jax/issues/29068",
     "ERROR:2025-05-28 18:06:26,600:jax._src.xla_bridge:444: Jax plugin configuration error: Exception when calling "
     "jax_plugins.xla_cuda12.initialize()", ["another release than jaxlib"], ['jax[cuda12]'], []),
    # a second sweep's cluster, compiler and log-line families (round 32)
    ('https://github.com/ComputeCanada/puppet-magic_castle/pull/276',
     'slurmd: fatal: MIG mode is enabled, but no MIG devices were found. Please either create MIG '
     'instances, disable MIG mode, remove AutoDetect=nvml, or remove GPUs from ...',
     ['MIG mode is on'], ['-cgi', 'sudo nvidia-smi -mig 0'], []),
    ('https://github.com/NVIDIA/deepops/issues/1214',
     "fatal: We were configured to autodetect nvml functionality, but we weren't able to find that lib when "
     'Slurm was configured',
     ['built without NVML'], ['--with-nvml'], []),
    ('https://github.com/pytorch/pytorch/issues/152887',
     'RuntimeError: Error: accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run.',
     ['overwritten by the next replay'], ['cudagraph_mark_step_begin'], []),
    ('https://github.com/Comfy-Org/ComfyUI/issues/6866',
     'skipping cudagraphs due to skipping cudagraphs due to cpu device (arg7_1). Found from :\n   File '
     '"comfy\\ldm\\flux\\model.py", in forward',
     ['a warning, not an error'], ['nothing to fix'], []),
    ('https://github.com/NVIDIA/TensorRT/issues/2056',
     'Assertion failed: creator && "Plugin not found, are the plugin name, version, and namespace '
     'correct?"\nIn node 442 (importFallbackPluginImporter): UNSUPPORTED_NODE: Assertion failed: creator && '
     '"Plugin not found, are the plugin name, version, and namespace correct?"\n[06/14/2022-11:19:54] [TRT] '
     '[E] 4: [network.cpp::validate::2633] Error Code 4: Internal Error (Network must have at least one '
     'output)',
     ['does not support the op'], ['newer TensorRT'], []),
    ('https://github.com/jax-ml/jax/issues/25718',
     "The NVIDIA driver's CUDA version is 12.4 which is older than the PTX compiler version (12.6.85). "
     'Because the driver is older than the PTX compiler version, XLA is disabling parallel compilation, '
     'which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA '
     'forward compatibility packages.',
     ['older than the ptxas XLA compiles with'], ['nothing to fix'], []),
    ('https://github.com/linux-surface/linux-surface/issues/705',
     'Loading new nvidia-current-470.94 DKMS files...\nBuilding for 5.15.14-surface\nBuilding initial '
     'module for 5.15.14-surface\nError! Bad return status for module build on kernel: 5.15.14-surface '
     '(x86_64)\nConsult /var/lib/dkms/nvidia-current/470.94/build/make.log for more '
     'information.\n\nwarning: the compiler differs from the one used to build the kernel\n  The kernel was '
     'built by: gcc (Ubuntu 9.3.0-17ubuntu1~20.04) 9.3.0\n  You are using:           gcc (Debian 11.2.0-14) '
     '11.2.0',
     ['DKMS could not build'], ['make.log', 'linux-headers-$(uname -r)'], []),
    ('https://github.com/apptainer/singularity/issues/6356',
     '$ singularity exec --nv alpine_latest.sif bash -c \'echo "hey"\'\nINFO:    Could not find any nv '
     "files on this host!\nWARNING: passwd file doesn't exist in container, not updating\nWARNING: group "
     "file doesn't exist in container, not updating",
     ['--nv found no NVIDIA driver libraries'], ['--nvccli'], []),
    ('https://github.com/onnx/onnx-tensorrt/issues/758',
     '[02/19/2022-21:14:43] [TRT] [W] Skipping tactic 0 due to insuficient memory on requested size of '
     '1170309120 detected for tactic 0.\n[02/19/2022-21:14:43] [TRT] [E] 10: '
     '[optimizer.cpp::computeCosts::2011] Error Code 10: Internal Error (Could not find any implementation '
     'for node {ForeignNode[transformer.wte.weight...MatMul_2899]}.)\n[02/19/2022-21:14:43] [TRT] [E] 2: '
     '[builder.cpp::buildSerializedNetwork::609] Error Code 2: Internal Error (Assertion enginePtr != '
     'nullptr failed. )',
     ['no tactic for a layer'], ['--memPoolSize=workspace'], []),
    ('https://github.com/NVIDIA/gpu-operator/issues/628',
     '    vGPU Software Licensed Product\n        Product Name                      : NVIDIA Virtual '
     'Compute Server\n        License Status                    : Unlicensed (Restricted)',
     ['no NVIDIA vGPU licence'], ['ClientConfigToken', 'restart nvidia-gridd'], []),
    ('https://github.com/NVIDIA/gpu-operator/issues/544',
     "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with "
     'driver version 530.41.03. Please update with matching NVIDIA driver package.',
     ['nvidia-fabricmanager is release 530.30.02 and the driver 530.41.03'],
     ['nvidia-fabricmanager-530=530.41.03'], []),
    ('https://github.com/pytorch/pytorch/issues/88038',
     '    return _VF.stft(input, n_fft, hop_length, win_length, window,  # type: '
     'ignore[attr-defined]\nRuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR',
     ['CUFFT_INTERNAL_ERROR', 'older than the GPU'], ['new enough for the GPU'], []),
    ('https://github.com/pytorch/pytorch/issues/130181',
     '"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED" with torch 2.5.0.dev20240705+cu121 on 2 GPU '
     'NVIDIA-A100-SXM4-80GB-MIG-3g.40gb',
     ['MIG instances'], ['nvidia-smi -L'], []),
    ('https://github.com/NVIDIA/gpu-operator/issues/610',
     'nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with '
     'error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\nsystemd[1]: nvidia-fabricmanager.service: '
     'Control process exited, code=exited, status=1/FAILURE',
     ['found no NVSwitch'], ['disable --now nvidia-fabricmanager'], []),
    ('https://github.com/NVIDIA/nccl-tests/issues/185',
     'misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable',
     ['InfiniBand/RoCE'], ['NCCL_IB_GID_INDEX'], []),
    ('https://github.com/NVIDIA/DCGM/issues/270',
     "ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: 'Detected clocks "
     'event due to thermal violation in GPU 2. Verify that the cooling on this machine is functional, '
     'including external, thermal material interface, fans, and any other components.',
     ['for heat'], ['TEMPERATURE,PERFORMANCE'], []),
    ("https://github.com/meta-llama/llama3/issues/215",
     "ggml_cuda_init: failed to initialize CUDA: initialization error", ["kernel module"], ["nvidia-smi"], []),
]


@pytest.mark.parametrize("url, text, cause, fix, not_in_fix", CASES, ids=[c[0].split("github.com/")[1] for c in CASES])
def test_a_launcher_s_own_words_are_answered_with_their_numbers(url, text, cause, fix, not_in_fix):
    assert_answer(text, cause, fix, not_in_fix)


def test_torch_compile_off_is_written_for_powershell_on_windows():
    text = ('File "C:\\Users\\me\\venv\\lib\\site-packages\\torch\\_dynamo\\eval_frame.py"\nRuntimeError: Found NVIDIA '
            "GeForce GTX 1060 which is too old to be supported by the triton GPU compiler, which is used as the "
            'backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA '
            'capability 6.1')
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
