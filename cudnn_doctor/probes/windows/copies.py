"""Python installations and every cuDNN copy on a Windows machine, versioned from their DLLs."""
from __future__ import annotations

import ntpath
import re
from typing import Dict, List, Optional, Tuple

from ...model import CudnnCopy, LibFile
from ...readers.headers import parse_cudnn_header
from ...readers.package_meta import normalize_name as _norm
from ...versions import decode_cudnn
from ..python_env import FRAMEWORKS, _framework
from .machine import TOOLKIT_BINS
from .state import State

CUDNN_INSTALLER_ROOT = r"C:\Program Files\NVIDIA\CUDNN"
_CUDNN_MAIN = re.compile(r"^cudnn64_(\d+)\.dll$", re.I)
_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.dist-info$")


def python(state: State) -> None:
    """Python installations and their site-packages: frameworks and NVIDIA wheels, from metadata only."""
    env = state.ctx.facts.python
    roots: List[str] = []
    for entry in state.win.path:  # python.exe on PATH
        if state.drive.find(entry, "python.exe"):
            roots.append(ntpath.dirname(entry) if ntpath.basename(entry).lower() == "scripts" else entry)
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if state.env.get(var):
            roots.append(state.env[var])
    for base in ("C:\\", r"C:\ProgramData", r"C:\Program Files"):
        roots += state.drive.glob_dirs(base, "python3") + state.drive.glob_dirs(base, "miniconda3") + \
            state.drive.glob_dirs(base, "anaconda3")
    for user in state.drive.glob_dirs(r"C:\Users", ""):
        roots += state.drive.glob_dirs(ntpath.join(user, r"AppData\Local\Programs\Python"), "python3")
        for conda in ("miniconda3", "anaconda3"):
            roots += state.drive.glob_dirs(user, conda)
    conda_envs = []
    for r in roots:
        conda_envs += state.drive.glob_dirs(ntpath.join(r, "envs"), "")
    for root in dict.fromkeys(ntpath.normpath(r) for r in roots + conda_envs):
        site = ntpath.join(root, "Lib", "site-packages")
        if not state.drive.is_dir(site):
            continue
        state.win.python_dirs.append(root)
        state.site_dirs.append(site)
    if state.ctx.host.is_live:
        state.site_dirs += [s for s in state.ctx.host.python_site_dirs() if s not in state.site_dirs]
    env.site_dirs = list(state.site_dirs)
    env.conda_prefixes = [r for r in state.win.python_dirs if state.drive.is_dir(ntpath.join(r, "conda-meta"))]
    state.ctx.searched("python", "python.exe on PATH, VIRTUAL_ENV, CONDA_PREFIX, C:\\Python3*, C:\\Users\\*\\AppData"
                                 "\\Local\\Programs\\Python\\Python3*, miniconda3/anaconda3 and their envs")
    for site in state.site_dirs:
        inside = state.drive.inside(site)
        for entry in state.drive.listdir(site):
            m = _DIST_INFO.match(entry)
            if not m:
                continue
            name, version = _norm(m.group("name")), m.group("version")
            if name.startswith("nvidia-"):
                env.nvidia_wheels.append({"name": name, "version": version, "location": site})
            elif FRAMEWORKS.match(name) and inside is not None:
                fw = _framework(state.ctx, inside, entry, name, version)
                fw.location = site
                fw.source = ntpath.join(site, entry, "METADATA")
                fw.consumer_library = None  # Linux file names; the Windows loads are predicted in loads.py
                env.frameworks.append(fw)


def _header_version(state: State, folder: str) -> Tuple[Optional[str], Optional[str]]:
    """cudnn_version.h for a DLL folder: ..\\include (toolkit, wheel) or ..\\..\\include\\<cuda> (installer)."""
    cands = [ntpath.join(ntpath.dirname(folder), "include", "cudnn_version.h")]
    parent = ntpath.dirname(folder)
    if ntpath.basename(parent).lower() == "bin":  # ...\CUDNN\v9.1\bin\12.4
        cands.insert(0, ntpath.join(ntpath.dirname(parent), "include", ntpath.basename(folder), "cudnn_version.h"))
    for cand in cands:
        text = state.drive.read_text(cand)
        if text:
            parsed = parse_cudnn_header(text)
            if parsed:
                return cand, parsed["version"]
    return None, None


