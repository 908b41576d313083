"""Fixes on a Windows machine as PowerShell commands (5.1 and 7): PATH edits, DLL copies and downloads, the
cudnn-doctor install alternative; the os.add_dll_directory line a Python program needs is said in words."""
from __future__ import annotations

import ntpath
import re
from typing import TYPE_CHECKING, Optional, Sequence

from ..knowledge import Compat
from ..model import WINDOWS_SHELL, CudnnCopy, Facts, Fix
from ..versions import major_of, mm
from .shell import advice
from .shells import command_fix, line
from .shells import powershell_quote as ps_quote
from .software import DRIVER_DOWNLOAD

if TYPE_CHECKING:  # a Linux check never builds Windows facts (model.py)
    from ..model_windows import WindowsFacts

_NEW_SHELL = "(in an administrator PowerShell; then open a new shell)"
# Folders only an administrator may write to: a command that copies or installs there needs an elevated shell.
_ADMIN_ONLY = ("\\program files", "\\windows")
# A word PowerShell reads as one literal argument without quotes (no variable, expression, comment or separator).
_BARE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9:/._\\-]*")


def path_add(folder: str, first: bool = False) -> str:
    """The PowerShell command that puts ``folder`` on the machine-wide PATH (it needs an administrator shell)."""
    current = "[Environment]::GetEnvironmentVariable('Path', 'Machine')"
    value = "%s + ';' + %s" % (ps_quote(folder), current) if first else "%s + ';' + %s" % (current, ps_quote(folder))
    return "[Environment]::SetEnvironmentVariable('Path', %s, 'Machine')" % value


def path_remove(folder: str) -> str:
    """The PowerShell command that takes ``folder`` off the machine-wide PATH (it needs an administrator shell)."""
    return ("[Environment]::SetEnvironmentVariable('Path', (([Environment]::GetEnvironmentVariable('Path', "
            "'Machine') -split ';') | Where-Object { $_ -and $_.TrimEnd('\\') -ne %s }) -join ';', 'Machine')"
            % ps_quote(folder.rstrip("\\")))


def _elevated(command: str) -> str:
    """A machine-wide PATH command as the line shows it: with where to run it and what to do after."""
    return "%s   %s" % (command, _NEW_SHELL)


def _admin_only(folder: str) -> bool:
    """Whether only an administrator may write into ``folder`` (Program Files, the Windows folder)."""
    rest = ntpath.splitdrive(folder)[1].lower()
    return any(rest == top or rest.startswith(top + "\\") or rest.startswith(top + " (") for top in _ADMIN_ONLY)


def _word(value: str) -> str:
    """``value`` as one PowerShell argument: bare where it is a plain word (as the line has always shown it),
    single-quoted otherwise."""
    return value if _BARE_WORD.fullmatch(value) else ps_quote(value)


def powershell_fix(commands: Sequence[str], text: str, root: bool = False, doctor: str = "",
                   manual: str = "") -> Fix:
    """A fix whose commands run in PowerShell, said by ``text`` (the commands with the words around them)."""
    return command_fix(commands, shell=WINDOWS_SHELL, text=text, root=root, doctor=doctor, manual=manual)


def on_path(win: WindowsFacts, folder: str) -> bool:
    return any(p.lower().rstrip("\\") == folder.lower().rstrip("\\") for p in win.path)


def _doctor_into_toolkit(facts: Facts, compat: Compat, copy: CudnnCopy) -> Optional[str]:
    """`cudnn-doctor install` of the copy's release into the toolkit whose bin is on PATH, where the archive is
    known; None otherwise."""
    win = facts.windows
    tk = next((t for t in facts.toolkits if t.version and not t.error and win is not None
               and on_path(win, ntpath.join(t.path, "bin"))), None)
    release = ".".join((copy.version or "").split(".")[:3])
    if tk is None or not mm(release) or not compat.cudnn_archive_name(release, str(major_of(tk.version)), "windows",
                                                                      "x86_64"):
        return None
    return "cudnn-doctor install --version %s --cuda %s --cuda-home %s" % (release, major_of(tk.version),
                                                                         ps_quote(tk.path))


def search_path_fix(facts: Facts, compat: Compat, holder: CudnnCopy) -> Fix:
    """Put the folder of a copy the search order misses on PATH (or install into the toolkit, whose bin is)."""
    command = path_add(holder.directory)
    text = "put the folder that holds it on PATH: " + _elevated(command)
    doctor = _doctor_into_toolkit(facts, compat, holder)
    if doctor:
        text += "; or let cudnn-doctor install cuDNN %s into the toolkit, whose bin is on PATH: %s" % (
            ".".join((holder.version or "").split(".")[:3]), doctor)
    return powershell_fix([command], text, root=True, doctor=doctor or "")


def toolkit_dlls_on_path_fix(folder: str) -> Fix:
    """Put a toolkit's DLL folder on PATH (CUDA 13's bin\\x64, which its installer does not put there)."""
    command = path_add(folder)
    return powershell_fix([command], "put the toolkit's DLL folder on PATH: " + _elevated(command), root=True)


def complete_copy_fix(compat: Compat, copy: CudnnCopy) -> Fix:
    """Copy the DLLs a cuDNN copy lacks from its own release's archive (run where the archive is extracted)."""
    release = ".".join((copy.version or "").split(".")[:3])
    archive = compat.cudnn_archive_name(release, str(major_of(copy.cuda_version) or 12), "windows", "x86_64") \
        if mm(release) else None
    source = archive or "cuDNN %s's Windows archive" % (copy.version or copy.major)
    command = "Copy-Item bin\\cudnn*.dll %s" % ps_quote(copy.directory)
    return powershell_fix([command], "copy the missing DLLs of the same release, in the folder where %s is "
                                     "extracted: %s" % (source, command), root=_admin_only(copy.directory),
                          manual="download %s from NVIDIA and extract it; the command copies from its bin folder"
                                 % source)


