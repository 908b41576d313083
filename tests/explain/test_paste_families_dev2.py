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


# A CUDA build pinned by its local tag (+cu102) on a Python the release has no wheels for: the fix installs that
# build from the page that serves it (PyPI has no +cu102 file), in an environment made the platform's way.
PIP_OLD_PYTHON_WINDOWS = ("C:\\Users\\me>pip3 install torch==1.8.1+cu102 torchvision==0.9.1+cu102 -f "
                          "https://download.pytorch.org/whl/torch_stable.html\nDEPRECATION: Python 3.5 reached the end "
                          "of its life on September 13th, 2020.\nERROR: No matching distribution found for "
                          "torch==1.8.1+cu102")
PIP_NEW_PYTHON_TAG = ("$ python -V\nPython 3.10.12\n$ pip install torch==1.9.1+cu111\nERROR: No matching distribution "
                      "found for torch==1.9.1+cu111")
PIP_NEW_PYTHON = ("$ python3 -V\nPython 3.12.3\n$ pip install torch==2.0.1\nERROR: Could not find a version that "
                  "satisfies the requirement torch==2.0.1\nERROR: No matching distribution found for torch==2.0.1")


def test_a_tagged_cuda_build_on_an_unsupported_python_is_installed_from_its_page_on_windows():
    ex = _ex(PIP_OLD_PYTHON_WINDOWS)
    assert ex.answer is not None and "Python 3.5" in ex.answer.cause, ex.answer
    # PyPI's Windows wheel of a release is its CPU build: the +cu102 build and its page, named as the paste did
    assert ex.fix.commands == ["py -3.6 -m venv .venv-py36", ".venv-py36\\Scripts\\activate",
                               'pip install "torch==1.8.1+cu102" -f https://download.pytorch.org/whl/torch_stable.html'
                               ], ex.fix.commands
    assert ex.fix.shell == "powershell"


def test_a_tagged_cuda_build_keeps_its_tag_and_page_and_the_cuda_is_read_from_the_tag():
    ex = _ex(PIP_NEW_PYTHON_TAG)
    assert ex.answer is not None and "Python 3.10" in ex.answer.cause, ex.answer
    assert ex.fix.commands[-1] == ('pip install "torch==1.9.1+cu111" -f '
                                   'https://download.pytorch.org/whl/torch_stable.html'), ex.fix.commands


