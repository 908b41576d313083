"""CD65x: Windows DLL loading: cuDNN not found, mixed or shadowed copies, zlibwapi.dll (catalogue F6, F7, D1)."""
from __future__ import annotations

import ntpath
import re
from typing import TYPE_CHECKING, Dict, List, Optional

from ..knowledge import Compat
from ..knowledge.sonames import split_library
from ..versions import newer_than, ver, version_of
from ..model import CudnnCopy, Facts, Finding, FrameworkFacts
from . import WINDOWS, RuleContext, rule
from ..remedies import machine_cudnn_fix
from ..remedies.windows import (complete_copy_fix, cuda_runtime_fix, framework_import_fix, mixed_copies_fix,
                                newer_copy_first_fix, on_path, python_dll_directory_fix, search_path_fix,
                                toolkit_dlls_on_path_fix, windows_driver_fix, windows_framework_cudnn_fix,
                                zlibwapi_fix)
from .common import ERROR, INFO, WARNING, compat_of, finding

if TYPE_CHECKING:  # a Linux check never builds Windows facts (model.py)
    from ..model_windows import WindowsFacts, WinLoad

PLAIN = "a program started from a shell"
PROGRAM_COPIES = ("toolkit", "installer", "path")  # copies meant for any program, not a framework's own


def _windows(facts: Facts) -> Optional[WindowsFacts]:
    return facts.windows


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
    return max(complete, key=lambda c: version_of(c.version)) if complete else None


@rule("CD650", "windows-cudnn-not-found", "A program cannot load cuDNN's DLLs by Windows' search order",
      platforms=WINDOWS, section="loader")
def not_found(facts: Facts, ctx: RuleContext) -> List[Finding]:
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
            fix = search_path_fix(facts, compat, _newest(holders) or holders[0])
            where = "; it is in %s, which is not searched" % ", ".join(h.directory for h in holders)
        else:
            main = _copy_at(facts, ntpath.dirname(chain[0].path or ""))
            tk = next((t for t in facts.toolkits if t.version), None)
            fix = complete_copy_fix(compat, main) if main else machine_cudnn_fix(
                facts, compat, tk.version if tk else None, major)
            where = "; no copy on this machine has it"
        out.append(finding(
            ERROR, "%s cannot load %s (error %s)%s" % (failed.consumer, name, failed.error, where),
            detail="Windows looks in the program's folder, System32, the Windows folder, the current folder and "
                   "then PATH; the cuDNN 9 installer puts the DLLs in ...\\CUDNN\\v9.x\\bin\\<cuda>\\ but adds only "
                   "...\\bin to PATH ('Could not locate %s', 'LoadLibrary failed with error 126')." % name,
            remedy=fix, evidence={"request": failed.request, "missing": failed.missing, "path": win.path,
                               "copies": [h.directory for h in holders]},
            catalogue=["F6", "D1"]))
    return out


@rule("CD651", "windows-cudnn-mixed", "cuDNN's DLLs would come from two different copies", platforms=WINDOWS,
      section="loader")
def mixed(facts: Facts, ctx: RuleContext) -> List[Finding]:
    win = _windows(facts)
    if win is None:
        return []
    out: List[Finding] = []
    for key, chain in _chains(win.loads).items():
        loaded = [(ld, ld.path) for ld in chain if ld.path]
        folders = {ntpath.dirname(path).lower() for _, path in loaded}
        if len(loaded) < 2 or len(folders) < 2:
            continue
        main, main_path = loaded[0]
        main_dir = ntpath.dirname(main_path)
        others = [path for _, path in loaded[1:] if ntpath.dirname(path).lower() != main_dir.lower()]
        versions = {d.path.lower(): d.version for d in win.dlls}
        donors = sorted({ntpath.dirname(path) for path in others})
        copies = [c for c in facts.cudnn if c.directory.lower() in {d.lower() for d in donors} | {main_dir.lower()}]
        fix = mixed_copies_fix(win, _newest(copies), main_dir)
        out.append(finding(
            ERROR, "%s would load %s %s from %s but %s from %s" % (
                main.consumer, ntpath.basename(main_path), versions.get(main_path.lower()) or "", main_dir,
                ", ".join(sorted({ntpath.basename(path) for path in others})), ", ".join(donors)),
            detail="cuDNN's sub-libraries must be the same release as cudnn64_N.dll; a mix fails with "
                   "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or missing symbols.",
            remedy=fix, evidence={"modules": {ntpath.basename(path): path for _, path in loaded}},
            catalogue=["F6", "D3"]))
    return out


