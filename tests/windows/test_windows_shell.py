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
    with building_for(Target(shell=WINDOWS_SHELL)):  # the Target's shell decides (explain: the paste's platform's)
        yield "environment", environment.environment_variable_fix("CUDA_VISIBLE_DEVICES", "0")
        yield "environment unset", environment.environment_variable_fix("CUDA_LAUNCH_BLOCKING")
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


def test_an_environment_variable_is_set_as_the_targets_shell_writes_it():
    with building_for(Target()):
        assert environment.environment_variable_fix("CUDA_VISIBLE_DEVICES", "0").commands == [
            "export CUDA_VISIBLE_DEVICES=0"]
        assert environment.environment_variable_fix("CUDA_LAUNCH_BLOCKING").commands == ["unset CUDA_LAUNCH_BLOCKING"]
    with building_for(Target(shell=WINDOWS_SHELL)):
        fix = environment.environment_variable_fix("CUDA_VISIBLE_DEVICES", "0")
    assert (fix.commands, fix.shell) == (["$env:CUDA_VISIBLE_DEVICES = '0'"], WINDOWS_SHELL)


def _windows_machine():
    """A Windows machine check judges: two TCC GPUs (one exclusive and nearly full, one free), an A100 with MIG on
    and no instance, no cuDNN (a review's scenario: their CD205/206/207 fixes said sudo and export there)."""
    from cudnn_doctor.model import DriverFacts, GpuFacts, HostFacts

    facts = Facts(host=HostFacts(root="/", platform="windows", machine="x86_64"),
                  driver=DriverFacts(version="560.94", cuda_version="12.6"))
    facts.windows = WindowsFacts(path=[r"C:\Windows\System32"], driver_model={"0": "TCC", "1": "TCC"})
    facts.gpus = [GpuFacts(index=0, name="NVIDIA RTX A6000", compute_capability="8.6", memory_total_mib=49140,
                           memory_free_mib=100, compute_mode="exclusive_process", running_processes=1),
                  GpuFacts(index=1, name="NVIDIA RTX A6000", compute_capability="8.6", memory_total_mib=49140,
                           memory_free_mib=40000, compute_mode="default"),
                  GpuFacts(index=2, name="NVIDIA A100", compute_capability="8.0", mig_mode=True,
                           memory_total_mib=40000, memory_free_mib=40000)]
    return facts


def test_check_on_a_windows_machine_writes_every_fix_for_powershell():
    """check's own fixes for a Windows machine, the GPU ones too (compute mode, memory, MIG): PowerShell's words
    (`$env:` for a variable, no sudo, an Administrator PowerShell said), each command read whole by its lexer."""
    from cudnn_doctor.diagnose import collect_report

    report = collect_report(facts=_windows_machine())
    fixes = {f.id: f.remedy for f in report.findings if f.remedy is not None and f.remedy.commands}
    assert {"CD205", "CD206", "CD207"} <= set(fixes), sorted(fixes)
    for rule, fix in fixes.items():
        assert fix.shell == WINDOWS_SHELL, (rule, fix.shell, fix.commands)
        for command in fix.commands + fix.alternatives:
            assert not command.startswith(("sudo ", "export ", "unset ")), (rule, command)
            quoted_arguments(command)
    assert fixes["CD205"].root and "Administrator PowerShell" in fixes["CD205"].text
    assert "$env:CUDA_VISIBLE_DEVICES = '1'" in fixes["CD205"].alternatives