def test_the_environment_commands_run_as_printed(tmp_path):
    """The fix's first two commands, run by sh as printed (this machine has the Python the fix names): the new
    environment is the one activated."""
    import shutil
    import subprocess

    ex = _ex(PIP_NEW_PYTHON)
    make, activate, install = ex.fix.commands
    assert make == "python3.11 -m venv .venv-py311" and install == "pip install torch==2.0.1", ex.fix.commands
    if shutil.which("python3.11") is None:
        import pytest

        pytest.skip("python3.11 is not on PATH")
    done = subprocess.run(["sh", "-c", "%s --without-pip && %s && echo \"$VIRTUAL_ENV\"" % (make, activate)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / ".venv-py311")


# Driver state and the container runtime: the kernel module's and nvidia-container-cli's own lines.
API_MISMATCH = ("[ 8812.104233] NVRM: API mismatch: the client has the version 550.90.07, but\n"
                "               NVRM: this kernel module has the version 550.54.14.  Please\n"
                "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
                "               NVRM: components have the same version.")
PROC_DRIVER = ("docker: Error response from daemon: failed to create task for container: OCI runtime create failed: "
               "error running hook #0: stderr: nvidia-container-cli: mount error: mount operation failed: "
               "/var/lib/docker/overlay2/0f1e/merged/proc/driver/nvidia/gpus/0000:01:00.0: no such file or directory: "
               "unknown.")
WRAPPED_FILE_EXISTS = ("stderr: nvidia-container-cli: mou\nnt error: file creation failed: /var/lib/docker/overlay2/9a8b/"
                       "merged/usr/lib/x86_64-linux-gnu/libcuda.so.1: file exists: unknown")


def test_the_module_mismatch_line_names_both_releases():
    ex = _ex(API_MISMATCH)
    assert ex.answer is not None and "550.90.07" in ex.answer.cause and "550.54.14" in ex.answer.cause, ex.answer
    assert "sudo reboot" in ex.fix.commands, ex.fix


def test_a_failed_mount_of_the_drivers_proc_entries_is_a_stale_module():
    ex = _ex(PROC_DRIVER)
    assert ex.answer is not None and "/proc/driver/nvidia" in ex.answer.cause, ex.answer
    assert "reboot" in ex.fix.text, ex.fix.text


def test_a_wrapped_file_exists_line_is_a_driver_file_in_the_image():
    ex = _ex(WRAPPED_FILE_EXISTS)
    assert ex.answer is not None and "image" in ex.answer.cause, ex.answer
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.1" in ex.answer.cause and "overlay2" not in ex.answer.cause, ex.answer


# CUDNN_STATUS_ARCH_MISMATCH as cuDNN and its bindings spell it: the GPU is below cuDNN's compute capability floor.
ARCH_CUDNN_5 = "cudnn.SpatialConvolution: CUDNN_STATUS_ARCH_MISMATCH\nusing cuDNN v5.1 with CUDA 8.0"
ARCH_BINDING = "  File \"net.py\", line 40, in forward\n    raise cudnnExceptions[status]\nlibcudnn.cudnnStatusArchMismatch"
ARCH_WORDS = "INFO: Initializing CuDNN backend...\nERROR: Arch mismatch\n in create at cudnn.jl:43"


def test_cudnns_arch_status_is_its_compute_capability_floor():
    ex = _ex(ARCH_CUDNN_5)
    assert ex.answer is not None and "cuDNN 5.1" in ex.answer.cause and "3.0" in ex.answer.cause, ex.answer
    assert "compute capability 3.0 or higher" in ex.fix.text and "pip install" not in ex.fix.text, ex.fix.text
    for text in (ARCH_BINDING, ARCH_WORDS):
        ex = _ex(text)
        assert ex.understood and ex.answer is not None and "3.0" in ex.answer.cause, (text, ex.answer)


# A GPU named without its vendor word, and nvcc older than the GPU: the architecture and its first CUDA.
NO_KERNEL_RTX = "RuntimeError: CUDA error: no kernel image is available for execution on the device (RTX 3080, torch 1.6)"
NVCC_OLD = ("nvcc fatal   : Unsupported gpu architecture 'compute_86'\nerror: command '/usr/local/cuda-10.2/bin/nvcc' "
            "failed with exit status 1\n$ export TORCH_CUDA_ARCH_LIST=\"7.0\"\n$ python setup.py install\n"
            "RuntimeError: CUDA error: no kernel image is available for execution on the device")


def test_a_bare_rtx_name_gives_the_architecture_and_the_cuda_that_serves_it():
    ex = _ex(NO_KERNEL_RTX)
    assert ex.answer is not None and "Ampere" in ex.answer.cause and "8.6" in ex.answer.cause, ex.answer
    assert "CUDA 11.0" in ex.answer.cause, ex.answer.cause  # sm_80 kernels run on 8.6


def test_nvcc_older_than_the_gpu_names_the_first_cuda_and_the_cut_arch_list():
    ex = _ex(NVCC_OLD)
    assert ex.answer is not None and "CUDA 11.1" in ex.answer.cause and "compute_86" in ex.answer.cause, ex.answer
    assert "TORCH_CUDA_ARCH_LIST=7.0" in ex.answer.cause, ex.answer.cause
    assert 'TORCH_CUDA_ARCH_LIST="8.6"' in ex.fix.text and "CUDA 11.1" in ex.fix.text, ex.fix.text


# Runtime states check judges on a machine, from the paste: hidden GPUs, Fabric Manager, memory for cuDNN's handle.
HIDDEN = "$ CUDA_VISIBLE_DEVICES=$1 python train.py\nRuntimeError: CUDA error: no CUDA-capable device is detected"
NOT_READY = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.154.05\n"
             "RuntimeError: CUDA error: system not yet initialized")
TF_HANDLE = ("tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is "
             "probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed "
             "above. [Op:Conv2D]")