def mixed_copies_fix(win: WindowsFacts, best: Optional[CudnnCopy], main_dir: str) -> Optional[Fix]:
    """Put the complete copy first on PATH, or take the incomplete one off it; None when no copy is complete."""
    if best is None:
        return None
    command = path_add(best.directory, first=True)
    text = "put the complete copy first on PATH: " + _elevated(command)
    if best.directory.lower() != main_dir.lower() and on_path(win, main_dir):
        text += "; or take the incomplete copy off PATH: " + _elevated(path_remove(main_dir))
    return powershell_fix([command], text, root=True)


def zlibwapi_fix(folder: str, good: Optional[str], download: str, dll_in_zip: str) -> Fix:
    """An x64 zlibwapi.dll beside cuDNN 8: copied from this machine where one is, else downloaded."""
    if good:
        commands = ["Copy-Item %s %s" % (ps_quote(good), ps_quote(folder))]
    else:
        inside = "zlib\\" + dll_in_zip
        unpacked = "$env:TEMP\\" + inside if _BARE_WORD.fullmatch(inside) else \
            "(Join-Path $env:TEMP %s)" % ps_quote(inside)
        commands = ["Invoke-WebRequest %s -OutFile $env:TEMP\\zlib.zip" % _word(download),
                    "Expand-Archive $env:TEMP\\zlib.zip $env:TEMP\\zlib -Force",
                    "Copy-Item %s %s -Force" % (unpacked, ps_quote(folder))]
    other = "move to cuDNN 9, which does not need it"
    return powershell_fix(commands, "put the x64 zlibwapi.dll beside cuDNN: %s; or %s" % (
        line(commands, WINDOWS_SHELL), other), root=_admin_only(folder), manual=other)


def newer_copy_first_fix(win: WindowsFacts, older: CudnnCopy, newer: CudnnCopy) -> Fix:
    """Let programs find the newer copy first: PATH edits, or removing the older copy."""
    commands = []
    if newer.origin not in ("torch", "pip"):
        commands.append(path_add(newer.directory, first=True))
    if on_path(win, older.directory):
        commands.append(path_remove(older.directory))
    if not commands:
        return advice("remove the older copy %s" % older.directory)
    # The first edit is the one to run; the other is said after it as another way.
    return powershell_fix(commands[:1], "; or ".join(_elevated(c) for c in commands), root=True)


def _dll_directory_line(folder: str, framework: Optional[str]) -> str:
    """The Python line that lets extension modules load DLLs from ``folder`` (3.8+ ignores PATH)."""
    return "import os; os.add_dll_directory(r\"%s\") in the program before importing %s" % (folder,
                                                                                        framework or "it")


def python_dll_directory_fix(folder: str) -> Fix:
    """Python 3.8+ ignores PATH: the program itself must name the folder (Python code, no shell command)."""
    return advice("in the program, before importing the framework: import os; os.add_dll_directory(r\"%s\")"
                  % folder)


def framework_import_fix(folder: str, framework: Optional[str]) -> Fix:
    """A framework's import lives in a folder its Python does not search: the program must name that folder."""
    return advice(_dll_directory_line(folder, framework))


def windows_framework_cudnn_fix(install: Fix, missing: str, framework: Optional[str],
                                fw_location: Optional[str]) -> Fix:
    """Install the cuDNN a framework library imports (with that framework's own Python where it is a pip wheel,
    whose DLLs land in <site>\\nvidia\\cudnn\\bin), then let Python find it."""
    pip = [c for c in install.commands if c.startswith("pip install ")]
    if fw_location is not None and pip and install.text.startswith("pip install "):
        python = ntpath.join(ntpath.dirname(ntpath.dirname(fw_location)), "python.exe")
        add = _dll_directory_line(ntpath.join(fw_location, "nvidia", "cudnn", "bin"), framework)
        command = "& %s -m %s" % (ps_quote(python), install.text)
        return powershell_fix([command], "%s; then %s" % (command, add), root=_admin_only(python), manual=add)
    add = _dll_directory_line("<the folder of %s>" % missing, framework)
    # pip's own command line reads the same in PowerShell; anything else stays in the words.
    return powershell_fix(pip, install.text + "; then " + add, manual="; then ".join(filter(None, (install.manual,
                                                                                                 add))))


def cuda_runtime_fix(missing: str, framework: Optional[str]) -> Fix:
    """The CUDA runtime a framework library imports is nowhere: install it, then let Python find it (words: the
    wheel's name depends on the CUDA release the library was built for)."""
    return advice("install the CUDA runtime it was built for (the CUDA toolkit, or the nvidia-cuda-runtime-cuNN "
                  "wheel), then " + _dll_directory_line("<the folder of %s>" % missing, framework))


def windows_driver_fix() -> Fix:
    """No driver: only a person can download and run NVIDIA's installer for the GPU."""
    return command_fix(["nvidia-smi"], shell=WINDOWS_SHELL, text="install the NVIDIA driver for this GPU from %s, "
                       "restart, and check with `nvidia-smi` in a new PowerShell" % DRIVER_DOWNLOAD,
                       manual="install the NVIDIA driver for this GPU from %s and restart" % DRIVER_DOWNLOAD)
