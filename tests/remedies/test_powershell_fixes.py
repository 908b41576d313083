"""Windows fixes are PowerShell values: every builder of remedies/windows.py gives commands that PowerShell's lexer
(Pygments') reads without an error, quoted paths that come back whole with their spaces and single quotes, a line
that shows the commands as PowerShell runs them, and an administrator shell where a command edits the machine-wide
PATH or writes under Program Files; a Python line or a download page stays in words (the manual way)."""
from __future__ import annotations

from typing import List

import pytest
from powershell_lexer import quoted_arguments as arguments

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import CudnnCopy, Facts, Fix, ToolkitFacts
from cudnn_doctor.model_windows import WindowsFacts
from cudnn_doctor.remedies.shell import advice, run
from cudnn_doctor.remedies.shells import line
from cudnn_doctor.remedies.windows import (complete_copy_fix, cuda_runtime_fix, windows_framework_cudnn_fix,
                                           framework_import_fix, mixed_copies_fix, newer_copy_first_fix, path_add,
                                           python_dll_directory_fix, search_path_fix, windows_driver_fix,
                                           zlibwapi_fix)

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

# Folders a PowerShell quote must survive: spaces, an apostrophe (doubled inside '...'), a $ that double quotes
# would expand, a trailing backslash.
AWKWARD = [r"C:\Program Files\NVIDIA\CUDNN\v9.1\bin\12.4", r"D:\O'Brien's tools\cudnn 9\bin",
           r"C:\Users\$dev\cu`dnn\bin", "E:\\cudnn\\bin\\"]
TOOLKIT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4"


def assert_powershell(fix: Fix) -> None:
    """A fix of PowerShell commands, each read whole, shown in its line as PowerShell runs them in order."""
    assert fix.commands and fix.shell == "powershell", fix
    assert line(fix.commands, "powershell") in fix.text, fix
    for command in fix.commands:
        arguments(command)


def assert_words(fix: Fix) -> None:
    """A fix no command makes: said in words, which are also its manual way."""
    assert fix.commands == [] and fix.shell == "" and not fix.root and fix.manual == fix.text, fix


def _copy(directory: str, version: str = "9.1.0.70", origin: str = "installer", missing=()) -> CudnnCopy:
    return CudnnCopy(path=directory + "\\cudnn64_9.dll", directory=directory, major=int(version.split(".")[0]),
                     version=version, cuda_version="12.4", origin=origin, sublibraries_missing=list(missing))


def _machine(path: List[str]) -> Facts:
    facts = Facts()
    facts.windows = WindowsFacts(path=path)
    facts.toolkits = [ToolkitFacts(path=TOOLKIT, version="12.4.127")]
    return facts


def test_the_lexer_check_fails_on_a_broken_quote():
    assert arguments("Copy-Item 'C:\\it''s' 'x'") == ["C:\\it's", "x"]
    with pytest.raises(AssertionError):
        arguments("Copy-Item 'C:\\it's' 'x'")  # an apostrophe not doubled ends the string early
    with pytest.raises(AssertionError):
        arguments("Copy-Item 'C:\\a b")


@pytest.mark.parametrize("folder", AWKWARD)
def test_path_on_path_fix_quotes_the_folder_and_needs_an_administrator(folder):
    compat = load_compat()
    fix = search_path_fix(_machine([TOOLKIT + "\\bin"]), compat, _copy(folder))
    assert_powershell(fix)
    assert fix.root and fix.commands == [path_add(folder)]
    assert folder in arguments(fix.commands[0])
    assert fix.text.startswith("put the folder that holds it on PATH: " + fix.commands[0] +
                               "   (in an administrator PowerShell; then open a new shell)")
    # cudnn-doctor can put the release into the toolkit whose bin is on PATH: said after, given as `doctor`.
    assert fix.doctor == "cudnn-doctor install --version 9.1.0 --cuda 12 --cuda-home '%s'" % TOOLKIT
    assert fix.text.endswith(": " + fix.doctor) and TOOLKIT in arguments(fix.doctor)


def test_path_fix_has_no_doctor_where_no_toolkit_bin_is_on_path():
    fix = search_path_fix(_machine([]), load_compat(), _copy(AWKWARD[0]))
    assert_powershell(fix)
    assert fix.doctor == "" and "cudnn-doctor" not in fix.text


@pytest.mark.parametrize("folder", AWKWARD)
def test_complete_copy_fix_copies_from_the_archive_into_the_quoted_folder(folder):
    fix = complete_copy_fix(load_compat(), _copy(folder, missing=["cudnn_ops64_9.dll"]))
    assert_powershell(fix)
    assert arguments(fix.commands[0]) == [folder]
    assert fix.commands == ["Copy-Item bin\\cudnn*.dll '%s'" % folder.replace("'", "''")]
    assert "cudnn-windows-x86_64-9.1.0.*_cuda12-archive.zip" in fix.manual  # getting the archive is a person's
    assert fix.root == folder.startswith("C:\\Program Files")  # writing under Program Files needs an administrator


@pytest.mark.parametrize("folder", AWKWARD)
def test_mixed_copies_fix_puts_the_complete_copy_first(folder):
    incomplete = r"C:\tools\old cudnn\bin"
    fix = mixed_copies_fix(WindowsFacts(path=[incomplete, folder]), _copy(folder), incomplete)
    assert_powershell(fix)
    assert fix.root and fix.commands == [path_add(folder, first=True)] and folder in arguments(fix.commands[0])
    # Taking the incomplete copy off PATH is the other way, said after the command, not run.
    assert "; or take the incomplete copy off PATH: " in fix.text and incomplete in fix.text
    assert mixed_copies_fix(WindowsFacts(), None, incomplete) is None


