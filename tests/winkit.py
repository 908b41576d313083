"""Windows drives for tests: the six scenarios of issue 15 laid out under a folder read as C:.

A scenario takes DLL sources by kind ("cudnn9", "cudnn9-old", "cudnn8", "cudart12", "cudart11", "zlib32"):
NVIDIA's real DLLs (tests/realdata.py) for the probe tests, or small DLLs compiled with mingw-w64 with the same
names, import chains, versions and machine types for the Wine proof (tests/windows/test_windows_wine.py).
"""
from __future__ import annotations

import json
import ntpath
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List

TK = r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA"
CUDNN9 = ["cudnn64_9.dll", "cudnn_graph64_9.dll", "cudnn_engines_precompiled64_9.dll",
          "cudnn_engines_runtime_compiled64_9.dll", "cudnn_heuristic64_9.dll", "cudnn_ops64_9.dll",
          "cudnn_cnn64_9.dll", "cudnn_adv64_9.dll"]
CUDNN8 = ["cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll", "cudnn_cnn_infer64_8.dll",
          "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"]


@dataclass
class Scenario:
    name: str
    env: Dict[str, str]


Source = Callable[[str], Path]  # kind -> folder holding that kind's DLLs (and include/cudnn_version.h)


def win_to_host(drive: Path, winpath: str) -> Path:
    return drive.joinpath(*[p for p in ntpath.splitdrive(winpath)[1].split("\\") if p])


def put(drive: Path, src_dir: Path, names: List[str], winfolder: str, rename: Dict[str, str] = None) -> None:
    dest = win_to_host(drive, winfolder)
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = dest / (rename or {}).get(name, name)
        if target.exists():
            target.unlink()
        try:
            os.link(src_dir / "bin" / name, target)  # the real DLLs are large sparse files: never copy them
        except OSError:
            shutil.copyfile(src_dir / "bin" / name, target)


def header(drive: Path, src_dir: Path, winfolder: str) -> None:
    src = src_dir / "include" / "cudnn_version.h"
    if src.exists():
        dest = win_to_host(drive, winfolder)
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / "cudnn_version.h")


