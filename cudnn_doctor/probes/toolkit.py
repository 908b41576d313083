"""CUDA toolkits: every install, where it was found, and its version with the file that said so."""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional

from ..model import ToolkitFacts
from ..readers.headers import parse_cuda_h, parse_cudart_h
from ..readers.version_files import parse_nvcc_json, parse_version_json, parse_version_txt
from ..versions import decode_cuda, soname_version
from .context import Context

LIB_SUBDIRS = ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib", "targets/aarch64-linux/lib")
INCLUDE_SUBDIRS = ("include", "targets/x86_64-linux/include", "targets/sbsa-linux/include")


def _looks_like_toolkit(host, path: str) -> bool:
    return any(host.exists("%s/%s" % (path, rel)) for rel in
               ("version.json", "version.txt", "include/cuda.h", "targets/x86_64-linux/include/cuda.h"))


def _nvcc_target(host, nvcc: str) -> str:
    """Follow a small wrapper script (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) to the real compiler."""
    real, _ = host.realpath(nvcc)
    text = host.read_text(real, limit=4096)
    if text and text.startswith("#!"):
        m = re.search(r"(/[^\s'\"]+/bin/nvcc)\b", text)
        if m and host.is_file(m.group(1)):
            return host.realpath(m.group(1))[0]
    return real


def lib_dirs(host, path: str) -> List[str]:
    """The toolkit's library folders, once each even when lib64 is a link to lib."""
    out, seen = [], set()
    for rel in LIB_SUBDIRS:
        d = "%s/%s" % (path, rel)
        if host.is_dir(d):
            real, _ = host.realpath(d)
            if real not in seen:
                seen.add(real)
                out.append(d)
    return out


def probe(ctx) -> None:
    host = ctx.host
    candidates: Dict[str, ToolkitFacts] = {}
    order: List[str] = []

    def add(path: str, via: str, kind: str = "system") -> None:
        path = path.rstrip("/") or "/"
        ctx.searched("toolkits", "%s (%s)" % (path, via))
        if not host.lexists(path):
            return
        real, dangling = host.realpath(path)
        key = real
        if key not in candidates:
            chain, _ = host.link_chain(path)
            candidates[key] = ToolkitFacts(path=path, realpath=real, link_chain=chain if len(chain) > 1 else [],
                                           dangling=dangling, kind=kind)
            order.append(key)
        if via not in candidates[key].found_via:
            candidates[key].found_via.append(via)

    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"):
        value = host.getenv(var)
        if value:
            add(value, var)
    add("/usr/local/cuda", "/usr/local/cuda")
    for d in host.env_paths("PATH"):
        nvcc = "%s/nvcc" % d.rstrip("/")
        if host.is_file(nvcc):
            top = os.path.dirname(os.path.dirname(_nvcc_target(host, nvcc)))
            if _looks_like_toolkit(host, top):
                add(top, "nvcc on PATH (%s)" % nvcc)
            else:
                ctx.searched("toolkits", "%s is not inside a toolkit folder" % nvcc)
    for path in host.glob("/usr/local/cuda-*"):
        add(path, "/usr/local/cuda-*")
    add("/opt/cuda", "/opt/cuda")
    for prefix in ([host.getenv("CONDA_PREFIX")] if host.getenv("CONDA_PREFIX") else []) + ctx.facts.python.conda_prefixes:
        if host.exists(prefix + "/bin/nvcc") or host.glob(prefix + "/lib/libcudart.so.*"):
            add(prefix, "conda prefix", kind="conda")
    # pip runtime wheels: CUDA 12 split layout nvidia/cuda_runtime, CUDA 13 unified nvidia/cu13.
    for site in ctx.facts.python.site_dirs:
        for path in host.glob(site + "/nvidia/cuda_runtime") + host.glob(site + "/nvidia/cu1[0-9]"):
            if host.glob(path + "/lib/libcudart.so.*"):
                add(path, "pip wheel", kind="pip")

    toolkits = []
    for key in order:
        tk = candidates[key]
        if tk.dangling:
            tk.error = "%s is a link to %s, which does not exist" % (tk.path, tk.link_chain[-1] if tk.link_chain else "?")
            toolkits.append(tk)
            continue
        _version(ctx, tk)
        toolkits.append(tk)
    ctx.facts.toolkits = toolkits
    tasks, owners = [], []
    for tk in toolkits:
        if tk.cudart_path:
            tasks.append({"op": "cudart", "lib": str(host.real(tk.cudart_path))})
            owners.append(tk)

    def apply(results: List[dict]) -> None:
        for tk, res in zip(owners, results):
            if res.get("status") == 0 and res.get("version"):
                tk.cudart_version = decode_cuda(res["version"])
                if not tk.version:
                    tk.version, tk.version_source = tk.cudart_version, "cudaRuntimeGetVersion"

    ctx.native("toolkits", tasks, apply)


