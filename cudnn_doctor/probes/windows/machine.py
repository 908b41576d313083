"""The Windows machine itself: host, NVIDIA driver (nvcuda.dll, nvml.dll, NVML) and CUDA toolkits."""
from __future__ import annotations

import ntpath
import re
from typing import Dict, List, Optional

from ...model import DriverFacts, HostFacts, ToolkitFacts
from ...readers.version_files import parse_nvcc_json, parse_version_json
from ...versions import decode_cuda
from ..driver import _gpu
from .state import State

TOOLKIT_ROOT = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"
NVSMI = r"C:\Program Files\NVIDIA Corporation\NVSMI"
_CUDART = re.compile(r"^cudart64_(\d+)\.dll$", re.I)
# Where a toolkit keeps its DLLs and tools: bin\x64 from CUDA 13.0 on, bin before (NVIDIA's cuda-pathfinder searches
# CUDA_PATH\bin\x64, bin\x86_64, then bin: https://github.com/NVIDIA/cuda-python/blob/main/cuda_pathfinder/cuda/
# pathfinder/_binaries/find_nvidia_binary_utility.py; https://github.com/pytorch/pytorch/pull/162383).
TOOLKIT_BINS = ("bin\\x64", "bin\\x86_64", "bin")


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
        bins = [ntpath.join(folder, b) for b in TOOLKIT_BINS]
        nvcc = next((n for n in (ntpath.join(b, "nvcc.exe") for b in bins) if state.drive.is_file(n)), None)
        if nvcc:
            tk.nvcc_path = nvcc
            tk.nvcc_version = parse_nvcc_json(text) if text else None
        tk.cudart_path = next((ntpath.join(b, n) for b in bins for n in state.drive.listdir(b) if _CUDART.match(n)),
                              None)
        if tk.cudart_path:
            dll = state.dll(tk.cudart_path)
            tk.cudart_version = dll.version
            if not tk.version and dll.version:
                tk.version, tk.version_source = dll.version, "%s version resource" % ntpath.basename(tk.cudart_path)
        if not tk.version:
            m = re.search(r"\\v(\d+\.\d+)$", folder, re.I)
            if m:
                tk.version, tk.version_source = m.group(1), "folder name"
        state.ctx.facts.toolkits.append(tk)