@rule("CD652", "windows-zlibwapi", "cuDNN 8.3-8.9 needs an x64 zlibwapi.dll", platforms=WINDOWS, section="loader")
def zlibwapi(facts: Facts, ctx: RuleContext) -> List[Finding]:
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
        if load.skipped:
            title = "%s finds only a %s zlibwapi.dll (%s): cuDNN 8 cannot load it (error 193)" % (
                load.consumer, load.skipped[0]["machine"], load.skipped[0]["path"])
        else:
            title = "%s cannot load zlibwapi.dll, which cuDNN %s needs ('Could not locate zlibwapi.dll')" % (
                load.consumer, next((d.version for d in win.dlls if cudnn and d.path == cudnn), "8"))
        out.append(finding(
            ERROR, title,
            detail="cuDNN %s up to %s loads zlibwapi.dll at run time; NVIDIA does not ship it [%s]." % (
                table.get("cudnn_from"), table.get("cudnn_before"), table.get("source", "")[:80]),
            remedy=zlibwapi_fix(folder, good, str(table["download"]), str(table["dll_in_zip"])),
            evidence={"skipped": load.skipped, "cudnn": cudnn}, catalogue=["F7"]))
    return out


@rule("CD653", "windows-cudnn-shadowed", "A program loads an older cuDNN than another copy on this machine",
      platforms=WINDOWS, section="loader")
def shadowed(facts: Facts, ctx: RuleContext) -> List[Finding]:
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
        newer = _newest([c for c in same if mine and newer_than(c.version, mine.version)])
        if mine is None or mine.major is None or newer is None:
            continue
        out.append(finding(
            WARNING, "%s loads cuDNN %s from %s, older than %s in %s (%s)" % (
                PLAIN, mine.version, mine.directory, newer.version, newer.directory, ", ".join(newer.found_via)),
            detail="Windows takes the first cudnn64_%d.dll in its search order; a framework with its own copy "
                   "(torch\\lib) still uses that one, but every other program gets the older copy." % mine.major,
            remedy=newer_copy_first_fix(win, mine, newer),
            evidence={"loaded": load.path, "via": load.via, "newer": newer.path, "shadowed": load.shadowed},
            catalogue=["F6", "D7"]))
    return out


@rule("CD654", "windows-python-ignores-path", "Python 3.8+ does not search PATH for cuDNN's DLLs", platforms=WINDOWS,
      section="loader")
def python_path(facts: Facts, ctx: RuleContext) -> List[Finding]:
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
            WARNING if others else INFO,
            "%s cannot load %s although PATH has it (%s)" % (load.consumer, load.request, folder),
            detail="Since Python 3.8, extension modules and ctypes look only in the program's folder, the "
                   "os.add_dll_directory folders and System32, not PATH ('Could not locate %s', 'LoadLibrary "
                   "failed with error 126').%s" % (load.request, (" Affected: %s." % ", ".join(
                       "%s %s" % (fw.name, fw.version) for fw in others)) if others else ""),
            remedy=python_dll_directory_fix(folder),
            evidence={"python": python_dir, "folder": folder}, catalogue=["F6"]))
    return out


@rule("CD655", "windows-framework-cannot-load",
      "A framework's library cannot load the cuDNN or CUDA runtime it imports", platforms=WINDOWS, section="loader")
def framework_imports(facts: Facts, ctx: RuleContext) -> List[Finding]:
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


def _unloadable(facts: Facts, compat: Compat, win: WindowsFacts, load: WinLoad, fw: Optional[FrameworkFacts],
                missing: str) -> Finding:
    """CD655 for one import of a framework library that its search does not find."""
    m = re.match(r"^cudnn64_(\d+)\.dll$", missing, re.I)
    folder = next((ntpath.dirname(d.path) for d in win.dlls if ntpath.basename(d.path).lower() == missing.lower()),
                  None)
    lib = ntpath.basename(load.request)
    importer = fw.name if fw else None
    if folder:
        title = "%s: %s imports %s, which is only in %s, a folder Python 3.8+ does not search" % (
            load.consumer, lib, missing, folder)
        fix = framework_import_fix(folder, importer)
    elif m:
        major = int(m.group(1))
        others = sorted({"cuDNN %s at %s" % (c.version, c.directory) for c in facts.cudnn if c.major != major})
        title = "%s: %s needs cuDNN %d (%s), which is not installed%s" % (
            load.consumer, lib, major, missing, (" (found %s)" % "; ".join(others)) if others else "")
        cuda = (fw.cuda_version if fw else None) or _cudart_cuda(load, win)
        install = machine_cudnn_fix(facts, compat, cuda, major, None, "pip")
        fix = windows_framework_cudnn_fix(install, missing, importer, fw.location if fw is not None else None)
    else:
        title = "%s: %s imports %s, which is not installed" % (load.consumer, lib, missing)
        fix = cuda_runtime_fix(missing, importer)
    return finding(
        ERROR, title,
        detail="Windows fails the whole load with error 126 ('LoadLibrary failed with error 126 \"\" when trying to "
               "load %s'); the framework falls back to CPU or stops." % load.request,
        remedy=fix, evidence={"library": load.request, "missing": missing, "unresolved": load.unresolved},
        catalogue=["F6", "G6", "D1"])