def _version(ctx, tk: ToolkitFacts) -> None:
    host, path = ctx.host, tk.path
    if tk.kind == "pip":
        _pip_version(ctx, tk)
    has_nvcc = host.is_file(path + "/bin/nvcc")
    text = host.read_text(path + "/version.json")
    if text and has_nvcc:
        tk.nvcc_version = parse_nvcc_json(text)
    if text and not tk.version:
        version, driver = parse_version_json(text)
        if version:
            tk.version, tk.version_source, tk.bundled_driver = version, "version.json", driver
    text = host.read_text(path + "/version.txt")
    txt_version = parse_version_txt(text) if text else None
    if txt_version and not tk.version:
        tk.version, tk.version_source = txt_version, "version.txt"
    if txt_version and has_nvcc and not tk.nvcc_version and txt_version.count(".") == 2:
        tk.nvcc_version = txt_version  # CUDA <= 10.2: "CUDA Version 10.2.89" is the compiler's "V10.2.89"
    for inc in INCLUDE_SUBDIRS:
        if tk.version:
            break
        for header, parse in (("cuda.h", parse_cuda_h), ("cuda_runtime_api.h", parse_cudart_h)):
            text = host.read_text("%s/%s/%s" % (path, inc, header), limit=4 << 20)
            version = parse(text) if text else None
            if version:
                tk.version, tk.version_source = version, "%s/%s" % (inc, header)
                break
    if has_nvcc:
        tk.nvcc_path = path + "/bin/nvcc"
    for d in lib_dirs(host, path):
        names = [n for n in host.listdir(d) if n.startswith("libcudart.so.")]
        if not names:
            continue
        major_link = min(names, key=len)  # libcudart.so.13 (the soname) before libcudart.so.13.0.96
        tk.cudart_path = "%s/%s" % (d, major_link)
        tk.cudart_soname = ctx.loader.elf(tk.cudart_path, dynamic=True).soname
        real, _ = host.realpath(tk.cudart_path)
        file_version = soname_version(os.path.basename(real)) or soname_version(major_link)
        if not tk.version and file_version and file_version.count(".") >= 1:
            tk.version = ".".join(file_version.split(".")[:2])
            tk.version_source = "libcudart file name (%s)" % os.path.basename(real)
        break


def _pip_version(ctx, tk: ToolkitFacts) -> None:
    site = os.path.dirname(os.path.dirname(tk.path))
    for wheel in ctx.facts.python.nvidia_wheels:
        if wheel["location"] == site and wheel["name"] in ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11",
                                                            "nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13"):
            tk.version = ".".join(wheel["version"].split(".")[:3])
            tk.version_source = "pip %s %s" % (wheel["name"], wheel["version"])
            return


def toolkit_for(path: str, toolkits: List[ToolkitFacts], host) -> Optional[ToolkitFacts]:
    """The toolkit whose folder holds ``path`` (after links), if any."""
    real, _ = host.realpath(path)
    for tk in toolkits:
        if tk.realpath and (real == tk.realpath or real.startswith(tk.realpath.rstrip("/") + "/")):
            return tk
    return None


def read_version(host, path: str) -> "tuple[Optional[str], Optional[str]]":
    """(version, source) of the toolkit at ``path``, read as `check` reads it, outside a probe run."""
    tk = ToolkitFacts(path=path)
    _version(Context(host), tk)
    return tk.version, tk.version_source