def test_no_device_with_a_visible_devices_line_reads_it():
    ex = _ex(HIDDEN)
    assert ex.answer is not None and "CUDA_VISIBLE_DEVICES=$1" in ex.answer.cause, ex.answer
    assert "unset CUDA_VISIBLE_DEVICES" in ex.fix.text, ex.fix.text


def test_error_802_is_fabric_manager_of_the_pasted_driver():
    ex = _ex(NOT_READY)
    assert ex.answer is not None and "fabricmanager" in ex.answer.cause and "535.154.05" in ex.answer.cause, ex.answer
    assert "nvidia-fabricmanager-535=535.154.05" in ex.fix.text, ex.fix.text


def test_tensorflows_convolution_algorithm_is_memory_for_cudnn():
    ex = _ex(TF_HANDLE)
    assert ex.answer is not None and "memory" in ex.answer.cause, ex.answer
    assert "TF_FORCE_GPU_ALLOW_GROWTH=true" in ex.fix.text, ex.fix.text


# Builds without CUDA (check's CD701): a CPU-only PyTorch with check's own remedy, an OpenCV without its CUDA backend.
CPU_TORCH_PY37 = ('  File "/opt/envs/det/lib/python3.7/site-packages/torch/cuda/__init__.py", line 166, in _lazy_init\n'
                  '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
                  "AssertionError: Torch not compiled with CUDA enabled")
IS_AVAILABLE_FALSE = ("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
                      "False. If you are running on a CPU-only machine, please use torch.load with map_location")
OPENCV = ("[ WARN:0@1.204] global net_impl.cpp:178 setUpNet DNN module was not built with CUDA backend; switching to "
          "CPU\nGPU: NVIDIA GeForce GTX 1660 SUPER")


def test_a_cpu_only_torch_gets_a_cuda_build_its_python_installs():
    ex = _ex(CPU_TORCH_PY37)
    assert ex.answer is not None and "CPU-only" in ex.answer.cause and "Python 3.7" in ex.answer.cause, ex.answer
    assert "torch==1.13.1" in ex.fix.text and "download.pytorch.org/whl/cu" in ex.fix.text, ex.fix.text


def test_is_available_false_is_most_often_a_cpu_build():
    ex = _ex(IS_AVAILABLE_FALSE)
    assert ex.answer is not None and "CPU-only" in ex.answer.cause and "driver" in ex.answer.cause, ex.answer
    assert "download.pytorch.org/whl/cu" in ex.fix.text, ex.fix.text


def test_opencv_without_its_cuda_backend_is_rebuilt_for_the_gpu():
    ex = _ex(OPENCV)
    assert ex.answer is not None and "CUDA DNN backend" in ex.answer.cause, ex.answer
    assert "CUDA_ARCH_BIN=7.5" in ex.fix.text and "OPENCV_DNN_CUDA=ON" in ex.fix.text, ex.fix.text


def test_the_wheel_index_reads_cp36m_wheels_and_a_patch_requirement():
    """PyPI's torch 1.10.2 has cp36m wheels and Requires-Python >=3.6.2: a Python 3.6 node installs it."""
    from cudnn_doctor.knowledge.resolve import newest
    from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index

    index = load_wheel_index()
    assert index.installable("torch", "1.10.2", Node(python="3.6", machine="x86_64")) is None
    assert newest(index, "torch", "", Node(python="3.6")).version == "1.10.2"


# Libraries a program opens by name at run time: the loader's path decides, not where a wheel put them.
PADDLE_DYNLOAD = ("RuntimeError: (PreconditionNotMet) Cannot load cudnn shared library. Cannot invoke method "
                  "cudnnGetVersion.\n  [Hint: cudnn_dso_handle should not be null.] (at /paddle/paddle/phi/backends/"
                  "dynload/cudnn.cc:64)")
SUBLIBRARY = ("[2026-01-02 10:11:12] transcribe: loading model\nCould not load library libcudnn_cnn_infer.so.8. Error: "
              "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory\nAborted (core dumped)")
ZLIB = "Could not locate zlibwapi.dll. Please make sure it is in your library path!\nPS C:\\work>"


def test_paddles_dynload_is_the_loader_path():
    ex = _ex(PADDLE_DYNLOAD)
    assert ex.answer is not None and "LD_LIBRARY_PATH" in ex.answer.cause, ex.answer
    assert "LD_LIBRARY_PATH" in ex.fix.text and "libcudnn.so" in ex.fix.text, ex.fix.text


