"""Windows fixes are PowerShell, and that is the Target's shell for a Windows machine: a Target refuses cmd (its
setx cuts PATH at 1024 characters), fix_target names PowerShell for a Windows drive, and every builder that writes
a Windows command labels it PowerShell and writes what PowerShell reads. Before, the cuDNN wheel line on Windows
was labelled cmd while the run's target said PowerShell."""
from __future__ import annotations

import pytest

from powershell_lexer import quoted_arguments

from cudnn_doctor.diagnose import fix_target
from cudnn_doctor.model import WINDOWS_SHELL, CudnnCopy, Facts, Target
from cudnn_doctor.model_windows import WindowsFacts
from cudnn_doctor.remedies import cudnn, environment, paste, paste_runtime, windows
from cudnn_doctor.remedies.acting import building_for
from hermetic import shipped_compat

COMPAT = shipped_compat()
FOLDER = "C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin"


def test_a_target_refuses_cmd():
    with pytest.raises(ValueError):
        Target(shell="cmd")


def test_a_windows_drive_is_fixed_in_powershell():
    facts = Facts()
    facts.windows, facts.host.platform = WindowsFacts(drive="/mnt/c"), "windows"
    assert fix_target(facts).shell == WINDOWS_SHELL == "powershell"


def _windows_fixes():
    win = WindowsFacts(path=[FOLDER, "C:\\old"])
    copy = CudnnCopy(path=FOLDER + "\\cudnn64_9.dll", directory=FOLDER, version="9.1.0", major=9, cuda_version="12.4")
    old = CudnnCopy(path="C:\\old\\cudnn64_9.dll", directory="C:\\old", version="9.0.0", major=9)
    wheel = cudnn.cudnn_install_fix(COMPAT, "12.4", version="9.1.0", origin="pip", platform="windows")
    yield "cudnn wheel", wheel
    yield "cudnn system", cudnn.cudnn_install_fix(COMPAT, "12.4", 9, platform="windows")
    facts = Facts()
    facts.windows = win
    yield "search path", windows.search_path_fix(facts, COMPAT, copy)
    yield "complete copy", windows.complete_copy_fix(COMPAT, copy)
    yield "mixed copies", windows.mixed_copies_fix(win, copy, "C:\\old")
    yield "zlib copy", windows.zlibwapi_fix(FOLDER, "C:\\tools\\zlibwapi.dll", "https://example.invalid/z.zip", "x.dll")
    yield "zlib download", windows.zlibwapi_fix(FOLDER, None, "http://www.winimage.com/zLibDll/zlib123dllx64.zip",
                                                "dll_x64\\zlibwapi.dll")
    yield "newer first", windows.newer_copy_first_fix(win, old, copy)
    yield "framework cudnn", windows.windows_framework_cudnn_fix(wheel, "cudnn64_9.dll", "torch",
                                                                 "C:\\Python312\\Lib\\site-packages")
    yield "environment", environment.environment_variable_fix("CUDA_VISIBLE_DEVICES", "windows", "0")
    yield "environment unset", environment.environment_variable_fix("CUDA_LAUNCH_BLOCKING", "windows")
    yield "shadowed", paste.shadowed_library_fix("cudnn64_9.dll", "9.1", "windows")
    yield "paging file", paste_runtime.paging_file_fix()
    yield "missing dll", paste.windows_missing_dll_fix("cudnn64_9.dll")


@pytest.mark.parametrize("target", [Target(shell=WINDOWS_SHELL), Target()], ids=["windows-target", "explained-here"])
def test_every_windows_command_is_powershell(target):
    """Built for a Windows machine's target, or here for a Windows paste (explain, pick --against): PowerShell."""
    with building_for(target):
        fixes = list(_windows_fixes())
    for name, fix in fixes:
        assert fix.commands, name
        assert fix.shell == WINDOWS_SHELL, (name, fix.shell)
        for command in fix.commands + ([fix.doctor] if fix.doctor else []):
            quoted_arguments(command)  # fails where PowerShell would not read it