def _cudart_cuda(load: WinLoad, win: WindowsFacts) -> Optional[str]:
    """The CUDA major a consumer was built for, from the cudart64_NN.dll it imports (110 -> 11, 12 -> 12, 90 -> 9)."""
    for d in win.dlls:
        if d.path == load.request:
            for name in d.imports:
                split = split_library(name) if re.match(r"^cudart64_\d+\.dll$", name, re.I) else None
                if split:
                    return split[1].split(".")[0]
    return None


@rule("CD656", "windows-toolkit-runtime-off-path",
      "A CUDA toolkit's runtime DLL is in a folder PATH does not name", platforms=WINDOWS, section="loader")
def toolkit_runtime_off_path(facts: Facts, ctx: RuleContext) -> List[Finding]:
    """CUDA 13 keeps its DLLs in bin\\x64, while its installer and older guides put bin on PATH: a program that
    loads cudart64_13.dll by Windows' search order (llama.cpp, a Rust or C++ build) does not find it."""
    win = _windows(facts)
    if win is None:
        return []
    out: List[Finding] = []
    for tk in facts.toolkits:
        if not tk.cudart_path or tk.error:
            continue
        folder, name = ntpath.split(tk.cudart_path)
        loaded = next((ld for ld in win.loads if ld.consumer == PLAIN and ld.request.lower() == name.lower()), None)
        if on_path(win, folder) or loaded is None or loaded.path:
            continue
        out.append(finding(
            WARNING, "CUDA %s's runtime %s is in %s, which is not on PATH: a program started from a shell cannot "
                     "load it (error 126)" % (tk.version or "?", name, folder),
            detail="From CUDA 13.0 on, the toolkit keeps its DLLs in bin\\x64, not bin; programs that load the "
                   "runtime by Windows' search order find it only where PATH names that folder.",
            remedy=toolkit_dlls_on_path_fix(folder), evidence={"toolkit": tk.path, "runtime": tk.cudart_path},
            catalogue=["F6", "D1"]))
    return out


@rule("CD150", "windows-no-driver", "No NVIDIA driver on a Windows machine", platforms=WINDOWS, section="driver")
def no_driver(facts: Facts, ctx: RuleContext) -> List[Finding]:
    win = _windows(facts)
    if win is None or facts.driver.version or facts.driver.libcuda_path or facts.gpus:
        return []
    return [finding(
        ERROR, "No NVIDIA driver: %s\\System32\\nvcuda.dll is missing" % win.windows_dir,
        detail="nvcuda.dll (the CUDA driver) and nvml.dll come with the NVIDIA display driver; without them no "
               "CUDA program runs.",
        remedy=windows_driver_fix(),
        evidence={"searched": facts.searched.get("driver", [])}, catalogue=["A1"])]


@rule("CD450", "windows-cudnn-incomplete", "A cuDNN copy on Windows lacks some of its DLLs", platforms=WINDOWS,
      section="cudnn")
def incomplete(facts: Facts, ctx: RuleContext) -> List[Finding]:
    if _windows(facts) is None:
        return []
    compat = compat_of(ctx)
    out: List[Finding] = []
    for c in facts.cudnn:
        if not c.sublibraries_missing:
            continue
        out.append(finding(
            WARNING, "cuDNN %s at %s lacks %d of its DLLs: %s" % (
                c.version or c.major, c.directory, len(c.sublibraries_missing), ", ".join(c.sublibraries_missing)),
            detail="cudnn64_%s.dll loads its sub-libraries by name at first use; a program that finds this copy "
                   "first fails with 'Could not locate %s'." % (c.major, c.sublibraries_missing[0]),
            remedy=complete_copy_fix(compat, c),
            evidence={"copy": c.path, "missing": c.sublibraries_missing}, catalogue=["D2", "F6"]))
    return out