def test_newer_copy_first_fix_runs_one_path_edit_and_says_the_other():
    older, newer = _copy("C:\\cudnn's 9.0\\bin\\", "9.0.0"), _copy(AWKWARD[1], "9.1.0")
    both = newer_copy_first_fix(WindowsFacts(path=[older.directory]), older, newer)
    assert_powershell(both)
    assert both.root and both.commands == [path_add(newer.directory, first=True)]
    assert "; or [Environment]::SetEnvironmentVariable('Path', (([Environment]" in both.text
    # A framework's own copy (torch\lib) is not put on PATH: taking the older one off is the command.
    torch = _copy(r"C:\Python311\Lib\site-packages\torch\lib", "9.1.0", origin="torch")
    off = newer_copy_first_fix(WindowsFacts(path=[older.directory]), older, torch)
    assert_powershell(off)
    # PATH entries are compared without their trailing backslash, so the folder is quoted without it.
    assert off.root and "C:\\cudnn's 9.0\\bin" in arguments(off.commands[0])
    assert off.text == off.commands[0] + "   (in an administrator PowerShell; then open a new shell)"
    assert_words(newer_copy_first_fix(WindowsFacts(), older, torch))


@pytest.mark.parametrize("folder", AWKWARD)
def test_zlibwapi_fix_copies_a_good_dll_from_this_machine(folder):
    good = r"C:\Program Files\Some App\zlibwapi.dll"
    fix = zlibwapi_fix(folder, good, "http://example.invalid/zlib.zip", "dll_x64\\zlibwapi.dll")
    assert_powershell(fix)
    assert arguments(fix.commands[0]) == [good, folder]
    assert fix.manual == "move to cuDNN 9, which does not need it"
    assert fix.text == "put the x64 zlibwapi.dll beside cuDNN: %s; or %s" % (fix.commands[0], fix.manual)


def test_zlibwapi_fix_downloads_what_the_knowledge_names():
    table = load_compat().zlibwapi()
    folder = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.8\bin"
    fix = zlibwapi_fix(folder, None, table["download"], table["dll_in_zip"])
    assert_powershell(fix)
    assert [c.split()[0] for c in fix.commands] == ["Invoke-WebRequest", "Expand-Archive", "Copy-Item"]
    assert fix.commands[0] == "Invoke-WebRequest %s -OutFile $env:TEMP\\zlib.zip" % table["download"]
    assert fix.commands[2] == "Copy-Item $env:TEMP\\zlib\\%s '%s' -Force" % (table["dll_in_zip"], folder)
    assert fix.root  # the toolkit's bin is under Program Files


def test_zlibwapi_fix_quotes_a_download_or_archive_path_that_is_not_a_plain_word():
    fix = zlibwapi_fix(r"C:\app", None, "https://example.invalid/get?f=zlib&arch=x64", "x64 dll\\zlibwapi.dll")
    assert_powershell(fix)
    assert arguments(fix.commands[0]) == ["https://example.invalid/get?f=zlib&arch=x64"]
    assert arguments(fix.commands[2]) == ["zlib\\x64 dll\\zlibwapi.dll", "C:\\app"]
    assert not fix.root


def test_pip_wheel_fix_runs_the_frameworks_own_python_and_says_the_python_line():
    site = r"C:\Users\O'Neil\My Python\Lib\site-packages"
    fix = windows_framework_cudnn_fix(run('pip install "nvidia-cudnn-cu11==8.*"'), "cudnn64_8.dll", "onnxruntime-gpu",
                                      site)
    assert_powershell(fix)
    assert fix.commands == ["& 'C:\\Users\\O''Neil\\My Python\\python.exe' -m pip install \"nvidia-cudnn-cu11==8.*\""]
    assert arguments(fix.commands[0]) == [r"C:\Users\O'Neil\My Python\python.exe"]
    # The os.add_dll_directory step is Python in the user's program: the manual part, never a command.
    assert fix.manual == ('import os; os.add_dll_directory(r"%s\\nvidia\\cudnn\\bin") in the program before importing '
                          'onnxruntime-gpu' % site)
    assert fix.text == fix.commands[0] + "; then " + fix.manual and not fix.root


def test_cudnn_install_fix_without_the_frameworks_python_keeps_pip_and_names_the_missing_dll():
    fix = windows_framework_cudnn_fix(run('pip install "nvidia-cudnn-cu12==9.*"'), "cudnn64_9.dll", None, None)
    assert_powershell(fix)
    assert fix.commands == ['pip install "nvidia-cudnn-cu12==9.*"']
    assert fix.manual == ('import os; os.add_dll_directory(r"<the folder of cudnn64_9.dll>") in the program before '
                          'importing it')
    words = windows_framework_cudnn_fix(advice("install the NVIDIA driver first"), "cudnn64_9.dll", "torch", None)
    assert words.commands == [] and words.shell == "" and words.manual.startswith("install the NVIDIA driver first; "
                                                                                  "then import os")


def test_python_and_download_fixes_are_words():
    for fix in (python_dll_directory_fix(AWKWARD[1]), framework_import_fix(AWKWARD[1], "onnxruntime-gpu"),
                cuda_runtime_fix("cudart64_110.dll", None)):
        assert_words(fix)
    driver = windows_driver_fix()  # the download is words; the check after it is a command of its own
    assert driver.commands == ["nvidia-smi"] and driver.shell == "powershell" and "`nvidia-smi`" in driver.text
    assert framework_import_fix(AWKWARD[1], None).text.endswith("before importing it")
    assert "<the folder of cudart64_110.dll>" in cuda_runtime_fix("cudart64_110.dll", "onnxruntime-gpu").text
    assert "https://www.nvidia.com/Download/index.aspx" in windows_driver_fix().manual
