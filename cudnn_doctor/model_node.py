"""The facts about the node beyond its software: each GPU's health, the links between GPUs, the kernel's GPU events,
the IOMMU and PCIe ACS, the container runtime, and (check --ready) whether CUDA really runs on each GPU."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class GpuHealth:
    """What NVML says of one GPU's health (None: NVML could not say)."""

    index: int
    bus_id: Optional[str] = None  # "0000:18:00.0", as sysfs spells it
    lost: bool = False  # NVML_ERROR_GPU_IS_LOST: the GPU fell off the bus
    persistence_mode: Optional[bool] = None
    ecc_enabled: Optional[bool] = None
    ecc_pending: Optional[bool] = None  # the mode after the next reset
    ecc_volatile_uncorrected: Optional[int] = None  # since the driver loaded
    remapped_rows: Optional[Dict[str, Any]] = None  # {correctable, uncorrectable, pending, failed} (Ampere and later)
    retired_pages_pending: Optional[bool] = None  # older GPUs: a page retirement waits for a reset
    clock_events: Optional[List[str]] = None  # why the clocks are held down: hw_slowdown, sw_thermal_slowdown, ...
    pcie: Dict[str, Optional[int]] = field(default_factory=dict)  # gen, gen_max, width, width_max
    nvlinks: int = 0  # links the GPU has
    nvlinks_down: List[int] = field(default_factory=list)  # those not up
    nvlink_errors: Dict[str, int] = field(default_factory=dict)  # counter -> sum over the links
    nvlink_peers: Dict[str, int] = field(default_factory=dict)  # bus id at the far end -> links
    fabric: Optional[Dict[str, int]] = None  # NVLink fabric registration {state, status} (NVSwitch systems)
    errors: Dict[str, str] = field(default_factory=dict)  # read -> NVML's reason


@dataclass
class GpuPair:
    """Two GPUs: whether CUDA P2P works between them, and how they are joined (nvidia-smi topo -m's words)."""

    gpus: List[int]
    p2p_read: Optional[str] = None  # OK, CNS, GNS, TNS, NS, U (nvidia-smi topo -p2p r)
    p2p_nvlink: Optional[str] = None
    link: Optional[str] = None  # NV18, PIX, PXB, PHB, NODE, SYS


@dataclass
class GpuReady:
    """check --ready on one GPU: cuInit, a context, the shipped kernel, its result."""

    index: int
    ok: bool = False
    bus_id: Optional[str] = None
    step: Optional[str] = None  # the first step that failed
    error: Optional[str] = None  # CUDA's error name, or what stopped the child
    ms: Optional[float] = None
    phases_ms: Dict[str, float] = field(default_factory=dict)  # load, init, context, module, kernel


@dataclass
class NodeFacts:
    """The node beyond the software: each GPU's health, the GPUs between them, the kernel log, IOMMU and ACS, the
    container runtime, and (with check --ready) whether CUDA runs a kernel on each GPU."""

    health_error: Optional[str] = None  # NVML's health task failed as a whole
    gpus: List[GpuHealth] = field(default_factory=list)
    pairs: List[GpuPair] = field(default_factory=list)
    kernel_log: Optional[str] = None  # where the Xid events were read (None: not readable)
    xid_events: List[Dict[str, Any]] = field(default_factory=list)  # {kind: Xid|SXid, code, pci, count, text}
    iommu: Dict[str, Any] = field(default_factory=dict)  # {cmdline: [...], units: [...], gpu_domains: {bus: type}}
    acs: List[Dict[str, Any]] = field(default_factory=list)  # {bridge, gpu, control: [SrcValid, ReqRedir, ...]}
    acs_unreadable: bool = False  # config space past 64 bytes needs root
    container: Dict[str, Any] = field(default_factory=dict)  # toolkit, runtimes, cdi specs
    ready: Optional[List[GpuReady]] = None  # only with check --ready
