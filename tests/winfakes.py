"""Small DLLs named like NVIDIA's, compiled with mingw-w64: same import chains, version resources and machine
types as the real ones, so Wine's real PE loader can be asked where each would load from."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

GCC = "x86_64-w64-mingw32-gcc"
WINDRES = "x86_64-w64-mingw32-windres"

# name -> imports, as read from nvidia-cudnn-cu12 9.1.0.70 / nvidia-cudnn-cu11 8.9.5.29 win_amd64.
CHAIN9 = {
    "cudnn_graph64_9.dll": [],
    "cudnn64_9.dll": [],
    "cudnn_ops64_9.dll": ["cudnn_graph64_9.dll"],
    "cudnn_cnn64_9.dll": ["cudnn_ops64_9.dll", "cudnn_graph64_9.dll"],
    "cudnn_adv64_9.dll": ["cudnn_ops64_9.dll", "cudnn_graph64_9.dll"],
    "cudnn_engines_runtime_compiled64_9.dll": ["cudnn_graph64_9.dll"],
    "cudnn_engines_precompiled64_9.dll": ["cudnn_graph64_9.dll"],
    "cudnn_heuristic64_9.dll": ["cudnn_graph64_9.dll"],
}
CHAIN8 = {n: [] for n in ("cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
                          "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll",
                          "cudnn_adv_train64_8.dll")}
KINDS = {
    "cudnn9": (CHAIN9, "9.1.0.70", "NVIDIA cuDNN Library", {"cudnn_graph64_9.dll"}),  # graph: no resource, like 9.1.0
    "cudnn9-old": (CHAIN9, "9.0.0.312", "NVIDIA cuDNN Library", set()),
    "cudnn8": (CHAIN8, "8.9.5.29", "NVIDIA cuDNN Library", set()),
    "cudart12": ({"cudart64_12.dll": []}, "6.14.11.12040", "NVIDIA CUDA 12.4.127 Runtime", set()),
    "cudart13": ({"cudart64_13.dll": []}, "6.14.11.13000", "NVIDIA CUDA 13.0.48 Runtime", set()),
    "cudart11": ({"cudart64_110.dll": []}, "6.14.11.11080", "NVIDIA CUDA 11.8.89 Runtime", set()),
    # The driver's CUDA library: Windows file version 31.0.15.3667 is driver 536.67 (CUDA 12.2).
    "driver536": ({"nvcuda.dll": []}, "31.0.15.3667", "NVIDIA CUDA Driver", set()),
    "driver456": ({"nvcuda.dll": []}, "27.21.14.5671", "NVIDIA CUDA Driver", set()),
    # ONNX Runtime's CUDA provider of a CUDA 11 build: it imports cuDNN 8 and the CUDA 11 runtime.
    "ort-cu11": ({"onnxruntime_providers_cuda.dll": ["cudnn64_8.dll", "cudart64_110.dll"]}, "1.16.3.0",
                 "ONNX Runtime", set()),
}
EXTERNAL = {"cudnn64_8.dll": "cudnn8", "cudart64_110.dll": "cudart11"}  # imports built by another kind
HEADERS = {"cudnn9": (9, 1, 0), "cudnn9-old": (9, 0, 0), "cudnn8": (8, 9, 5)}


def available() -> Optional[str]:
    """None when mingw-w64 can build DLLs here, else why not."""
    for tool in (GCC, WINDRES):
        if shutil.which(tool) is None:
            return "%s is not installed (apt-get install gcc-mingw-w64-x86-64)" % tool
    return None


def _symbol(name: str) -> str:
    return "fake_" + name.split(".")[0].replace("-", "_")


def _rc(version: str, product: str, name: str) -> str:
    parts = (version.split(".") + ["0"] * 4)[:4]
    return """1 VERSIONINFO
FILEVERSION %s
PRODUCTVERSION %s
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904b0"
    BEGIN
      VALUE "FileVersion", "%s"
      VALUE "ProductName", "%s"
      VALUE "ProductVersion", "%s"
      VALUE "OriginalFilename", "%s"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
""" % (",".join(parts), ",".join(parts), version, product, version, name)


def build_kind(kind: str, out: Path) -> Path:
    """Compile one kind's DLLs into out/bin (and its cudnn_version.h into out/include); returns out."""
    chain, version, product, no_resource = KINDS[kind]
    bin_dir = out / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    done: Dict[str, Path] = {}
    for name, other in EXTERNAL.items():  # link against the other kind's build, as the real DLL does
        if any(name in deps for deps in chain.values()):
            ext = build_kind(other, out / other) if not (out / other / "bin" / name).exists() else out / other
            chain = dict(chain, **{name: []})
            done[name] = ext / "bin" / name

    def make(name: str) -> None:
        if name in done:
            return
        for dep in chain[name]:
            make(dep)
        src = out / (name + ".c")
        calls = "".join("extern int %s(void);\n" % _symbol(d) for d in chain[name])
        body = " + ".join(["0"] + ["%s()" % _symbol(d) for d in chain[name]])
        src.write_text("%s__declspec(dllexport) int %s(void) { return 1 + %s; }\n"
                       "__declspec(dllexport) unsigned long long cudnnGetVersion(void) { return %d; }\n" % (
                           calls, _symbol(name), body, _encoded(version)))
        argv: List[str] = [GCC, "-shared", "-O1", "-o", str(bin_dir / name), str(src)]
        if name not in no_resource:
            rc = out / (name + ".rc")
            rc.write_text(_rc(version, product, name))
            obj = out / (name + ".res.o")
            subprocess.run([WINDRES, str(rc), "-O", "coff", "-o", str(obj)], check=True, capture_output=True)
            argv.append(str(obj))
        argv += [str(done[d]) for d in chain[name]]
        subprocess.run(argv, check=True, capture_output=True)
        done[name] = bin_dir / name

    for name in chain:
        make(name)
    if kind in HEADERS:
        major, minor, patch = HEADERS[kind]
        (out / "include").mkdir(exist_ok=True)
        (out / "include" / "cudnn_version.h").write_text(
            "#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n#define CUDNN_PATCHLEVEL %d\n" % (major, minor, patch))
    return out


