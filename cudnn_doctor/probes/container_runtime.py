"""The container runtime's side of the GPUs: the NVIDIA Container Toolkit, whether docker, containerd and podman
are configured to use it (their own config files), and the CDI specs that describe the GPUs to them."""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List

_BIN_DIRS = ("/usr/bin", "/usr/local/bin")
_TOOLKIT = ("nvidia-ctk", "nvidia-container-runtime", "nvidia-container-cli")
# runtime -> (its daemon or program, the config files that name the NVIDIA runtime)
_RUNTIMES = {
    "docker": ("dockerd", ["/etc/docker/daemon.json"]),
    "containerd": ("containerd", ["/etc/containerd/config.toml", "/etc/containerd/conf.d/*.toml"]),
    "podman": ("podman", ["/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json",
                          "/etc/containers/oci/hooks.d/oci-nvidia-hook.json"]),
}
_CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
_DRIVER_LIB = re.compile(r"lib(?:cuda|nvidia-ml)\.so\.(\d+\.\d+(?:\.\d+)?)")
_DEVICE_NODE = re.compile(r"(/dev/nvidia(?:\d+|ctl|-uvm-tools|-uvm|-modeset))\b")  # -uvm-tools before -uvm


def _which(host, name: str) -> str:
    return next((d + "/" + name for d in _BIN_DIRS if host.lexists(d + "/" + name)), "")


def _configured(host, runtime: str, files: List[str]) -> bool:
    for pattern in files:
        for path in host.glob(pattern):
            text = host.read_text(path, 1 << 20) or ""
            if runtime == "docker":
                try:
                    runtimes = json.loads(text).get("runtimes") or {}
                except (ValueError, AttributeError):
                    continue
                if any("nvidia" in json.dumps(v) for v in runtimes.values()):
                    return True
            elif "nvidia" in text:  # containerd's runtime entry, podman's OCI hook
                return True
    return False


def _cdi_specs(ctx) -> List[Dict[str, Any]]:
    host, out = ctx.host, []
    for folder in _CDI_DIRS:
        for path in host.glob(folder + "/*"):
            if not path.endswith((".yaml", ".yml", ".json")):
                continue
            text = host.read_text(path, 4 << 20) or ""
            if "nvidia.com/" not in text:
                continue
            out.append({"path": path,
                        "driver_versions": sorted(set(_DRIVER_LIB.findall(text))),
                        "device_nodes": sorted(set(_DEVICE_NODE.findall(text)))})
    return out


def probe(ctx) -> None:
    host = ctx.host
    container: Dict[str, Any] = {
        "toolkit": {name: path for name in _TOOLKIT for path in [_which(host, name)] if path},
        "runtimes": {},
        "cdi": _cdi_specs(ctx),
        "device_nodes": sorted(os.path.basename(p) for p in host.glob("/dev/nvidia*")),
    }
    for runtime, (program, files) in _RUNTIMES.items():
        if _which(host, program):
            container["runtimes"][runtime] = {"configured": _configured(host, runtime, files)}
    ctx.facts.node.container = container
    places = ["%s/%s" % (d, name) for d in _BIN_DIRS for name in _TOOLKIT]
    places += [f for _, files in _RUNTIMES.values() for f in files] + [d + "/*" for d in _CDI_DIRS]
    for place in places:
        ctx.searched("container-runtime", place)
