"""What the failure-catalogue checks read from files: nvidia_uvm, NVSwitch/Fabric Manager, the image's CUDA
requirement, /dev/char links, cuDNN local repos, apt history, and the CUDA libraries TensorFlow/ONNX Runtime load."""
from __future__ import annotations

import os
import re
import time
from typing import Dict, List, Optional

WATCHED_PACKAGES = ("Package: nvidia-fabricmanager", "Package: libcudnn", "Package: cudnn")


def _installed_packages(host) -> Dict[str, str]:
    """Installed dpkg packages the checks ask about (cuDNN, Fabric Manager): name -> version."""
    text = host.read_text("/var/lib/dpkg/status", limit=64 << 20) or ""
    out: Dict[str, str] = {}
    for block in text.split("\n\n"):
        if not block.lstrip("\n").startswith(WATCHED_PACKAGES):
            continue
        name = re.search(r"^Package: (\S+)", block, re.M)
        status = re.search(r"^Status: (.+)$", block, re.M)
        version = re.search(r"^Version: (\S+)", block, re.M)
        if name and status and status.group(1).strip().endswith("installed") and "not-installed" not in \
                status.group(1):
            out[name.group(1)] = version.group(1) if version else ""
    return out


def _nvswitches(ctx) -> List[str]:
    host = ctx.host
    found = list(host.glob("/proc/driver/nvidia-nvswitch/devices/*"))
    for dev in host.glob("/sys/bus/pci/devices/*"):
        if (host.read_text(dev + "/vendor", 64) or "").strip() == "0x10de" and \
                (host.read_text(dev + "/class", 64) or "").strip().startswith("0x0680"):
            found.append(dev)
    return found


def _require_cuda(ctx) -> Optional[Dict[str, str]]:
    """NVIDIA_REQUIRE_CUDA of the image: this environment (inside the container, or --env), else the container's
    first process as seen through --root /proc/<pid>/root."""
    value = ctx.host.getenv("NVIDIA_REQUIRE_CUDA")
    if value:
        return {"value": value, "source": "environment"}
    raw = ctx.host.read_bytes("/proc/1/environ", limit=1 << 20)
    for item in (raw or b"").split(b"\0"):
        if item.startswith(b"NVIDIA_REQUIRE_CUDA="):
            return {"value": item.split(b"=", 1)[1].decode("utf-8", "replace"), "source": "/proc/1/environ"}
    return None


def _dev_char(ctx) -> Dict[str, object]:
    host = ctx.host
    links = [n for n in host.listdir("/dev/char") if "nvidia" in (host.readlink("/dev/char/" + n) or "")]
    daemon = host.read_text("/etc/docker/daemon.json", limit=1 << 16) or ""
    return {"dev_char": host.is_dir("/dev/char"), "nvidia_links": len(links),
            "docker": host.lexists("/usr/bin/dockerd"),
            "systemd_cgroup": "native.cgroupdriver=systemd" in daemon or host.lexists("/sys/fs/cgroup/cgroup.controllers"),
            "nvidia_ctk": "/usr/bin/nvidia-ctk" if host.lexists("/usr/bin/nvidia-ctk") else None,
            "container_toolkit": host.lexists("/usr/bin/nvidia-container-runtime") or host.lexists(
                "/usr/bin/nvidia-container-cli")}


def _local_repos(ctx) -> List[Dict[str, object]]:
    host = ctx.host
    out = []
    for repo in host.glob("/var/cudnn-local-repo-*"):
        keyrings = [os.path.basename(k) for k in host.glob(repo + "/*keyring.gpg")]
        debs = sorted({n.split("_")[0] for n in host.listdir(repo) if n.endswith(".deb")})
        out.append({"repo": repo, "keyring": keyrings[0] if keyrings else None, "packages": debs})
    return out


