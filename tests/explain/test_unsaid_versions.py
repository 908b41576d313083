"""What a paste leaves unsaid is not guessed: a cuDNN DLL or library missing with no CUDA named gets the wheel of each
CUDA major that cuDNN is built for, the program's CUDA deciding; PyTorch's fbgemm.dll with no release named gets the
known-bad release's fix only where it is that release; NVIDIA's Windows installer folder (one per CUDA release) is
named from compat/windows.toml; LLVM's words with no program named get Triton's fix first (the likeliest) and the
program's own newer release, never a toolkit that cannot change a bundled LLVM. Each text is a real paste from the thread beside it, found by a breadth sweep of real
errors no split holds (round 33)."""
from __future__ import annotations

import pytest
from explain_grading import assert_answer

from cudnn_doctor.knowledge import load_compat

CASES = [
    ("https://github.com/SYSTRAN/faster-whisper/issues/1230",
     "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\nInvalid handle. Cannot load "
     "symbol cudnnCreateTensorDescriptor", ["cudnn_ops64_9.dll", "cuDNN 9"],
     ['for one built for CUDA 12: pip install "nvidia-cudnn-cu12==9.*"', '"nvidia-cudnn-cu13==9.*"',
      "the program's CUDA decides", "C:\\Program Files\\NVIDIA\\CUDNN\\v<cudnn major.minor>\\bin\\<cuda major.minor>"],
     []),
    ("https://github.com/modelscope/FunClip/issues/105",
     'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\Users\\username\\AppData\\'
     'Local\\Programs\\Python\\Python312\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
     ["where this PyTorch is 2.4.0", "libomp140.x86_64.dll", "fixed in 2.4.1"],
     ["where it is 2.4.0: install PyTorch 2.4.1", "otherwise: reinstall torch whole"], []),
    ("https://github.com/triton-lang/triton/issues/5950",
     "'sm_120' is not a recognized processor for this target (ignoring processor)",
     ["the LLVM inside the program's compiler"],
     ["where it is PyTorch's torch.compile", "download.pytorch.org/whl/cu", "otherwise upgrade the program"],
     ["nvcc -gencode"]),
    ("https://github.com/cocktailpeanut/fluxgym/issues/411",
     "The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, "
     "and GPU quantization are unavailable.", ["bitsandbytes could not load its native CUDA library"],
     ["pip install -U bitsandbytes"], []),
]


@pytest.mark.parametrize("url, text, cause, fix, not_in_fix", CASES, ids=[c[0].rsplit("/", 3)[1] for c in CASES])
def test_what_the_paste_does_not_say_is_not_guessed(url, text, cause, fix, not_in_fix):
    assert_answer(text, cause, fix, not_in_fix)


def test_a_linux_cudnn_with_no_cuda_named_gets_both_wheels():
    assert_answer("ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
                  ["libcudnn.so.8"], ['"nvidia-cudnn-cu11==8.*"', '"nvidia-cudnn-cu12==8.*"'], [])


def test_the_installer_folder_is_compat_s():
    assert load_compat().cudnn_installer_folder().startswith("C:\\Program Files\\NVIDIA\\CUDNN\\v")