def test_a_cudnn_sub_library_opened_by_name_needs_its_folder_on_the_path():
    ex = _ex(SUBLIBRARY)
    assert ex.answer is not None and "by name" in ex.answer.cause, ex.answer
    assert "LD_LIBRARY_PATH" in ex.fix.text and "nvidia.cudnn" in ex.fix.text, ex.fix.text
    assert 'pip install "nvidia-cudnn-cu12==8.*"' in ex.fix.text, ex.fix.text


def test_zlibwapi_is_cudnn_8s_windows_dependency():
    ex = _ex(ZLIB)
    assert ex.answer is not None and "zlibwapi.dll" in ex.answer.cause, ex.answer
    assert "zlibwapi.dll" in ex.fix.text and "PATH" in ex.fix.text, ex.fix.text


# Driver/CUDA encodings: PTX newer than the pasted driver JITs, answered with that driver's CUDA and the next floor.
PTX_DRIVER = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  450.119.03  Tue Apr 13 2021\n"
              "CUDA error: the provided PTX was compiled with an unsupported toolchain. (kernels.cu:88)")


def test_ptx_newer_than_the_pasted_driver_names_its_cuda_and_the_next_floor():
    ex = _ex(PTX_DRIVER)
    assert ex.answer is not None and "450.119.03" in ex.answer.cause and "CUDA 11.0 at most" in ex.answer.cause, \
        ex.answer
    assert "CUDA 11.1" in ex.answer.cause and "455.23" in ex.answer.cause, ex.answer.cause
    assert "455.23" in ex.fix.text, ex.fix.text


# NCCL: an undefined symbol said in words and torch's collect_env package lines ("[pip3] name==version").
NCCL_COLLECT_ENV = ("import torch fails with undefined symbol ncclCommShrink\n"
                    "Versions of relevant libraries:\n[pip3] numpy==2.1.2\n[pip3] nvidia-nccl-cu12==2.27.3\n"
                    "[pip3] nvidia-nccl-cu13==2.28.9\n[pip3] torch==2.9.1")


def test_two_nccl_wheels_from_collect_env_lines():
    ex = _ex(NCCL_COLLECT_ENV)
    assert ex.answer is not None and "nvidia-nccl-cu12" in ex.answer.cause, ex.answer
    assert "ncclCommShrink" in ex.answer.cause, ex.answer.cause
    assert "pip uninstall -y nvidia-nccl-cu12" in ex.fix.text, ex.fix.text


# A framework's check that loaded an older cuDNN than it was built with: an older copy in front, else not installed.
PADDLE_OLDER = ("W0101 device_context.cc:372] The installed Paddle is compiled with CUDNN 8.2, but CUDNN version in "
                "your machine is 8.0, which may cause serious incompatible bug. Please recompile or reinstall Paddle "
                "with compatible CUDNN version.")


def test_an_older_loaded_cudnn_is_a_copy_in_front_or_a_missing_install():
    ex = _ex(PADDLE_OLDER)
    assert ex.answer is not None and "another copy" in ex.answer.cause, ex.answer
    assert "LD_LIBRARY_PATH" in ex.fix.text and "nvidia-cudnn-cu12>=8.2" in ex.fix.text, ex.fix.text


# Python extensions built against another PyTorch: a mangled c10/at/torch symbol, xFormers' own warning.
EXT_ABI = ("ImportError: /venv/lib/python3.11/site-packages/my_ops/_C.cpython-311-x86_64-linux-gnu.so: undefined\n"
           " symbol: _ZNK3c1010TensorImpl15decref_pyobjectEv\ntorch==2.4.1")
XFORMERS = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.5.1+cu121 with CUDA 1201 (you have 2.5.1+cu124)\n    Python  3.11.9 (you have 3.11.9)")


def test_an_extension_missing_a_torch_symbol_was_built_for_another_torch():
    ex = _ex(EXT_ABI)
    assert ex.answer is not None and "another PyTorch release" in ex.answer.cause, ex.answer
    assert "PyTorch 2.4.1" in ex.answer.cause and "_C.cpython-311" in ex.answer.cause, ex.answer.cause
    assert "reinstall my_ops built for the installed torch" in ex.fix.text, ex.fix.text


