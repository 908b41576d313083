"""Fixes on a Windows machine: PATH edits, DLL copies and downloads in PowerShell, os.add_dll_directory for Python."""
from __future__ import annotations

import dataclasses
import ntpath
from typing import Optional

from ..model import CudnnCopy, Facts, Fix
from ..versions import major_of, mm
from .shell import stated
from .shells import powershell_quote as ps_quote

DRIVER_DOWNLOAD = "https://www.nvidia.com/Download/index.aspx"
_NEW_SHELL = "(in an administrator PowerShell; then open a new shell)"


def path_add(folder: str, first: bool = False) -> str:
    """PowerShell that puts ``folder`` on the machine-wide PATH (administrator shell), then a new shell."""
    current = "[Environment]::GetEnvironmentVariable('Path', 'Machine')"
    value = "%s + ';' + %s" % (ps_quote(folder), current) if first else "%s + ';' + %s" % (current, ps_quote(folder))
    return "[Environment]::SetEnvironmentVariable('Path', %s, 'Machine')   %s" % (value, _NEW_SHELL)


def path_remove(folder: str) -> str:
    """PowerShell that takes ``folder`` off the machine-wide PATH (administrator shell), then a new shell."""
    return ("[Environment]::SetEnvironmentVariable('Path', (([Environment]::GetEnvironmentVariable('Path', "
            "'Machine') -split ';') | Where-Object { $_ -and $_.TrimEnd('\\') -ne %s }) -join ';', 'Machine')   "
            "%s" % (ps_quote(folder.rstrip("\\")), _NEW_SHELL))


def on_path(win, folder: str) -> bool:
    return any(p.lower().rstrip("\\") == folder.lower().rstrip("\\") for p in win.path)


def _install_alternative(facts: Facts, compat, copy: CudnnCopy) -> str:
    """`cudnn-doctor install` into the toolkit, where a toolkit and the archive name are known."""
    tk = next((t for t in facts.toolkits if t.version and not t.error and on_path(facts.windows,
                                                                                ntpath.join(t.path, "bin"))), None)
    release = ".".join((copy.version or "").split(".")[:3])
    if tk is None or not mm(release) or not compat.cudnn_archive_name(release, str(major_of(tk.version)), "windows",
                                                                      "x86_64"):
        return ""
    return '; or let cudnn-doctor install cuDNN %s into the toolkit, whose bin is on PATH: cudnn-doctor install ' \
           '--version %s --cuda %s --cuda-home "%s"' % (release, release, major_of(tk.version), tk.path)


def search_path_fix(facts: Facts, compat, holder: CudnnCopy) -> Fix:
    """Put the folder of a copy the search order misses on PATH (or install into the toolkit, whose bin is)."""
    return stated("put the folder that holds it on PATH: " + path_add(holder.directory) +
                  _install_alternative(facts, compat, holder))


def complete_copy_fix(compat, copy: CudnnCopy) -> Fix:
    """Copy the DLLs a cuDNN copy lacks from its own release's archive (run where the archive is extracted)."""
    release = ".".join((copy.version or "").split(".")[:3])
    archive = compat.cudnn_archive_name(release, str(major_of(copy.cuda_version) or 12), "windows", "x86_64") \
        if mm(release) else None
    return stated("copy the missing DLLs of the same release, in the folder where %s is extracted: Copy-Item "
                  "bin\\cudnn*.dll %s" % (archive or "cuDNN %s's Windows archive" % (copy.version or copy.major),
                                            ps_quote(copy.directory)))


def mixed_copies_fix(win, best: Optional[CudnnCopy], main_dir: str) -> Optional[Fix]:
    """Put the complete copy first on PATH, or take the incomplete one off it; None when no copy is complete."""
    if best is None:
        return None
    text = "put the complete copy first on PATH: " + path_add(best.directory, first=True)
    if best.directory.lower() != main_dir.lower() and on_path(win, main_dir):
        text += "; or take the incomplete copy off PATH: " + path_remove(main_dir)
    return stated(text)


def zlibwapi_fix(folder: str, good: Optional[str], download: str, dll_in_zip: str) -> Fix:
    """An x64 zlibwapi.dll beside cuDNN 8: copied from this machine where one is, else downloaded."""
    if good:
        get = "Copy-Item %s %s" % (ps_quote(good), ps_quote(folder))
    else:
        get = ("Invoke-WebRequest %s -OutFile $env:TEMP\\zlib.zip; Expand-Archive $env:TEMP\\zlib.zip "
               "$env:TEMP\\zlib -Force; Copy-Item $env:TEMP\\zlib\\%s %s -Force" % (download, dll_in_zip,
                                                                                   ps_quote(folder)))
    return stated("put the x64 zlibwapi.dll beside cuDNN: %s; or move to cuDNN 9, which does not need it" % get)


def newer_copy_first_fix(win, older: CudnnCopy, newer: CudnnCopy) -> Fix:
    """Let programs find the newer copy first: PATH edits, or removing the older copy."""
    text = path_remove(older.directory) if on_path(win, older.directory) else ""
    if newer.origin not in ("torch", "pip"):
        text = path_add(newer.directory, first=True) + ("; or " + text if text else "")
    return stated(text or "remove the older copy %s" % older.directory)


def add_dll_directory(folder: str, before: str) -> str:
    """The Python line that lets extension modules load DLLs from ``folder`` (3.8+ ignores PATH)."""
    return "import os; os.add_dll_directory(r\"%s\") in the program before importing %s" % (folder, before)


def python_dll_directory_fix(folder: str) -> Fix:
    return stated("in the program, before importing the framework: import os; os.add_dll_directory(r\"%s\")"
                  % folder)


def framework_import_fix(add: str) -> Fix:
    """A framework's import lives in a folder its Python does not search: tell that Python about it."""
    return stated(add)


def framework_cudnn_fix(install: Fix, missing: str, importer: str, fw_location: Optional[str]) -> Fix:
    """Install the cuDNN a framework library imports (with that framework's own Python where it is a pip wheel,
    whose DLLs land in <site>\\nvidia\\cudnn\\bin), then let Python find it."""
    if fw_location is not None and install.text.startswith("pip install "):
        python = ntpath.join(ntpath.dirname(ntpath.dirname(fw_location)), "python.exe")
        add = add_dll_directory(ntpath.join(fw_location, "nvidia", "cudnn", "bin"), importer)
        return stated('& "%s" -m %s; then %s' % (python, install.text, add))
    add = add_dll_directory("<the folder of %s>" % missing, importer)
    return dataclasses.replace(install, text=install.text + "; then " + add)


def cuda_runtime_fix(add: str) -> Fix:
    return stated("install the CUDA runtime it was built for (the CUDA toolkit, or pip install "
                  "nvidia-cuda-runtime-cuNN), then " + add)


def windows_driver_fix() -> Fix:
    return stated("install the NVIDIA driver for this GPU from %s, restart, and check with `nvidia-smi` in a new "
                  "PowerShell" % DRIVER_DOWNLOAD)
