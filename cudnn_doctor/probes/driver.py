"""Driver and GPUs: kernel module, user-space libraries, NVML (in a child), and CUDA_VISIBLE_DEVICES."""
from __future__ import annotations

import os
import re
from typing import List, Optional

from ..model import DriverFacts, GpuFacts, Resolution, VisibilityFacts
from ..readers.version_files import parse_kernel_module
from ..versions import decode_cuda, soname_version

_COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}
_WATCHED_MODULES = ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nouveau", "nova_core", "nova_drm")


def _file_version(res: Resolution) -> Optional[str]:
    """The driver version in a resolved library's real file name (libcuda.so.580.95.05)."""
    if not res.realpath:
        return None
    version = soname_version(os.path.basename(res.realpath))
    # libcuda.so.1 as a plain file (WSL copies, stubs) carries no driver version; driver releases are >= 100.
    return version if version and int(version.split(".")[0]) >= 100 else None


def probe(ctx) -> None:
    host, facts = ctx.host, DriverFacts()
    ctx.facts.driver = facts
    text = host.read_text("/proc/driver/nvidia/version")
    ctx.searched("driver", "/proc/driver/nvidia/version")
    if text:
        facts.kernel_module_version = parse_kernel_module(text)
        facts.kernel_module_source = "/proc/driver/nvidia/version"
    if not facts.kernel_module_version:
        sysver = host.read_text("/sys/module/nvidia/version")
        ctx.searched("driver", "/sys/module/nvidia/version")
        if sysver and sysver.strip():
            facts.kernel_module_version = sysver.strip()
            facts.kernel_module_source = "/sys/module/nvidia/version"
    modules = host.read_text("/proc/modules", limit=1 << 20)
    if modules is not None:
        names = [line.split()[0] for line in modules.splitlines() if line.strip()]
        facts.loaded_modules = [m for m in names if m in _WATCHED_MODULES]
        facts.kernel_module_loaded = "nvidia" in names
        facts.modules_listed = True
    elif facts.kernel_module_version:
        facts.kernel_module_loaded = True
    _pci_devices(ctx, facts)
    kernel = (host.read_text("/proc/sys/kernel/osrelease") or "").strip()
    if kernel:
        facts.module_files = host.glob("/lib/modules/%s/*/nvidia*.ko*" % kernel) + host.glob(
            "/lib/modules/%s/*/*/nvidia*.ko*" % kernel) + host.glob("/lib/modules/%s/*/*/*/nvidia*.ko*" % kernel)
        ctx.searched("driver", "/lib/modules/%s/**/nvidia*.ko*" % kernel)
    for var in host.glob("/sys/firmware/efi/efivars/SecureBoot-*"):
        data = host.read_bytes(var, 64)
        if data:
            facts.secure_boot = data[-1] == 1  # 4 attribute bytes, then the value

    nvml = ctx.loader.resolve("libnvidia-ml.so.1")
    libcuda = ctx.loader.resolve("libcuda.so.1")
    ctx.facts.loader.resolved["libnvidia-ml.so.1"] = nvml
    ctx.facts.loader.resolved["libcuda.so.1"] = libcuda
    facts.libnvml_path, facts.libnvml_file_version = nvml.path, _file_version(nvml)
    facts.libcuda_path, facts.libcuda_file_version = libcuda.path, _file_version(libcuda)
    ctx.searched("driver", "libnvidia-ml.so.1 and libcuda.so.1 through the loader's search path")

    tasks: List[dict] = []
    # Live machine: let NVML find itself if our search did not (a loader quirk must not hide a driver).
    if nvml.path or host.is_live:
        tasks.append({"op": "nvml", "lib": str(host.real(nvml.path)) if nvml.path else None})
    if libcuda.path:
        tasks.append({"op": "cuda_driver", "lib": str(host.real(libcuda.path))})
    ctx.native("driver", tasks, lambda results: _apply_native(ctx, tasks, results))


def _pci_devices(ctx, facts: DriverFacts) -> None:
    """NVIDIA display/3D controllers on the PCI bus and the kernel driver bound to each (A1, A3)."""
    host = ctx.host
    for dev in host.glob("/sys/bus/pci/devices/*"):
        vendor = (host.read_text(dev + "/vendor", 64) or "").strip()
        if vendor != "0x10de":
            continue
        cls = (host.read_text(dev + "/class", 64) or "").strip()
        if not cls.startswith(("0x0300", "0x0302")):
            continue
        target = host.readlink(dev + "/driver")
        facts.nvidia_pci_devices.append({
            "address": os.path.basename(dev),
            "class": cls,
            "device": (host.read_text(dev + "/device", 64) or "").strip() or None,
            "driver": os.path.basename(target) if target else None,
        })
    ctx.searched("driver", "/sys/bus/pci/devices/*/{vendor,class,driver}")


def _as_seen_inside(ctx, text: Optional[str]) -> Optional[str]:
    """A loader message names doctor-side paths (/mnt/image/usr/lib/...); the report names them as inside ones."""
    root = str(ctx.host.root)
    return text.replace(root, "") if text and root != "/" else text


