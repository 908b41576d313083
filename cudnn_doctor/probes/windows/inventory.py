"""What is installed on a Windows machine: driver, toolkits, cuDNN copies, Python frameworks, from PE files."""
from __future__ import annotations

import json
import mmap
import ntpath
import re
from typing import Dict, List, Optional, Tuple

from ...model import CudnnCopy, DriverFacts, HostFacts, LibFile, ToolkitFacts
from ...model_windows import WinDll, WindowsFacts
from ...readers.pe import PeInfo, product_version, read_pe
from ...versions import parse_version_json
from .drive import WindowsDrive

TOOLKIT_ROOT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"
CUDNN_INSTALLER_ROOT = r"C:\Program Files\NVIDIA\CUDNN"
NVSMI = r"C:\Program Files\NVIDIA Corporation\NVSMI"
_CUDNN_MAIN = re.compile(r"^cudnn64_(\d+)\.dll$", re.I)
_CUDART = re.compile(r"^cudart64_(\d+)\.dll$", re.I)
_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>[^-]+)\.dist-info$")


class State:
    """What the Windows steps share: the drive, the environment as Windows reads it, parsed PE files."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.drive = WindowsDrive(ctx.host)
        # Windows environment variable names ignore case. A drive read from Linux without --env would get this
        # process's POSIX values (PATH=/usr/bin:/bin): those say nothing about the Windows machine.
        self.env: Dict[str, str] = {k.upper(): v for k, v in ctx.host.env.items()
                                    if ctx.host.is_live or not v.startswith("/")}
        self.win = WindowsFacts(drive=None if ctx.host.is_live else str(ctx.host.root))
        ctx.facts.windows = self.win
        self.win.windows_dir = ntpath.normpath(self.env.get("SYSTEMROOT") or self.env.get("WINDIR") or r"C:\Windows")
        self.win.path = split_path(self.env.get("PATH", ""))
        self.win.path_absent = [p for p in self.win.path if not self.drive.is_dir(p)]
        self._pe: Dict[str, PeInfo] = {}
        self.site_dirs: List[str] = []

    @property
    def system32(self) -> str:
        return ntpath.join(self.win.windows_dir, "System32")

    def pe(self, path: str) -> PeInfo:
        key = path.lower()
        if key not in self._pe:
            self._pe[key] = _read_pe_file(self.drive, path)
        return self._pe[key]

    def dll(self, path: str, header_version: Optional[str] = None) -> WinDll:
        """A DLL's facts, recorded once: version from its resource, else the header beside it, else its name."""
        for known in self.win.dlls:
            if known.path.lower() == path.lower():
                return known
        info = self.pe(path)
        dll = WinDll(path=path, machine=info.machine, imports=info.imports + info.delay_imports, error=info.error)
        version = product_version(info) if info.has_version_resource else None
        if version:
            dll.version, dll.version_source = version, "PE version resource"
        elif header_version:
            dll.version, dll.version_source = header_version, "cudnn_version.h beside it (no version resource)"
        else:
            m = re.search(r"64_(\d+)\.dll$", path, re.I)
            if m:
                dll.version, dll.version_source = m.group(1), "file name (no version resource)"
        self.win.dlls.append(dll)
        return dll


def split_path(value: str) -> List[str]:
    """PATH as Windows reads it: ';'-separated, quotes dropped, empty entries ignored."""
    out = []
    for raw in value.split(";"):
        entry = raw.strip().strip('"').strip()
        if entry:
            out.append(entry.rstrip("\\") if len(entry) > 3 else entry)
    return out


def _read_pe_file(drive: WindowsDrive, path: str) -> PeInfo:
    opened = drive.open_binary(path)
    if opened is None:
        return PeInfo(error="cannot be read")
    fh, size = opened
    try:
        if size == 0:
            return PeInfo(error="empty file")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:  # cuDNN DLLs reach 600 MB
            return read_pe(data)
    except (OSError, ValueError) as exc:
        return PeInfo(error="cannot be read (%s)" % exc)
    finally:
        fh.close()


# --- steps -------------------------------------------------------------------


def host(state: State) -> None:
    host_ = state.ctx.host
    facts = HostFacts(root="/" if host_.is_live else str(host_.root), platform="windows", machine="x86_64")
    kernel = state.pe(ntpath.join(state.system32, "kernel32.dll"))
    if kernel.machine == "arm64":
        facts.machine = "aarch64"
    facts.kernel_release = kernel.strings.get("ProductVersion") or kernel.file_version
    facts.in_container, facts.wsl = False, False
    state.ctx.facts.host = facts
    state.ctx.searched("host", ntpath.join(state.system32, "kernel32.dll"))


def driver_version_from_file(file_version: Optional[str]) -> Optional[str]:
    """NVIDIA's Windows file version 32.0.15.6094 is driver 560.94: the last five digits of its last two fields."""
    parts = (file_version or "").split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return None
    digits = (parts[2] + parts[3].zfill(4))[-5:]
    return "%s.%s" % (int(digits[:3]), digits[3:])


