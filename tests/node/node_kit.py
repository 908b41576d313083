"""Fake nodes for the health, link, runtime and readiness checks: a FakeMachine with N GPUs, the fake NVML's
health, sysfs PCI devices (IOMMU groups, bridges with ACS) and the container runtime's files."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from kit import FakeMachine, Gpu, Health

# A PCIe switch under root port 00:01.0: upstream port 01:00.0, then one downstream port per GPU.
ROOT_PORT, UPSTREAM = "0000:00:01.0", "0000:01:00.0"


def node(m: FakeMachine, gpus: int = 2, health: Sequence[Health] = (), nvml: Optional[Dict[str, object]] = None,
         cuda: Optional[Dict[str, object]] = None) -> FakeMachine:
    """The driver with ``gpus`` identical H100s (healthy unless ``health`` says otherwise)."""
    m.driver("580.95.05", cuda=13000, gpus=[Gpu(uuid=gpu_uuid(i)) for i in range(gpus)],
             health=health, nvml_defines=nvml, cuda_defines=cuda)
    return m


def gpu_address(i: int) -> str:
    return "0000:%02x:00.0" % (0x10 * (i + 1))  # the bus ids the fake NVML gives


def acs_config(control: int) -> bytes:
    """4096 bytes of configuration space with one extended capability, ACS, and its control register."""
    space = bytearray(4096)
    space[0x100:0x104] = (0x000D | (1 << 16)).to_bytes(4, "little")  # ACS, version 1, last in the chain
    space[0x106:0x108] = control.to_bytes(2, "little")
    return bytes(space)


def pci_gpus(m: FakeMachine, count: int, iommu: Optional[str] = None, acs: Optional[int] = None) -> List[str]:
    """sysfs for ``count`` GPUs below one PCIe switch: vendor, class, driver link, IOMMU group, bridge configs."""
    addresses = []
    for i in range(count):
        address = gpu_address(i)
        port = "0000:02:%02x.0" % i
        device = "/sys/devices/pci0000:00/%s/%s/%s/%s" % (ROOT_PORT, UPSTREAM, port, address)
        m.file(device + "/vendor", "0x10de\n")
        m.file(device + "/class", "0x030200\n")
        m.mkdir("/sys/bus/pci/drivers/nvidia")
        m.link(device + "/driver", "/sys/bus/pci/drivers/nvidia")
        m.link("/sys/bus/pci/devices/%s" % address, device)
        for bridge, path in ((UPSTREAM, "/sys/devices/pci0000:00/%s/%s" % (ROOT_PORT, UPSTREAM)),
                             (port, "/sys/devices/pci0000:00/%s/%s/%s" % (ROOT_PORT, UPSTREAM, port))):
            m.link("/sys/bus/pci/devices/%s" % bridge, path)
            m.file(path + "/config", acs_config(acs) if acs is not None else bytes(4096))
        if iommu:
            m.file("/sys/kernel/iommu_groups/%d/type" % (20 + i), iommu + "\n")
            m.link(device + "/iommu_group", "/sys/kernel/iommu_groups/%d" % (20 + i))
        addresses.append(address)
    return addresses


def gpu_uuid(i: int) -> str:
    return "GPU-%08d-0000-4000-8000-000000000000" % i  # the UUIDs node() gives the fake NVML (the fake CUDA reads them)


def proc_gpus(m: FakeMachine, count: int, uuids: bool = True) -> List[str]:
    """/proc/driver/nvidia/gpus/BUS/information for ``count`` GPUs, with their UUIDs or the question marks a
    driver shows before the GPU is initialised."""
    addresses = [gpu_address(i) for i in range(count)]
    for i, address in enumerate(addresses):
        uuid = gpu_uuid(i) if uuids else "GPU-????????-????-????-????-????????????"
        m.file("/proc/driver/nvidia/gpus/%s/information" % address,
               "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t %s\nVideo BIOS: \t ??.??.??.??.??\n"
               "Bus Type: \t PCIe\nDMA Size: \t 52 bits\nBus Location: \t %s\nDevice Minor: \t %d\n"
               "GPU Excluded:\t No\n" % (uuid, address, i))
    return addresses