def cudnn_folders(state: State) -> Dict[str, Tuple[str, List[str]]]:
    """Every folder that may hold cuDNN DLLs -> (origin, how it was found)."""
    out: Dict[str, Tuple[str, List[str]]] = {}

    def add(folder: str, origin: str, via: str) -> None:
        key = ntpath.normpath(folder)
        hit = next((k for k in out if k.lower() == key.lower()), None)
        if hit is None:
            out[key] = (origin, [via])
        else:
            out[hit][1].append(via)

    for tk in state.ctx.facts.toolkits:
        for folder in TOOLKIT_BINS:  # a cuDNN copied into the toolkit sits beside its DLLs (bin\x64 from CUDA 13)
            if folder == "bin" or state.drive.is_dir(ntpath.join(tk.path, folder)):
                add(ntpath.join(tk.path, folder), "toolkit", "CUDA toolkit %s" % tk.path)
    for version_dir in state.drive.glob_dirs(CUDNN_INSTALLER_ROOT, "v"):
        bin_dir = ntpath.join(version_dir, "bin")
        add(bin_dir, "installer", "cuDNN installer")
        for cuda_dir in state.drive.glob_dirs(bin_dir, ""):
            add(cuda_dir, "installer", "cuDNN installer")
    for entry in state.win.path:
        add(entry, "path", "PATH")
    for site in state.site_dirs:
        add(ntpath.join(site, "nvidia", "cudnn", "bin"), "pip", "pip wheel nvidia-cudnn")
        add(ntpath.join(site, "torch", "lib"), "torch", "bundled with torch")
    for prefix in state.win.python_dirs:
        add(ntpath.join(prefix, "Library", "bin"), "conda", "conda")
    return out


def cudnn(state: State) -> None:
    compat = state.ctx.knowledge
    folders = cudnn_folders(state)
    state.ctx.searched("cudnn", "; ".join(folders))
    for folder, (origin, via) in folders.items():
        for name in state.drive.listdir(folder):
            m = _CUDNN_MAIN.match(name)
            if not m:
                continue
            major = int(m.group(1))
            path = ntpath.join(folder, name)
            header_path, header_version = _header_version(state, folder)
            main = state.dll(path, header_version)
            copy = CudnnCopy(path=path, directory=folder, major=major, version=main.version,
                             version_source=main.version_source, origin=origin, found_via=via,
                             header_path=header_path, header_version=header_version)
            m_cuda = re.search(r"\\bin\\(\d+\.\d+)$", folder)
            if origin == "installer" and m_cuda:
                copy.cuda_version, copy.cuda_version_source = m_cuda.group(1), "installer folder name"
            _built_for(state, copy)
            copy.files.append(LibFile(name=name, path=path, file_version=main.version))
            for sub in compat.cudnn_layout(major).get("windows_sublibraries", []):
                sub_path = state.drive.find(folder, sub)
                if sub_path is None:
                    copy.sublibraries_missing.append(sub)
                    continue
                dll = state.dll(sub_path, header_version or (main.version if main.version_source ==
                                                              "PE version resource" else None))
                copy.files.append(LibFile(name=sub, path=sub_path, file_version=dll.version))
            state.ctx.facts.cudnn.append(copy)
            if state.ctx.host.is_live:  # cudnnGetVersion from the library itself, in a child process
                tasks = [{"op": "cudnn", "lib": path}]
                state.ctx.native("cudnn", tasks, lambda res, copy=copy: _apply_cudnn(copy, res[0]))


def _built_for(state: State, copy: CudnnCopy) -> None:
    """The CUDA a pip or torch copy was built for: the wheel's name (nvidia-cudnn-cu12), torch's version.py."""
    site = ntpath.dirname(ntpath.dirname(copy.directory))  # <site>\nvidia\cudnn\bin, <site>\torch\lib
    if copy.origin == "pip":
        site = ntpath.dirname(site)
        wheel = next((w for w in state.ctx.facts.python.nvidia_wheels if w["location"].lower() == site.lower()
                      and re.match(r"^nvidia-cudnn-cu\d+$", w["name"])), None)
        if wheel:
            copy.cuda_version, copy.cuda_version_source = wheel["name"].rsplit("cu", 1)[1], "wheel name"
            copy.package = "%s %s" % (wheel["name"], wheel["version"])
    elif copy.origin == "torch":
        fw = next((f for f in state.ctx.facts.python.frameworks if f.name == "torch"
                   and f.location.lower() == site.lower()), None)
        if fw and fw.cuda_version:
            copy.cuda_version, copy.cuda_version_source = fw.cuda_version, "torch/version.py"


def _apply_cudnn(copy: CudnnCopy, res: dict) -> None:
    if res.get("version"):
        copy.version, copy.version_source = decode_cudnn(res["version"]), "cudnnGetVersion"
    elif res.get("error") or res.get("crashed") or res.get("timeout"):
        copy.load_error = res.get("error") or "the child process failed"