def _apt_upgrades_since_boot(ctx) -> List[Dict[str, object]]:
    host = ctx.host
    stat = host.read_text("/proc/stat", limit=1 << 20) or ""
    m = re.search(r"^btime (\d+)", stat, re.M)
    if not m:
        return []
    boot = int(m.group(1))
    out: List[Dict[str, object]] = []
    for entry in (host.read_text("/var/log/apt/history.log", limit=8 << 20) or "").split("\n\n"):
        if "nvidia" not in entry:  # every driver package name below has it: the other entries cannot count
            continue
        start = re.search(r"^Start-Date: (\d{4}-\d\d-\d\d)\s+(\d\d:\d\d:\d\d)", entry, re.M)
        lines = re.findall(r"^(?:Upgrade|Install): (.+)$", entry, re.M)
        if not start or not lines:
            continue
        names = sorted({m.split(":")[0] for line in lines for m in re.findall(r"([\w.+-]+(?::[\w-]+)?) \(", line)})
        driver = [n for n in names if n.startswith(("libnvidia-", "nvidia-driver", "nvidia-kernel", "nvidia-dkms",
                                                      "nvidia-utils", "nvidia-compute"))]
        if not driver:
            continue
        when = time.mktime(time.strptime("%s %s" % start.groups(), "%Y-%m-%d %H:%M:%S"))  # the log is local time
        if when > boot:
            out.append({"date": "%s %s" % start.groups(), "packages": driver})
    return out


def _framework_libraries(ctx) -> Dict[str, Dict[str, Optional[str]]]:
    """Where each CUDA library TensorFlow dlopens and ONNX Runtime's CUDA provider links would come from (G3, G6)."""
    out: Dict[str, Dict[str, Optional[str]]] = {}
    for fw in ctx.facts.python.frameworks:
        name = fw.name.lower()
        if not fw.cuda_build or not fw.consumer_library:
            continue
        info = ctx.loader.elf(fw.consumer_library, dynamic=True)
        if name.startswith("onnxruntime"):
            wanted = [n for n in info.needed if n.startswith(("libcu", "libnvJitLink", "libnvrtc"))]
        elif name.startswith(("tensorflow", "tf-nightly")) and fw.cuda_version:
            major = fw.cuda_version.split(".")[0]
            wanted = ctx.knowledge.tensorflow_sonames(major)
        else:
            continue
        origin = os.path.dirname(fw.consumer_library)
        found: Dict[str, Optional[str]] = {}
        for soname in wanted:
            res = ctx.loader.resolve(soname, runpath=info.runpath, rpath=info.rpath, origin=origin)
            found[soname] = None if res.error else res.path
        out["%s %s" % (fw.name, fw.version)] = found
    return out


def probe(ctx) -> None:
    host, state = ctx.host, ctx.facts.machine_state
    installed = _installed_packages(host)
    state["nvidia_modprobe"] = host.lexists("/usr/bin/nvidia-modprobe")
    state["nvswitches"] = _nvswitches(ctx)
    if state["nvswitches"]:
        fm = {p: v for p, v in installed.items() if p.startswith("nvidia-fabricmanager")}
        state["fabric_manager"] = {
            "packages": fm, "binary": host.lexists("/usr/bin/nv-fabricmanager"),
            "enabled": bool(host.glob("/etc/systemd/system/*.wants/nvidia-fabricmanager.service"))}
    state["require_cuda"] = _require_cuda(ctx)
    state["devices"] = _dev_char(ctx)
    state["cudnn_local_repos"] = _local_repos(ctx)
    state["cudnn_packages"] = sorted(p for p in installed if p.startswith(("libcudnn", "cudnn")))
    state["driver_upgrades_since_boot"] = _apt_upgrades_since_boot(ctx)
    state["framework_libraries"] = _framework_libraries(ctx)
    for place in ("/proc/driver/nvidia-nvswitch", "/var/lib/dpkg/status", "/proc/1/environ", "/dev/char",
                  "/var/cudnn-local-repo-*", "/var/log/apt/history.log", "/proc/stat"):
        ctx.searched("machine-state", place)  # one place each: `-vv` lists them, and each counts once