def _encoded(version: str) -> int:
    parts = [int(p) for p in version.split(".")[:3]]
    return parts[0] * (10000 if parts[0] >= 9 else 1000) + parts[1] * 100 + parts[2]


LOADTEST = r"""
#include <windows.h>
#include <stdio.h>
#include <wchar.h>
/* loadtest MODE PATH PRELOAD_DIR USER_DIRS(;-separated or -) NAME...
   MODE: plain | torch | default.  Prints one line per load and per module. */
static void show(const wchar_t *name) {
    HMODULE h = GetModuleHandleW(name); wchar_t buf[1024];
    if (h && GetModuleFileNameW(h, buf, 1024)) wprintf(L"MOD\t%ls\t%ls\n", name, buf);
    else wprintf(L"MOD\t%ls\t-\n", name);
}
int wmain(int argc, wchar_t **argv) {
    if (argc < 5) return 2;
    const wchar_t *mode = argv[1];
    SetEnvironmentVariableW(L"PATH", argv[2]);
    SetCurrentDirectoryW(L"C:\\");
    if (wcscmp(mode, L"default") == 0) SetDefaultDllDirectories(LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (wcscmp(argv[4], L"-") != 0) {
        wchar_t dirs[4096]; wcsncpy(dirs, argv[4], 4095); dirs[4095] = 0;
        wchar_t *ctx = NULL;
        for (wchar_t *d = wcstok_s(dirs, L";", &ctx); d; d = wcstok_s(NULL, L";", &ctx)) AddDllDirectory(d);
    }
    if (wcscmp(argv[3], L"-") != 0) {  /* torch/__init__.py: preload torch\lib\*.dll */
        wchar_t pattern[1024]; swprintf(pattern, 1024, L"%ls\\*.dll", argv[3]);
        WIN32_FIND_DATAW fd; HANDLE f = FindFirstFileW(pattern, &fd);
        wchar_t names[256][260]; int n = 0;
        if (f != INVALID_HANDLE_VALUE) { do { wcscpy(names[n++], fd.cFileName); } while (n < 256 && FindNextFileW(f, &fd)); FindClose(f); }
        for (int i = 0; i < n; i++) for (int j = i + 1; j < n; j++)
            if (_wcsicmp(names[j], names[i]) < 0) { wchar_t t[260]; wcscpy(t, names[i]); wcscpy(names[i], names[j]); wcscpy(names[j], t); }
        for (int i = 0; i < n; i++) {
            wchar_t full[1024]; swprintf(full, 1024, L"%ls\\%ls", argv[3], names[i]);
            if (!LoadLibraryExW(full, NULL, 0x1100) && GetLastError() == 126) {
                wchar_t path[8192]; swprintf(path, 8192, L"%ls;%ls", argv[4], argv[2]);
                SetEnvironmentVariableW(L"PATH", path);
                LoadLibraryW(full);
            }
        }
    }
    /* +name: as ctypes.CDLL(name) on Python 3.8+ (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS); *path: as Python loads an
       extension module (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR); !path:
       LOAD_WITH_ALTERED_SEARCH_PATH. */
    for (int i = 5; i < argc; i++) {
        wchar_t mark = argv[i][0];
        const wchar_t *name = (mark == L'+' || mark == L'*' || mark == L'!') ? argv[i] + 1 : argv[i];
        DWORD flags = mark == L'+' ? 0x1000 : mark == L'*' ? 0x1100 : mark == L'!' ? LOAD_WITH_ALTERED_SEARCH_PATH : 0;
        HMODULE h = LoadLibraryExW(name, NULL, flags);
        if (h) { wchar_t buf[1024]; GetModuleFileNameW(h, buf, 1024); wprintf(L"LOAD\t%ls\tOK\t%ls\n", name, buf); }
        else wprintf(L"LOAD\t%ls\tERR\t%lu\n", name, GetLastError());
        fflush(stdout);
    }
    for (int i = 5; i < argc; i++)
        show((argv[i][0] == L'+' || argv[i][0] == L'*' || argv[i][0] == L'!') ? argv[i] + 1 : argv[i]);
    return 0;
}
"""


def build_loadtest(out: Path) -> Path:
    src = out / "loadtest.c"
    src.write_text(LOADTEST)
    exe = out / "loadtest.exe"
    subprocess.run([GCC, "-municode", "-O1", "-o", str(exe), str(src)], check=True, capture_output=True)
    return exe
