"""The node beyond its software: each GPU's health and the links between GPUs (NVML, in the native child), the
driver's Xid events since boot (the kernel log), the IOMMU and PCIe ACS on the GPUs' paths (sysfs), and with
check --ready a kernel run on every GPU (native child)."""
from __future__ import annotations

import os
import re
from typing import Callable, Dict, List, Optional, Tuple

from ..host import Host, gpu_uuid, health_task, ready_task
from ..model_node import GpuHealth, GpuPair, GpuReady, NodeFacts
from ..readers.kernel_log import xid_events
from ..readers.pci_config import acs_control

# nvml.h nvmlGpuTopologyLevel_t, by the words nvidia-smi topo -m prints for them.
_TOPOLOGY = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
# nvml.h nvmlGpuP2PStatus_t, by nvidia-smi topo -p2p's legend (4, disabled by a registry key, has no word there).
_P2P = {0: "OK", 1: "CNS", 2: "GNS", 3: "TNS", 4: "DR", 5: "NS", 6: "U"}
_NO_DEVICE = 100  # cuda.h CUDA_ERROR_NO_DEVICE
_BDF = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def bus_id(value: Optional[str]) -> Optional[str]:
    """A PCI address as sysfs spells it ("0000:18:00.0") from NVML's or CUDA's ("00000000:18:00.0")."""
    return value[-12:].lower() if value and len(value) >= 12 else value


def probe(ctx) -> None:
    host, node = ctx.host, ctx.facts.node
    nvml = ctx.facts.loader.resolved.get("libnvidia-ml.so.1")
    if (nvml and nvml.path) or host.is_live:
        task = health_task(str(host.real(nvml.path)) if nvml and nvml.path else None, getattr(ctx, "ready", False))
        ctx.native("node-health", [task], lambda results: _apply_health(node, results))
    libcuda = ctx.facts.driver.libcuda_path
    if getattr(ctx, "ready", False) and libcuda:
        task = gpu_ready_task(ctx, str(host.real(libcuda)))
        ctx.native("ready", [task], lambda results: _apply_ready(node, task, results[0]))
    _kernel_log(ctx, node)
    gpus = [d["address"] for d in ctx.facts.driver.nvidia_pci_devices]
    _iommu(ctx, node, gpus)
    if len(gpus) > 1:
        _acs(ctx, node, gpus)


def _kernel_log(ctx, node: NodeFacts) -> None:
    """Xid events since boot from /dev/kmsg, else the journal (dmesg_restrict closes kmsg to users); kernel_log
    names the source read, None when neither could be."""
    sources: List[Tuple[str, Callable[[Host], Optional[str]]]] = [("/dev/kmsg", read_kmsg)]
    if ctx.host.is_live:  # a --root tree has no running kernel, so no journal of this boot
        sources.append(("journalctl -k -b", read_journal))
    for source, read in sources:
        ctx.searched("node", source)
        log = read(ctx.host)
        if log is not None:
            node.kernel_log, node.xid_events = source, xid_events(log)
            return


def read_kmsg(host: Host, limit: int = 8 << 20) -> Optional[str]:
    """The kernel's messages since boot, one record a line, from /dev/kmsg (a device that never ends, read without
    blocking). Under --root a regular file /dev/kmsg holds them (fake roots); None when the log cannot be read
    (dmesg_restrict for a user, a container without it)."""
    if not host.is_live:
        return host.read_text("/dev/kmsg", limit) if host.regular_file_kind("/dev/kmsg") is None else None
    data = host.read_records("/dev/kmsg", limit)
    return None if data is None else data.decode("utf-8", "replace")


def read_journal(host: Host, timeout: float = 3.0, limit: int = 8 << 20) -> Optional[str]:
    """The kernel's messages since this boot from the systemd journal (journalctl -k -b), for a user who may read
    the journal (groups adm, systemd-journal) where /dev/kmsg is closed (kernel.dmesg_restrict=1). None when
    journalctl is missing, fails, overruns ``timeout`` or shows no kernel message (no right to see them), and
    always under --root: a tree has no running kernel (Host.run_program runs nothing there)."""
    done = host.run_program("journalctl", ["-k", "-b", "-q", "--no-pager", "-o", "short-monotonic"], timeout)
    if done is None:
        return None
    status, output = done
    text = output[:limit].decode("utf-8", "replace")
    shown = [line for line in text.splitlines() if line.strip() and not line.startswith("--")]
    return text if status == 0 and shown else None


