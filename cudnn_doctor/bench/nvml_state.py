"""Bench child: the GPU's state while it is timed (clocks, power limit, throttle reasons, PCIe link) from NVML.

Runs inside the bench child (bench_child.py imports it by file location): standard library + pynvml only."""

THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                 0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown",
                 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting"}


def nvml_facts(index, pci_bus=None):
    """Clocks, power limit, throttle reasons and PCIe link from NVML; {"error": ...} when it cannot answer."""
    try:
        import pynvml as nv  # why: nvidia-ml-py takes 50 ms or more to import, only where NVML is asked
    except ImportError as exc:
        return {"error": "pynvml: %s" % exc}
    out = {}
    try:
        nv.nvmlInit()
    except Exception as exc:
        return {"error": str(exc)}
    try:
        h = nv.nvmlDeviceGetHandleByPciBusId(pci_bus) if pci_bus else nv.nvmlDeviceGetHandleByIndex(index)
        calls = {
            "sm_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            "sm_clock_max_mhz": lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
            "mem_clock_mhz": lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            "power_limit_w": lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
            "power_default_limit_w": lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0,
            "power_w": lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            "temperature_c": lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            "throttle_mask": lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h),
            "pcie_gen": lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h),
            "pcie_gen_max": lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h),
            "pcie_width": lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h),
            "pcie_width_max": lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h),
            "gpu_max_pcie_gen": lambda: nv.nvmlDeviceGetGpuMaxPcieLinkGeneration(h),
        }
        for key, call in calls.items():
            try:
                out[key] = call()
            except Exception as exc:  # a call this driver or board lacks: record it and go on
                out.setdefault("unavailable", {})[key] = str(exc)
        mask = out.get("throttle_mask")
        if isinstance(mask, int):
            out["throttle_reasons"] = [name for bit, name in THROTTLE_BITS.items() if mask & bit]
    except Exception as exc:
        out["error"] = str(exc)
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass
    return out
