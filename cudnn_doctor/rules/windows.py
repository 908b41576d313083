"""CD65x: Windows DLL loading: cuDNN not found, mixed or shadowed copies, zlibwapi.dll (catalogue F6, F7, D1)."""
from __future__ import annotations

import ntpath
import re
from typing import Dict, List, Optional

from ..versions import major_of, mm, ver
from ..model import CudnnCopy, Facts, Finding, Fix
from ..model_windows import WinLoad
from . import rule
from ..remedies import machine_cudnn_fix
from .common import ERROR, INFO, WARNING, compat_of, finding

PLAIN = "a program started from a shell"
PROGRAM_COPIES = ("toolkit", "installer", "path")  # copies meant for any program, not a framework's own


def ps_quote(text: str) -> str:
    """A PowerShell single-quoted string (no expansion; a quote is doubled)."""
    return "'%s'" % text.replace("'", "''")


def path_add(folder: str, first: bool = False) -> str:
    """PowerShell that puts ``folder`` on the machine-wide PATH (administrator shell), then a new shell."""
    current = "[Environment]::GetEnvironmentVariable('Path', 'Machine')"
    value = "%s + ';' + %s" % (ps_quote(folder), current) if first else "%s + ';' + %s" % (current, ps_quote(folder))
    return ("[Environment]::SetEnvironmentVariable('Path', %s, 'Machine')   (in an administrator PowerShell; then "
            "open a new shell)" % value)


def path_remove(folder: str) -> str:
    return ("[Environment]::SetEnvironmentVariable('Path', (([Environment]::GetEnvironmentVariable('Path', "
            "'Machine') -split ';') | Where-Object { $_ -and $_.TrimEnd('\\') -ne %s }) -join ';', 'Machine')   "
            "(in an administrator PowerShell; then open a new shell)" % ps_quote(folder.rstrip("\\")))


def _windows(facts: Facts):
    return getattr(facts, "windows", None)


def _copy_at(facts: Facts, folder: Optional[str]) -> Optional[CudnnCopy]:
    return next((c for c in facts.cudnn if folder and c.directory.lower() == folder.lower()), None)


def _chains(loads: List[WinLoad]) -> Dict[str, List[WinLoad]]:
    """A consumer's cuDNN loads grouped by major: cudnn64_9.dll first, then its sub-libraries."""
    out: Dict[str, List[WinLoad]] = {}
    for load in loads:
        name = ntpath.basename(load.request).lower()
        if name.startswith("cudnn") and name.endswith(".dll"):
            out.setdefault("%s|%s" % (load.consumer, name.rsplit("64_", 1)[-1]), []).append(load)
    return out


def _newest(copies: List[CudnnCopy]) -> Optional[CudnnCopy]:
    complete = [c for c in copies if not c.sublibraries_missing and ver(c.version)] or \
        [c for c in copies if ver(c.version)]
    return max(complete, key=lambda c: ver(c.version)) if complete else None


def _on_path(win, folder: str) -> bool:
    return any(p.lower().rstrip("\\") == folder.lower().rstrip("\\") for p in win.path)


def _install_alternative(facts: Facts, compat, copy: CudnnCopy) -> str:
    """`cudnn-doctor install` into the toolkit, where a toolkit and the archive name are known."""
    tk = next((t for t in facts.toolkits if t.version and not t.error and _on_path(facts.windows,
                                                                                 ntpath.join(t.path, "bin"))), None)
    release = ".".join((copy.version or "").split(".")[:3])
    if tk is None or not mm(release) or not compat.cudnn_archive_name(release, str(major_of(tk.version)), "windows",
                                                                      "x86_64"):
        return ""
    return '; or let cudnn-doctor install cuDNN %s into the toolkit, whose bin is on PATH: cudnn-doctor install ' \
           '--version %s --cuda %s --cuda-home "%s"' % (release, release, major_of(tk.version), tk.path)