def toolkit(drive: Path, version: str, runtime: Path, cudart: str, dlls: str = "bin") -> str:
    """A CUDA toolkit folder with its runtime DLL in ``dlls`` (bin; bin\\x64 from CUDA 13.0 on)."""
    folder = "%s\\v%s" % (TK, ".".join(version.split(".")[:2]))
    put(drive, runtime, [cudart], folder + "\\" + dlls)
    tk = win_to_host(drive, folder)
    (tk / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": version}}))
    return folder


def base(drive: Path) -> None:
    win_to_host(drive, r"C:\Windows\System32").mkdir(parents=True, exist_ok=True)


def build(name: str, drive: Path, source: Source) -> Scenario:
    """Lay out scenario ``name`` under ``drive`` (read as C:) and return its environment and programs."""
    base(drive)
    if name == "dl4j-manual-copy":  # seeds 000/004: cuDNN copied by hand into the toolkit's bin
        tk = toolkit(drive, "12.4.127", source("cudart12"), "cudart64_12.dll")
        put(drive, source("cudnn9"), CUDNN9, tk + "\\bin")
        header(drive, source("cudnn9"), tk + "\\include")
        return Scenario(name, {"CUDA_PATH": tk, "CUDA_PATH_V12_4": tk, "PATH": tk + "\\bin;" + tk + "\\libnvvp"})
    if name == "installer-bin-only":  # cuDNN 9 installer: DLLs in bin\12.4, only bin on PATH
        tk = toolkit(drive, "12.4.127", source("cudart12"), "cudart64_12.dll")
        cudnn = r"C:\Program Files\NVIDIA\CUDNN\v9.1"
        put(drive, source("cudnn9"), CUDNN9, cudnn + "\\bin\\12.4")
        header(drive, source("cudnn9"), cudnn + "\\include\\12.4")
        return Scenario(name, {"CUDA_PATH": tk, "PATH": tk + "\\bin;" + cudnn + "\\bin"})
    if name == "cudnn89-no-zlib":  # cuDNN 8.9 in CUDA 11.8 without zlibwapi.dll
        tk = toolkit(drive, "11.8.89", source("cudart11"), "cudart64_110.dll")
        put(drive, source("cudnn8"), CUDNN8, tk + "\\bin")
        header(drive, source("cudnn8"), tk + "\\include")
        return Scenario(name, {"CUDA_PATH": tk, "PATH": tk + "\\bin"})
    if name == "zlib-32bit":  # as above, with a 32-bit zlibwapi.dll beside cuDNN
        tk = toolkit(drive, "11.8.89", source("cudart11"), "cudart64_110.dll")
        put(drive, source("cudnn8"), CUDNN8, tk + "\\bin")
        header(drive, source("cudnn8"), tk + "\\include")
        put(drive, source("zlib32"), ["zlibwapi.dll"], tk + "\\bin")
        return Scenario(name, {"CUDA_PATH": tk, "PATH": tk + "\\bin"})
    if name == "two-copies-wrong-order":  # an older, partial cudnn64_9.dll earlier on PATH than the toolkit's
        tk = toolkit(drive, "12.4.127", source("cudart12"), "cudart64_12.dll")
        put(drive, source("cudnn9"), CUDNN9, tk + "\\bin")
        header(drive, source("cudnn9"), tk + "\\include")
        put(drive, source("cudnn9-old"), ["cudnn64_9.dll"], r"C:\tools\cudnn\bin")
        return Scenario(name, {"CUDA_PATH": tk, "PATH": r"C:\tools\cudnn\bin;" + tk + "\\bin"})
    if name == "torch-bundle-shadowed":  # torch\lib carries 9.1; an older complete 9.x copy is on PATH
        site = r"C:\Python311\Lib\site-packages"
        py = win_to_host(drive, r"C:\Python311")
        py.mkdir(parents=True, exist_ok=True)
        (py / "python.exe").write_bytes(b"MZ")
        dist = win_to_host(drive, site + "\\torch-2.4.0+cu124.dist-info")
        dist.mkdir(parents=True, exist_ok=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.4.0+cu124\n\n")
        (win_to_host(drive, site + "\\torch") / "version.py").parent.mkdir(parents=True, exist_ok=True)
        (win_to_host(drive, site + "\\torch") / "version.py").write_text("cuda = '12.4'\n")
        put(drive, source("cudnn9"), CUDNN9, site + "\\torch\\lib")
        old = r"C:\cudnn-9.0\bin"
        put(drive, source("cudnn9-old"), CUDNN9, old)
        return Scenario(name, {"PATH": old + r";C:\Python311"})
    if name == "ort-needs-cudnn8":  # onnxruntime-gpu built for CUDA 11 / cuDNN 8 on a cuDNN 9 machine
        tk = toolkit(drive, "12.4.127", source("cudart12"), "cudart64_12.dll")
        put(drive, source("cudnn9"), CUDNN9, tk + "\\bin")
        header(drive, source("cudnn9"), tk + "\\include")
        tk11 = toolkit(drive, "11.8.89", source("cudart11"), "cudart64_110.dll")
        site = r"C:\Python311\Lib\site-packages"
        py = win_to_host(drive, r"C:\Python311")
        py.mkdir(parents=True, exist_ok=True)
        (py / "python.exe").write_bytes(b"MZ")
        dist = win_to_host(drive, site + "\\onnxruntime_gpu-1.16.3.dist-info")
        dist.mkdir(parents=True, exist_ok=True)
        (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: onnxruntime-gpu\nVersion: 1.16.3\n\n")
        put(drive, source("ort-cu11"), ["onnxruntime_providers_cuda.dll"], site + "\\onnxruntime\\capi")
        return Scenario(name, {"CUDA_PATH": tk, "PATH": tk + "\\bin;" + tk11 + "\\bin;C:\\Python311"})
    raise KeyError(name)


SCENARIOS = ["dl4j-manual-copy", "installer-bin-only", "cudnn89-no-zlib", "two-copies-wrong-order",
             "torch-bundle-shadowed", "zlib-32bit", "ort-needs-cudnn8"]