def listed_gpus(host: Host) -> List[Tuple[str, Optional[str]]]:
    """The GPUs the NVIDIA driver lists in /proc/driver/nvidia/gpus, in PCI bus order: (bus id, UUID or None
    while the driver does not know it)."""
    listed = sorted(os.path.basename(path).lower() for path in host.glob("/proc/driver/nvidia/gpus/*"))
    return [(address, gpu_uuid(host.read_text("/proc/driver/nvidia/gpus/%s/information" % address, 4096) or ""))
            for address in listed]


def gpu_ready_task(ctx, libcuda: str) -> dict:
    """The readiness task of every GPU the driver offers here, in PCI bus order: the child finds each by its bus id,
    and where it must prove one alone, makes only that GPU visible to CUDA by the UUID the driver publishes
    (robust to GPUs CUDA skips), else by its place in bus order. Where no GPU is listed, one per device node."""
    listed = listed_gpus(ctx.host)
    ctx.searched("node", "/proc/driver/nvidia/gpus/*/information")
    if not listed:  # an older driver or a masked /proc: the GPUs bound to nvidia on the PCI bus
        listed = [(d["address"], None) for d in sorted(ctx.facts.driver.nvidia_pci_devices, key=lambda d: d["address"])
                  if d.get("driver") == "nvidia"]
    count = len(ctx.host.glob("/dev/nvidia[0-9]*"))
    return ready_task(libcuda, listed) or {"op": "cuda_ready", "lib": libcuda,
                                           "gpus": [{"index": i} for i in range(max(count, 1))]}


def _failure(res: dict) -> Optional[str]:
    if res.get("crashed"):
        return "crashed (%s)" % res["crashed"]
    if res.get("timeout"):
        return "did not answer within %ss" % res["timeout"]
    return res.get("init_error") or res.get("error")


def _apply_health(node: NodeFacts, results: List[dict]) -> None:
    res: dict = results[0] if results else {"error": "not run"}
    failed = _failure(res)
    if failed:
        node.health_error = failed
        return
    node.gpus = [_gpu(raw) for raw in res.get("gpus", [])]
    by_bus = {g.bus_id: g.index for g in node.gpus if g.bus_id}
    for raw in res.get("pairs", []):
        a, b = raw["gpus"]
        pair = GpuPair(gpus=[a, b], p2p_read=_P2P.get(raw.get("p2p_read"), raw.get("p2p_read")),
                       p2p_nvlink=_P2P.get(raw.get("p2p_nvlink"), raw.get("p2p_nvlink")))
        pair.link = _link(node.gpus[a], node.gpus[b], pair, by_bus, raw.get("common_ancestor"))
        node.pairs.append(pair)


def _gpu(raw: dict) -> GpuHealth:
    gpu = GpuHealth(index=int(raw["index"]), bus_id=bus_id(raw.get("bus_id")), lost=bool(raw.get("lost")))
    gpu.persistence_mode = raw.get("persistence_mode")
    if raw.get("ecc_mode"):
        gpu.ecc_enabled, gpu.ecc_pending = raw["ecc_mode"]
    gpu.ecc_volatile_uncorrected = raw.get("ecc_volatile_uncorrected")
    gpu.remapped_rows = raw.get("remapped_rows")
    gpu.retired_pages_pending = raw.get("retired_pages_pending")
    gpu.clock_events = raw.get("clock_events")
    gpu.pcie = dict(raw.get("pcie") or {})
    links = raw.get("nvlinks") or []
    gpu.nvlinks = len(links)
    gpu.nvlinks_down = [entry["link"] for entry in links if not entry.get("active")]
    gpu.nvlink_errors = {k: int(v) for k, v in (raw.get("nvlink_errors") or {}).items()}
    for entry in links:
        far = bus_id(entry.get("remote_bus_id"))
        if entry.get("active") and far:
            gpu.nvlink_peers[far] = gpu.nvlink_peers.get(far, 0) + 1
    gpu.fabric = raw.get("fabric")
    gpu.errors = {k: v for k, v in (raw.get("errors") or {}).items() if k != "lost"}
    return gpu