@rule("CD650", "windows-cudnn-not-found", "A program cannot load cuDNN's DLLs by Windows' search order")
def not_found(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    for key, chain in _chains(win.loads).items():
        failed = next((ld for ld in chain if ld.error and ld.consumer == PLAIN), None)
        if failed is None:
            continue
        name = ntpath.basename(failed.missing or failed.request)
        m = re.search(r"64_(\d+)\.dll$", failed.request, re.I)
        major = int(m.group(1)) if m else None
        holders = [c for c in facts.cudnn if any(f.name.lower() == name.lower() for f in c.files)]
        if holders and not any(c.origin in PROGRAM_COPIES for c in holders):
            continue  # only frameworks' own copies (pip, conda, torch\lib): they load those themselves
        holders = [c for c in holders if c.origin in PROGRAM_COPIES]
        if failed.error == 193:
            continue  # reported by CD652's machine-type check when it is zlib; a 32-bit cuDNN is rare
        if holders:
            best = _newest(holders) or holders[0]
            fix = "put the folder that holds it on PATH: " + path_add(best.directory) + \
                _install_alternative(facts, compat, best)
            where = "; it is in %s, which is not searched" % ", ".join(h.directory for h in holders)
        else:
            main = _copy_at(facts, ntpath.dirname(chain[0].path or ""))
            tk = next((t for t in facts.toolkits if t.version), None)
            fix = _complete_copy_fix(compat, main) if main else machine_cudnn_fix(
                facts, compat, tk.version if tk else None, major)
            where = "; no copy on this machine has it"
        out.append(finding(
            "CD650", ERROR, "%s cannot load %s (error %s)%s" % (failed.consumer, name, failed.error, where),
            detail="Windows looks in the program's folder, System32, the Windows folder, the current folder and "
                   "then PATH; the cuDNN 9 installer puts the DLLs in ...\\CUDNN\\v9.x\\bin\\<cuda>\\ but adds only "
                   "...\\bin to PATH ('Could not locate %s', 'LoadLibrary failed with error 126')." % name,
            fix=fix, evidence={"request": failed.request, "missing": failed.missing, "path": win.path,
                               "copies": [h.directory for h in holders]},
            catalogue=["F6", "D1"]))
    return out


@rule("CD651", "windows-cudnn-mixed", "cuDNN's DLLs would come from two different copies")
def mixed(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    out: List[Finding] = []
    for key, chain in _chains(win.loads).items():
        loaded = [ld for ld in chain if ld.path]
        folders = {ntpath.dirname(ld.path).lower() for ld in loaded}
        if len(loaded) < 2 or len(folders) < 2:
            continue
        main = loaded[0]
        others = [ld for ld in loaded[1:] if ntpath.dirname(ld.path).lower() != ntpath.dirname(main.path).lower()]
        versions = {d.path.lower(): d.version for d in win.dlls}
        donors = sorted({ntpath.dirname(ld.path) for ld in others})
        copies = [c for c in facts.cudnn if c.directory.lower() in {d.lower() for d in donors} |
                  {ntpath.dirname(main.path).lower()}]
        best = _newest(copies)
        fix = ("put the complete copy first on PATH: " + path_add(best.directory, first=True)) if best else ""
        main_dir = ntpath.dirname(main.path)
        if best and best.directory.lower() != main_dir.lower() and _on_path(win, main_dir):
            fix += "; or take the incomplete copy off PATH: " + path_remove(main_dir)
        out.append(finding(
            "CD651", ERROR, "%s would load %s %s from %s but %s from %s" % (
                main.consumer, ntpath.basename(main.path), versions.get(main.path.lower()) or "", main_dir,
                ", ".join(sorted({ntpath.basename(o.path) for o in others})), ", ".join(donors)),
            detail="cuDNN's sub-libraries must be the same release as cudnn64_N.dll; a mix fails with "
                   "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or missing symbols.",
            fix=fix, evidence={"modules": {ntpath.basename(ld.path): ld.path for ld in loaded}},
            catalogue=["F6", "D3"]))
    return out


@rule("CD652", "windows-zlibwapi", "cuDNN 8.3-8.9 needs an x64 zlibwapi.dll")
def zlibwapi(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    table = compat_of(ctx).zlibwapi()
    out: List[Finding] = []
    for load in win.loads:
        if load.request.lower() != "zlibwapi.dll" or load.path:
            continue
        cudnn = next((ld.path for ld in win.loads if ld.consumer == load.consumer and ld.path and
                      ntpath.basename(ld.path).lower() == "cudnn64_8.dll"), None)
        folder = ntpath.dirname(load.skipped[0]["path"]) if load.skipped else (ntpath.dirname(cudnn) if cudnn else "")
        good = next((d.path for d in win.dlls if ntpath.basename(d.path).lower() == "zlibwapi.dll" and
                     d.machine == "x64"), None)
        if good:
            get = "Copy-Item %s %s" % (ps_quote(good), ps_quote(folder))
        else:
            get = ("Invoke-WebRequest %s -OutFile $env:TEMP\\zlib.zip; Expand-Archive $env:TEMP\\zlib.zip "
                   "$env:TEMP\\zlib -Force; Copy-Item $env:TEMP\\zlib\\%s %s -Force" % (
                       table.get("download"), table.get("dll_in_zip"), ps_quote(folder)))
        if load.skipped:
            title = "%s finds only a %s zlibwapi.dll (%s): cuDNN 8 cannot load it (error 193)" % (
                load.consumer, load.skipped[0]["machine"], load.skipped[0]["path"])
        else:
            title = "%s cannot load zlibwapi.dll, which cuDNN %s needs ('Could not locate zlibwapi.dll')" % (
                load.consumer, next((d.version for d in win.dlls if cudnn and d.path == cudnn), "8"))
        out.append(finding(
            "CD652", ERROR, title,
            detail="cuDNN %s up to %s loads zlibwapi.dll at run time; NVIDIA does not ship it [%s]." % (
                table.get("cudnn_from"), table.get("cudnn_before"), table.get("source", "")[:80]),
            fix="put the x64 zlibwapi.dll beside cuDNN: %s; or move to cuDNN 9, which does not need it" % get,
            evidence={"skipped": load.skipped, "cudnn": cudnn}, catalogue=["F7"]))
    return out


@rule("CD653", "windows-cudnn-shadowed", "A program loads an older cuDNN than another copy on this machine")
def shadowed(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    out: List[Finding] = []
    for load in win.loads:
        name = ntpath.basename(load.request).lower()
        if load.consumer != PLAIN or not load.path or not name.startswith("cudnn64_"):
            continue
        mine = _copy_at(facts, ntpath.dirname(load.path))
        same = [c for c in facts.cudnn if c.major == (mine.major if mine else None) and c is not mine]
        newer = _newest([c for c in same if mine and ver(c.version) and ver(mine.version) and
                         ver(c.version) > ver(mine.version)])
        if mine is None or newer is None:
            continue
        fix = path_remove(mine.directory) if _on_path(win, mine.directory) else ""
        if newer.origin not in ("torch", "pip"):
            fix = path_add(newer.directory, first=True) + ("; or " + fix if fix else "")
        out.append(finding(
            "CD653", WARNING, "%s loads cuDNN %s from %s, older than %s in %s (%s)" % (
                PLAIN, mine.version, mine.directory, newer.version, newer.directory, ", ".join(newer.found_via)),
            detail="Windows takes the first cudnn64_%d.dll in its search order; a framework with its own copy "
                   "(torch\\lib) still uses that one, but every other program gets the older copy." % mine.major,
            fix=fix or "remove the older copy %s" % mine.directory,
            evidence={"loaded": load.path, "via": load.via, "newer": newer.path, "shadowed": load.shadowed},
            catalogue=["F6", "D7"]))
    return out


@rule("CD654", "windows-python-ignores-path", "Python 3.8+ does not search PATH for cuDNN's DLLs")
def python_path(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    found = {ld.request.lower(): ld.path for ld in win.loads if ld.consumer == PLAIN and ld.path}
    out: List[Finding] = []
    for load in win.loads:
        prefix = "Python 3.8+ in "
        if not load.consumer.startswith(prefix) or load.path or load.request.lower() not in found:
            continue
        python_dir = load.consumer[len(prefix):]
        folder = ntpath.dirname(found[load.request.lower()])
        # torch adds its own torch\lib; other frameworks that link cuDNN need the folder added.
        others = [fw for fw in facts.python.frameworks if fw.location.lower().startswith(python_dir.lower())
                  and fw.name != "torch" and fw.cuda_build is not False]
        out.append(finding(
            "CD654", WARNING if others else INFO,
            "%s cannot load %s although PATH has it (%s)" % (load.consumer, load.request, folder),
            detail="Since Python 3.8, extension modules and ctypes look only in the program's folder, the "
                   "os.add_dll_directory folders and System32, not PATH ('Could not locate %s', 'LoadLibrary "
                   "failed with error 126').%s" % (load.request, (" Affected: %s." % ", ".join(
                       "%s %s" % (fw.name, fw.version) for fw in others)) if others else ""),
            fix="in the program, before importing the framework: import os; os.add_dll_directory(r\"%s\")" % folder,
            evidence={"python": python_dir, "folder": folder}, catalogue=["F6"]))
    return out


@rule("CD655", "windows-framework-cannot-load",
      "A framework's library cannot load the cuDNN or CUDA runtime it imports")
def framework_imports(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    for load in win.loads:
        if not ntpath.isabs(load.request) or load.path or not load.missing:
            continue
        fw = next((f for f in facts.python.frameworks if load.consumer == "%s %s" % (f.name, f.version)), None)
        for missing in load.unresolved or [ntpath.basename(load.missing)]:
            out.append(_unloadable(facts, compat, win, load, fw, missing))
    return out


def _unloadable(facts: Facts, compat, win, load: WinLoad, fw, missing: str) -> Finding:
    """CD655 for one import of a framework library that its search does not find."""
    m = re.match(r"^cudnn64_(\d+)\.dll$", missing, re.I)
    folder = next((ntpath.dirname(d.path) for d in win.dlls if ntpath.basename(d.path).lower() == missing.lower()),
                  None)
    lib = ntpath.basename(load.request)
    add = "import os; os.add_dll_directory(r\"%s\") in the program before importing %s" % (
        folder or "<the folder of %s>" % missing, fw.name if fw else "it")
    if folder:
        title = "%s: %s imports %s, which is only in %s, a folder Python 3.8+ does not search" % (
            load.consumer, lib, missing, folder)
        fix = add
    elif m:
        major = int(m.group(1))
        others = sorted({"cuDNN %s at %s" % (c.version, c.directory) for c in facts.cudnn if c.major != major})
        title = "%s: %s needs cuDNN %d (%s), which is not installed%s" % (
            load.consumer, lib, major, missing, (" (found %s)" % "; ".join(others)) if others else "")
        cuda = (fw.cuda_version if fw else None) or _cudart_cuda(load, win)
        install = machine_cudnn_fix(facts, compat, cuda, major, None, "pip")
        if fw is not None and install.startswith("pip install "):
            # The wheel lands in <site>\nvidia\cudnn\bin, which that Python must be told about.
            python = ntpath.join(ntpath.dirname(ntpath.dirname(fw.location)), "python.exe")
            install = '& "%s" -m %s' % (python, install)
            add = add.replace("<the folder of %s>" % missing, ntpath.join(fw.location, "nvidia", "cudnn", "bin"))
        fix = install + "; then " + add
    else:
        title = "%s: %s imports %s, which is not installed" % (load.consumer, lib, missing)
        fix = "install the CUDA runtime it was built for (the CUDA toolkit, or pip install nvidia-cuda-runtime-cuNN)" \
              ", then " + add
    return finding(
        "CD655", ERROR, title,
        detail="Windows fails the whole load with error 126 ('LoadLibrary failed with error 126 \"\" when trying to "
               "load %s'); the framework falls back to CPU or stops." % load.request,
        fix=fix, evidence={"library": load.request, "missing": missing, "unresolved": load.unresolved},
        catalogue=["F6", "G6", "D1"])


def _cudart_cuda(load: WinLoad, win) -> Optional[str]:
    """The CUDA major a consumer was built for, from the cudart64_NN.dll it imports (110 -> 11, 12 -> 12)."""
    for d in win.dlls:
        if d.path == load.request:
            for name in d.imports:
                m = re.match(r"^cudart64_(\d+)\.dll$", name, re.I)
                if m:
                    digits = m.group(1)
                    return digits[:-1] if len(digits) == 3 else digits
    return None


@rule("CD150", "windows-no-driver", "No NVIDIA driver on a Windows machine")
def no_driver(facts: Facts, ctx) -> List[Finding]:
    win = _windows(facts)
    if win is None or facts.driver.version or facts.driver.libcuda_path or facts.gpus:
        return []
    return [finding(
        "CD150", ERROR, "No NVIDIA driver: %s\\System32\\nvcuda.dll is missing" % win.windows_dir,
        detail="nvcuda.dll (the CUDA driver) and nvml.dll come with the NVIDIA display driver; without them no "
               "CUDA program runs.",
        fix="install the NVIDIA driver for this GPU from https://www.nvidia.com/Download/index.aspx, restart, and "
            "check with `nvidia-smi` in a new PowerShell",
        evidence={"searched": facts.searched.get("driver", [])}, catalogue=["A1"])]


@rule("CD450", "windows-cudnn-incomplete", "A cuDNN copy on Windows lacks some of its DLLs")
def incomplete(facts: Facts, ctx) -> List[Finding]:
    if _windows(facts) is None:
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    for c in facts.cudnn:
        if not c.sublibraries_missing:
            continue
        out.append(finding(
            "CD450", WARNING, "cuDNN %s at %s lacks %d of its DLLs: %s" % (
                c.version or c.major, c.directory, len(c.sublibraries_missing), ", ".join(c.sublibraries_missing)),
            detail="cudnn64_%s.dll loads its sub-libraries by name at first use; a program that finds this copy "
                   "first fails with 'Could not locate %s'." % (c.major, c.sublibraries_missing[0]),
            fix=_complete_copy_fix(compat, c),
            evidence={"copy": c.path, "missing": c.sublibraries_missing}, catalogue=["D2", "F6"]))
    return out


def _complete_copy_fix(compat, copy: CudnnCopy) -> str:
    """Copy the DLLs a cuDNN copy lacks from its own release's archive (run where the archive is extracted)."""
    release = ".".join((copy.version or "").split(".")[:3])
    archive = compat.cudnn_archive_name(release, str(major_of(copy.cuda_version) or 12), "windows", "x86_64") \
        if mm(release) else None
    return ("copy the missing DLLs of the same release, in the folder where %s is extracted: Copy-Item "
            "bin\\cudnn*.dll %s" % (archive or "cuDNN %s's Windows archive" % (copy.version or copy.major),
                                      ps_quote(copy.directory)))


# Rules that read Linux-only facts (ld.so, ELF files, symbolic links, the kernel module, containers): on a
# Windows machine their facts are absent, so they would misreport; the CD150/CD450/CD65x rules replace them.
LINUX_ONLY = frozenset(
    "CD101 CD102 CD103 CD104 CD106 CD304 CD306 CD307 CD402 CD404 CD405 CD406 CD408 CD504 CD505 CD601 CD602 CD603 "
    "CD604 CD606 CD607 CD608 CD609 CD610 CD704 CD705 CD801 CD802 CD803 CD804".split())


def _linux_only(func):
    def run(facts: Facts, ctx) -> List[Finding]:
        return [] if _windows(facts) is not None else func(facts, ctx)
    return run


# The shared rules' fixes name Linux commands for the driver and the toolkit; on Windows the same advice is
# NVIDIA's Windows installers. (A stopgap until fixes are values that know their platform.)
WINDOWS_WORDING = (
    (re.compile(r" \(Ubuntu: `sudo ubuntu-drivers install`, or NVIDIA's installer from (\S+)\), then reboot "
                r"\(`sudo reboot`\)"), r" (NVIDIA's Windows installer from \1), then restart Windows"),
    (re.compile(r"sudo apt install cuda-toolkit-(\d+)-(\d+)"),
     r"install CUDA \1.\2 from https://developer.nvidia.com/cuda-toolkit-archive (Windows installer)"),
)


def _windows_wording(func):
    def run(facts: Facts, ctx) -> List[Finding]:
        found = func(facts, ctx)
        if _windows(facts) is not None:
            for f in found:
                text = f.fix
                for pattern, replacement in WINDOWS_WORDING:
                    text = pattern.sub(replacement, text)
                if text != f.fix:  # the Linux commands in the remedy no longer apply: Windows advice instead
                    f.fix, f.remedy = text, Fix(text=text)
        return found
    return run


def _gate_linux_rules() -> None:
    from . import RULES, Rule

    RULES[:] = [Rule(r.id, r.alias, r.title, _linux_only(r.func) if r.id in LINUX_ONLY else _windows_wording(r.func))
                if r.func.__module__ != __name__ else r for r in RULES]


_gate_linux_rules()  # registry.py imports this module after the Linux rule modules