def _apply_native(ctx, tasks: List[dict], results: List[dict]) -> None:
    facts = ctx.facts.driver
    for task, res in zip(tasks, results):
        failure = res.get("crashed") and "crashed (%s)" % res["crashed"] or (
            res.get("timeout") and "did not answer within %ss" % res["timeout"])
        if task["op"] == "nvml":
            source = "nvml:%s" % (ctx.facts.loader.resolved["libnvidia-ml.so.1"].path or "libnvidia-ml.so.1")
            if failure:
                facts.nvml_error = "NVML %s" % failure
                continue
            if res.get("init_error") or res.get("error"):
                facts.nvml_error = _as_seen_inside(ctx, res.get("init_error") or res.get("error"))
                facts.nvml_error_code = res.get("init_error_code")
                continue
            if res.get("driver_version"):
                facts.version, facts.version_source = res["driver_version"], source
            if res.get("cuda_driver_version"):
                facts.cuda_version = decode_cuda(res["cuda_driver_version"])
                facts.cuda_version_source = source
            ctx.facts.gpus = [_gpu(g, source) for g in res.get("gpus", [])]
        elif task["op"] == "cuda_driver":
            if failure or res.get("error"):
                facts.libcuda_error = failure or _as_seen_inside(ctx, res.get("error"))
                continue
            if not facts.cuda_version and res.get("status") == 0 and res.get("version"):
                facts.cuda_version = decode_cuda(res["version"])
                facts.cuda_version_source = "cuDriverGetVersion:%s" % facts.libcuda_path
    # Without NVML, the library file names still say which driver is installed.
    if not facts.version and facts.libcuda_file_version:
        facts.version, facts.version_source = facts.libcuda_file_version, "file name:%s" % facts.libcuda_path
    if not facts.version and facts.kernel_module_version:
        facts.version, facts.version_source = facts.kernel_module_version, facts.kernel_module_source


def _gpu(raw: dict, source: str) -> GpuFacts:
    gpu = GpuFacts(index=int(raw.get("index", 0)), source=source)
    gpu.name = raw.get("name")
    gpu.uuid = raw.get("uuid")
    if raw.get("cc"):
        gpu.compute_capability = "%d.%d" % tuple(raw["cc"][:2])
    if raw.get("memory"):
        gpu.memory_total_mib = raw["memory"]["total"] // (1 << 20)
        gpu.memory_free_mib = raw["memory"]["free"] // (1 << 20)
    if raw.get("mig") is not None:
        gpu.mig_mode = bool(raw["mig"][0])
        gpu.mig_devices = list(raw.get("mig_devices", []))
    if raw.get("compute_mode") is not None:
        gpu.compute_mode = _COMPUTE_MODES.get(int(raw["compute_mode"]), str(raw["compute_mode"]))
    gpu.running_processes = raw.get("processes")
    return gpu


def resolve_loader(ctx) -> None:
    """Which file a plain process gets for each soname that decides a CUDA/cuDNN stack."""
    facts = ctx.facts
    # JavaCPP presets (<cuda>-<cudnn>-<javacpp>) load these by soname from the system search path.
    presets = [p["version"].split("-") for p in facts.java.javacpp_presets]
    preset_cudnn = {int(p[1].split(".")[0]) for p in presets if len(p) >= 3 and p[1].split(".")[0].isdigit()}
    majors = sorted({c.major for c in facts.cudnn if c.major} | {9} | preset_cudnn, reverse=True)
    names = ["libcudnn.so.%d" % m for m in majors]
    # The runtime sonames programs ask for: each toolkit's own (from its file), plus the ones the driver's
    # CUDA and JavaCPP presets imply (their naming is NVIDIA data, in compat/cudnn_layout.toml).
    names += sorted({t.cudart_soname for t in facts.toolkits if t.cudart_soname}, reverse=True)
    wanted = [facts.driver.cuda_version] + [p[0] for p in presets if len(p) >= 3]
    if any(wanted):
        compat = ctx.knowledge
        names += [n for n in dict.fromkeys(compat.cudart_soname(v) for v in wanted if v) if n]
    names.append("libcuda.so")  # unversioned: cuDNN 8 dlopens it by this name (catalogue F3)
    if 8 in majors:
        names.append("libnvrtc.so")  # cuDNN 8 runtime-compiled kernels dlopen it unversioned (F2)
    names += [n for n in getattr(ctx, "also_resolve", ()) if n not in names]
    for name in names:
        if name not in facts.loader.resolved:
            facts.loader.resolved[name] = ctx.loader.resolve(name)


def parse_visible(value: Optional[str], gpus: List[GpuFacts]) -> VisibilityFacts:
    """Apply CUDA's rules: a comma list of indices or UUID prefixes; parsing stops at the first bad token."""
    vis = VisibilityFacts(cuda_visible_devices=value)
    if value is None:
        return vis
    tokens = [t.strip() for t in value.split(",")]
    indices: List[int] = []
    for token in tokens:
        if token == "":
            break
        if re.fullmatch(r"-?\d+", token):
            idx = int(token)
            if idx < 0 or (gpus and idx >= len(gpus)):
                vis.problems.append("'%s' is not a GPU index on this machine (%d GPU(s)); CUDA stops reading "
                                    "the list there" % (token, len(gpus)))
                break
            if idx in indices:
                vis.problems.append("index %d is listed twice" % idx)
                break
            indices.append(idx)
            continue
        match = [g.index for g in gpus if g.uuid and (g.uuid.startswith(token) or g.uuid == token)]
        mig = [g.index for g in gpus for m in g.mig_devices if m.startswith(token)]
        if match or mig:
            indices.append((match or mig)[0])
            continue
        vis.problems.append("'%s' matches no GPU or MIG UUID on this machine; CUDA stops reading the list "
                            "there" % token)
        break
    vis.visible_indices = indices
    return vis


def apply_visibility(ctx) -> None:
    facts = ctx.facts
    vis = parse_visible(ctx.host.getenv("CUDA_VISIBLE_DEVICES"), facts.gpus)
    vis.nvidia_visible_devices = ctx.host.getenv("NVIDIA_VISIBLE_DEVICES")
    facts.visibility = vis
    for gpu in facts.gpus:
        gpu.visible = True if vis.visible_indices is None else gpu.index in vis.visible_indices