def test_xformers_names_the_torch_it_was_built_for():
    ex = _ex(XFORMERS)
    assert ex.answer is not None and "2.5.1+cu121" in ex.answer.cause and "2.5.1+cu124" in ex.answer.cause, ex.answer
    assert "xformers" in ex.fix.text, ex.fix.text


# A runtime of an older CUDA the program was built for: install it, or rebuild the program for the CUDA there.
OLD_RUNTIME = "\tlibcudart.so.9.2 => not found\n\tlibcublas.so.9.2 => not found\n"


def test_an_old_cuda_runtime_missing_offers_the_rebuild_against_the_cuda_there():
    ex = _ex(OLD_RUNTIME)
    assert ex.answer is not None and "CUDA 9.2" in ex.fix.text, ex.answer
    assert "rebuild it from source" in ex.fix.text, ex.fix.text


# CuPy's wheels are per CUDA major: a missing runtime of the wheel's major, or the wheel of the CUDA there.
CUPY = ("RuntimeError: CuPy failed to load libnvrtc.so.12: OSError: libnvrtc.so.12: cannot open shared object file: "
        "No such file or directory\n  cupy_backends/cuda/_softlink.pyx(25): cupy_backends.cuda._softlink.SoftLink")


def test_cupy_names_its_wheel_of_the_cuda_major_and_the_next():
    ex = _ex(CUPY)
    assert ex.answer is not None and "cupy-cuda12x" in ex.answer.cause, ex.answer
    assert "pip uninstall -y cupy-cuda12x" in ex.fix.commands and "pip install cupy-cuda13x" in ex.fix.commands, \
        ex.fix


# TensorRT: a plugin layer without its creator registered.
TRT_PLUGIN = ("[01/02/2026-10:11:12] [TRT] [E] 1: [pluginV2Runner.cpp::load::303] Error Code 1: Serialization "
              "(getPluginCreator could not find plugin: YoloLayer_TRT version: 1)\n"
              "[TRT] [E] Cannot deserialize plugin since corresponding IPluginCreator not found in Plugin Registry")


def test_a_tensorrt_plugin_without_its_creator_is_a_library_to_load():
    ex = _ex(TRT_PLUGIN)
    assert ex.answer is not None and "YoloLayer_TRT" in ex.answer.cause and "plugin" in ex.answer.cause, ex.answer
    assert "YoloLayer_TRT" in ex.fix.text and "init_libnvinfer_plugins" in ex.fix.text, ex.fix.text


# Lua Torch7's cudnn.torch bindings open one cuDNN major per branch.
TORCH7_R6 = ("/opt/torch/install/bin/luajit: /opt/torch/install/share/lua/5.1/cudnn/ffi.lua:1600: 'libcudnn (R6) not "
             "found in library path.\nThen make sure files named as libcudnn.so.6 or libcudnn.6.dylib are placed in "
             "your library load path")


def test_torch7_bindings_name_their_branch_and_the_next():
    ex = _ex(TORCH7_R6)
    assert ex.answer is not None and "R6" in ex.answer.cause and "libcudnn.so.6" in ex.answer.cause, ex.answer
    assert "R7 for cuDNN 7" in ex.fix.text and "luarocks" in ex.fix.text and "pip" not in ex.fix.text, ex.fix.text


# Driver state on bare metal: nvidia-smi cannot reach the module; modprobe says which of Secure Boot or the kernel.
NO_MODULE = ("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
             "the latest NVIDIA driver is installed and running.\n$ uname -r\n6.8.0-45-generic")


def test_no_module_on_bare_metal_asks_modprobe_for_secure_boot_or_the_kernel():
    ex = _ex(NO_MODULE)
    assert ex.answer is not None and "Secure Boot" in ex.answer.cause, ex.answer
    assert "sudo modprobe nvidia" in ex.fix.commands and "mokutil" in ex.fix.text, ex.fix
    assert "ubuntu-drivers" in ex.fix.text or "driver" in ex.fix.text, ex.fix.text