def driver(state: State) -> None:
    facts = DriverFacts()
    state.ctx.facts.driver = facts
    for name in ("nvcuda.dll", "nvml.dll"):
        for folder in (state.system32, NVSMI):
            found = state.drive.find(folder, name)
            if found is None:
                continue
            dll = state.dll(found)
            dll.version = driver_version_from_file(state.pe(found).file_version) or dll.version
            if name == "nvcuda.dll":
                facts.libcuda_path, facts.libcuda_file_version = found, dll.version
            else:
                facts.libnvml_path, facts.libnvml_file_version = found, dll.version
            break
    state.ctx.searched("driver", "nvcuda.dll and nvml.dll in %s and %s" % (state.system32, NVSMI))
    if facts.libcuda_file_version:
        facts.version, facts.version_source = facts.libcuda_file_version, "version resource:%s" % facts.libcuda_path
    if state.ctx.host.is_live:
        # NVML through nvml.dll, as on Linux (pynvml finds it in System32 itself).
        tasks = [{"op": "nvml", "lib": None}]
        state.ctx.native("driver", tasks, lambda results: _apply_nvml(state, results[0]))


def _apply_nvml(state: State, res: dict) -> None:
    from ..driver import _gpu
    from ...versions import decode_cuda

    facts = state.ctx.facts.driver
    if res.get("init_error") or res.get("error") or res.get("crashed") or res.get("timeout"):
        facts.nvml_error = res.get("init_error") or res.get("error") or "NVML did not answer"
        facts.nvml_error_code = res.get("init_error_code")
        return
    source = "nvml:%s" % (facts.libnvml_path or "nvml.dll")
    if res.get("driver_version"):
        facts.version, facts.version_source = res["driver_version"], source
    if res.get("cuda_driver_version"):
        facts.cuda_version, facts.cuda_version_source = decode_cuda(res["cuda_driver_version"]), source
    state.ctx.facts.gpus = [_gpu(g, source) for g in res.get("gpus", [])]
    models = {0: "WDDM", 1: "TCC", 2: "MCDM"}  # nvmlDriverModel_t
    for g in res.get("gpus", []):
        if g.get("driver_model") is not None:
            state.win.driver_model[str(g["index"])] = models.get(g["driver_model"], str(g["driver_model"]))


def toolkits(state: State) -> None:
    found: Dict[str, List[str]] = {}
    for name, value in sorted(state.env.items()):
        if name == "CUDA_PATH" or name.startswith("CUDA_PATH_V"):
            state.win.cuda_path_vars[name] = value
            found.setdefault(ntpath.normpath(value.strip('"')), []).append(name)
    for folder in state.drive.glob_dirs(TOOLKIT_ROOT, "v"):
        found.setdefault(folder, []).append(TOOLKIT_ROOT + r"\v*")
    state.ctx.searched("toolkits", "CUDA_PATH, CUDA_PATH_V*, %s\\v*" % TOOLKIT_ROOT)
    for folder, via in found.items():
        tk = ToolkitFacts(path=folder, found_via=via)
        if not state.drive.is_dir(folder):
            tk.error = "folder does not exist"
            state.ctx.facts.toolkits.append(tk)
            continue
        text = state.drive.read_text(ntpath.join(folder, "version.json"))
        if text:
            tk.version, tk.bundled_driver = parse_version_json(text)
            tk.version_source = "version.json"
        for name in state.drive.listdir(ntpath.join(folder, "bin")):
            if _CUDART.match(name):
                tk.cudart_path = ntpath.join(folder, "bin", name)
                dll = state.dll(tk.cudart_path)
                tk.cudart_version = dll.version
                if not tk.version and dll.version:
                    tk.version, tk.version_source = dll.version, "%s version resource" % name
        if not tk.version:
            m = re.search(r"\\v(\d+\.\d+)$", folder, re.I)
            if m:
                tk.version, tk.version_source = m.group(1), "folder name"
        state.ctx.facts.toolkits.append(tk)


def python(state: State) -> None:
    """Python installations and their site-packages: frameworks and NVIDIA wheels, from metadata only."""
    from ..python_env import FRAMEWORKS, _framework, _norm

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
    from ...versions import parse_cudnn_header

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
        add(ntpath.join(tk.path, "bin"), "toolkit", "CUDA toolkit %s" % tk.path)
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
    from ...compat import load_compat

    compat = load_compat()
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


def _apply_cudnn(copy: CudnnCopy, res: dict) -> None:
    from ...versions import decode_cudnn

    if res.get("version"):
        copy.version, copy.version_source = decode_cudnn(res["version"]), "cudnnGetVersion"
    elif res.get("error") or res.get("crashed") or res.get("timeout"):
        copy.load_error = res.get("error") or "the child process failed"
