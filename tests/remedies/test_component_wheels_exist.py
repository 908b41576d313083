"""explain's XLA and NVRTC answers name NVIDIA's component wheels through the one table of them
(compat/sonames.toml [pip_projects], Compat.pip_project): -cu11/-cu12 suffixed, unsuffixed for CUDA 13, and none
before CUDA 11, where NVIDIA ships no such wheel (the old code named nvidia-cuda-nvcc-cu10 and -cu9)."""
from __future__ import annotations

import pytest

from cudnn_doctor.remedies.paste_runtime import xla_cuda_tools_fix
from cudnn_doctor.remedies.paste_tools import nvrtc_builtins_fix
from hermetic import shipped_compat

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

COMPAT = shipped_compat()


@pytest.mark.parametrize("major,project", [(11, "nvidia-cuda-nvcc-cu11"), (12, "nvidia-cuda-nvcc-cu12"),
                                           (13, "nvidia-cuda-nvcc"), (10, None), (9, None)])
def test_xla_tools_wheel(major, project):
    fix = xla_cuda_tools_fix(COMPAT, major)
    if project:
        assert fix.commands == ['pip install -U "%s"' % project], fix
    else:
        assert "nvidia-cuda-nvcc" not in fix.text and "xla_gpu_cuda_data_dir" in fix.text, fix


@pytest.mark.parametrize("major,project", [(11, "nvidia-cuda-nvrtc-cu11"), (12, "nvidia-cuda-nvrtc-cu12"),
                                           (13, "nvidia-cuda-nvrtc"), (10, None)])
def test_nvrtc_builtins_wheel(major, project):
    fix = nvrtc_builtins_fix(COMPAT, major)
    if project:
        assert fix.commands == ['pip install --force-reinstall "%s"' % project], fix
    else:
        assert not fix.commands and "nvidia-cuda-nvrtc" not in fix.text, fix