# WSL: ldconfig's 'is not a symbolic link' on the Windows driver's copies is harmless; silencing it is a link.
WSL_LDCONFIG = ("$ sudo ldconfig\n/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link\n")


def test_wsl_ldconfig_warning_is_harmless_and_says_how_to_silence_it():
    ex = _ex(WSL_LDCONFIG)
    assert ex.answer is not None and not ex.answer.problem and "harmless" in ex.answer.cause, ex.answer
    assert "nothing to fix" in ex.fix.text and "symbolic links to libcuda.so.1.1" in ex.fix.text, ex.fix.text


def test_no_kernels_on_a_python_no_torch_installs_on_names_the_nearest_python_the_newest_release_takes():
    """The wheel index (PyPI's real file names) is the judge: the fix's Python is one the newest torch installs on,
    and no Python nearer the paste's is."""
    from cudnn_doctor.knowledge.resolve import newest
    from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index

    index = load_wheel_index()
    latest = newest(index, "torch", "", Node()).version
    for python in ("3.4", "3.16"):
        ex = _ex("/home/u/.local/lib/python%s/site-packages/torch/nn/modules/conv.py\nimport torch\nRuntimeError: "
                 "CUDA error: no kernel image is available for execution on the device" % python)
        make, activate, install = ex.fix.commands
        use = make.split()[0][len("python"):]
        assert install == "pip install torch==%s" % latest and activate.startswith(". .venv-py"), ex.fix.commands
        assert index.resolves("torch", latest, Node(python=use)) is None, use
        have, got = int(python[2:]), int(use[2:])
        nearer = ["3.%d" % m for m in range(min(have, got) + 1, max(have, got))]
        assert not [p for p in nearer if index.resolves("torch", latest, Node(python=p)) is None], (python, use)


def test_a_top_level_extension_missing_a_torch_symbol_is_reinstalled_by_its_projects_name():
    """flash-attn builds flash_attn_2_cuda as a top-level module (its setup.py, compat/packages.toml): pip knows the
    project, not the module. A module no table names is still said by its own name, and one in a package folder by
    that folder."""
    ex = _ex("ImportError: /venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
             "undefined symbol: _ZN3c104impl3cow11cow_deleterEPv")
    assert ex.fix.commands == ["pip install --force-reinstall --no-build-isolation --no-cache-dir flash-attn"], \
        ex.fix.commands
    assert "flash_attn_2_cuda" in ex.answer.cause  # the evidence keeps the file's own name
    other = _ex("ImportError: /venv/lib/python3.10/site-packages/my_op_cuda.cpython-310-x86_64-linux-gnu.so: "
                "undefined symbol: _ZN3c104impl3cow11cow_deleterEPv")
    assert other.fix.commands[0].endswith(" my_op_cuda"), other.fix.commands


# TensorFlow looks for TensorRT only to offer TF-TRT: its dso_loader warnings for libnvinfer are no failure.
TF_TRT = ("2023-02-12 02:34:13.661160: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
          "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: "
          "No such file or directory; LD_LIBRARY_PATH: /usr/lib64-nvidia\n"
          "2023-02-12 02:34:13.661201: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
          "Could not load dynamic library 'libnvinfer_plugin.so.7'; dlerror: libnvinfer_plugin.so.7: cannot open "
          "shared object file: No such file or directory\n"
          "2023-02-12 02:34:13.661212: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot "
          "dlopen some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, please make sure the "
          "missing libraries mentioned above are installed properly.")
TF_TRT_AND_CUDART = TF_TRT + (
    "\n2023-02-12 02:34:14.102311: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could "
    "not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No "
    "such file or directory")


def test_tensorflows_tensorrt_warnings_alone_are_harmless_and_not_called_a_cuda_runtime():
    ex = _ex(TF_TRT)
    assert ex.answer is not None and ex.answer.cause.startswith("harmless: TensorFlow"), ex.answer
    assert "TF-TRT" in ex.answer.cause and "TensorRT" in ex.fix.text, (ex.answer.cause, ex.fix.text)
    assert not [n for n in ex.needs if "CUDA 7" in n], ex.needs  # was: "libnvinfer.so.7 is the CUDA 7 runtime's"