def _link(a: GpuHealth, b: GpuHealth, pair: GpuPair, by_bus: Dict[str, int], ancestor: Optional[int]) -> Optional[str]:
    """NV<links> where NVLink joins the two (directly, or through NVSwitches: every link up), else the PCIe level."""
    direct = a.nvlink_peers.get(b.bus_id or "", 0)
    if not direct and pair.p2p_nvlink == "OK":  # through NVSwitches (whose far ends NVML may not name)
        direct = min(_links_off_gpus(a, by_bus), _links_off_gpus(b, by_bus))
    if direct:
        return "NV%d" % direct
    return _TOPOLOGY.get(ancestor) if isinstance(ancestor, int) else None


def _links_off_gpus(gpu: GpuHealth, by_bus: Dict[str, int]) -> int:
    """The GPU's active links that do not end at another GPU: those to NVSwitches."""
    return gpu.nvlinks - len(gpu.nvlinks_down) - sum(n for bus, n in gpu.nvlink_peers.items() if bus in by_bus)


def _apply_ready(node: NodeFacts, task: dict, result: dict) -> None:
    node.ready = []
    nvml = {str(g.bus_id): g.index for g in node.gpus if g.bus_id}  # NVML's numbers, where its health read answered
    # The child's answer per GPU; a child that died or overran as a whole gives each GPU its reason.
    answers = result.get("gpus") or [result] * len(task["gpus"])
    for gpu, res in zip(task["gpus"], answers):
        res = res or {"error": "no answer"}
        address: str = gpu.get("bus_id") or ""
        if address and nvml and address not in nvml:
            continue  # a GPU the driver lists that NVML does not offer here (hidden from this container)
        if not address and res.get("status") == _NO_DEVICE and gpu["index"] >= max(len(node.gpus), 1):
            continue  # a device node counted beyond the GPUs NVML has, with no GPU behind it
        failed = None if "ok" in res else (_failure(res) or "no answer")
        node.ready.append(GpuReady(
            index=nvml.get(address, int(gpu["index"])), ok=bool(res.get("ok")),
            bus_id=address or bus_id(res.get("bus_id")), step=res.get("step") or ("child" if failed else None),
            error=failed or res.get("error_name") or (
                "CUresult %s" % res["status"] if res.get("status") is not None else res.get("error")),
            ms=res.get("ms"), phases_ms=dict(res.get("phases_ms") or {})))


def _iommu(ctx, node: NodeFacts, gpus: List[str]) -> None:
    """Whether DMA from the GPUs is translated (an IOMMU domain of type DMA) or passed through (identity)."""
    host = ctx.host
    cmdline = (host.read_text("/proc/cmdline", 8192) or "").split()
    node.iommu = {
        "cmdline": [arg for arg in cmdline if arg.startswith(("iommu", "intel_iommu", "amd_iommu"))],
        "units": [os.path.basename(u) for u in host.glob("/sys/class/iommu/*")],
        "gpu_domains": {},
    }
    for address in gpus:
        group = host.readlink("/sys/bus/pci/devices/%s/iommu_group" % address)
        if group:
            kind = host.read_text("/sys/kernel/iommu_groups/%s/type" % os.path.basename(group), 64)
            if kind:
                node.iommu["gpu_domains"][address] = kind.strip()
    for place in ("/proc/cmdline", "/sys/class/iommu", "/sys/kernel/iommu_groups/*/type"):
        ctx.searched("node", place)


def _acs(ctx, node: NodeFacts, gpus: List[str]) -> None:
    """ACS controls switched on in the PCIe switches between the GPUs and their root ports (lspci's ACSCtl)."""
    host = ctx.host
    seen = set()
    for address in gpus:
        path, _ = host.realpath("/sys/bus/pci/devices/%s" % address)
        bridges = [part for part in path.split("/") if _BDF.match(part)][1:-1]  # below the root port, above the GPU
        for bridge in bridges:
            if bridge in seen:
                continue
            seen.add(bridge)
            config = host.read_bytes("/sys/bus/pci/devices/%s/config" % bridge, 4096) or b""
            if len(config) <= 64:
                node.acs_unreadable = True
                continue
            control = acs_control(config)
            if control:
                node.acs.append({"bridge": bridge, "gpu": address, "control": control})
    ctx.searched("node", "/sys/bus/pci/devices/*/config")