def test_a_missing_cuda_runtime_beside_them_is_the_answer():
    ex = _ex(TF_TRT_AND_CUDART)
    assert ex.answer is not None and "libcudart.so.11.0" in ex.answer.cause, ex.answer
    assert "harmless" not in ex.answer.cause


def test_a_tensorrt_soname_is_not_dated_as_a_cuda_release():
    # libnvinfer.so.7 is TensorRT 7's: no CUDA toolkit ships it (the soname table does not list it)
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.model import Facts
    from cudnn_doctor.remedies.explain import cuda_for_soname
    compat = load_compat()
    assert cuda_for_soname(compat, Facts(), "libnvinfer", "7") is None
    assert cuda_for_soname(compat, Facts(), "libcufft", "11").startswith("12.")  # cuFFT 11 is CUDA 12's


def test_libcuda_missing_in_peoples_own_words_names_the_container_case_too():
    """'missing libcuda.so.1 file' is the loader's 'cannot open shared object file' said by a person; where the paste
    does not say the machine, a container started without the GPUs is one of the causes, with its own fix."""
    for text in ("Import Tensorflow Failed due to missing libcuda.so.1 file", "libcuda.so.1 is not found"):
        ex = _ex(text)
        assert ex.answer is not None and "libcuda.so.1" in ex.answer.cause, text
        assert "container" in ex.answer.cause and "--gpus all" in ex.fix.text, (ex.answer.cause, ex.fix.text)


def test_a_prompt_on_dockers_container_id_hostname_is_a_container():
    ex = _ex("root@3f2a9c0d1b7e:/workspace# python -c 'import torch'\n"
             "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory")
    assert "container" in ex.answer.cause and "--gpus all" in ex.fix.text, (ex.answer.cause, ex.fix.text)
    assert "ubuntu-drivers" not in ex.fix.text, ex.fix.text  # the driver belongs to the host, not the container


def test_a_library_named_missing_in_peoples_words_is_a_missing_library():
    ex = _ex("the program stops: libcudnn_cnn_infer.so.8 is missing")
    assert ex.answer is not None and "libcudnn_cnn_infer.so.8" in ex.answer.cause, ex.answer


def test_an_insufficient_driver_with_no_version_said_names_the_container_started_without_gpus_too():
    """cudaErrorInsufficientDriver (35) is also what the CUDA runtime returns where it finds no libcuda at all, as in a
    container started with plain `docker run` (nvidia-docker#400): with no version on either side, both causes; a paste
    that says it is a container puts the container first; a driver version named keeps the one cause."""
    bare = "Cuda Error: CUDA driver version is insufficient for CUDA runtime version"
    ex = _ex(bare)
    assert "older than the CUDA runtime" in ex.answer.cause and "container" in ex.answer.cause, ex.answer.cause
    assert "docker run --gpus all" in " ".join(ex.fix.alternatives), ex.fix.alternatives
    inside = _ex("root@3f2a9c0d1b7e:/workspace# python train.py\n" + bare)
    assert inside.answer.cause.startswith("no driver reaches the process"), inside.answer.cause
    named = _ex("Driver Version: 390.48\n" + bare)
    assert "container" not in named.answer.cause, named.answer.cause


def test_cnn_infer_8_with_its_loader_error_cut_off_names_the_libcuda_it_opens_too():
    """cuDNN 8's libcudnn_cnn_infer.so.8 also fails to load where the unversioned libcuda.so it opens is missing, as
    on WSL (microsoft/WSL#8587): with the loader's own error cut off, both ways; with it, only the one it names."""
    cut = _ex("Could not load library libcudnn_cnn_infer.so.8")
    assert "libcuda.so" in cut.answer.cause and "/usr/lib/wsl/lib" in cut.answer.cause, cut.answer.cause
    assert "sudo ln -sf libcuda.so.1 libcuda.so" in cut.fix.alternatives, cut.fix.alternatives
    whole = _ex("Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared "
                "object file: No such file or directory")
    assert "libcuda.so" not in whole.answer.cause, whole.answer.cause
    ops = _ex("Could not load library libcudnn_ops_infer.so.8")  # libcuda.so is cnn_infer's to open, not ops_infer's
    assert "libcuda.so" not in ops.answer.cause, ops.answer.cause
