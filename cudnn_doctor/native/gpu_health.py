"""In the native child: NVML's health reads of each GPU and of each pair of GPUs (ECC, row remapping, clock
events, PCIe link, NVLink, P2P, topology, fabric). Standard library and pynvml only; the package is not imported.

Every read is one NVML call whose failure (an old driver without the function, a GPU that does not support it)
is recorded under the GPU's ``errors`` and never stops the others.
"""

import ctypes

# NVML's return code for a GPU that fell off the bus (nvml.h NVML_ERROR_GPU_IS_LOST).
_GPU_IS_LOST = 15
# nvml.h nvmlGpuP2PCapsIndex_t: READ = 0, NVLINK = 2 (pynvml spells READ as a tuple, so the numbers are used).
_P2P_READ, _P2P_NVLINK = 0, 2
# The three counters nvidia-smi nvlink -e prints per link ("Replay Errors", "Recovery Errors", "CRC Errors"): the
# field id that reads one link's count with the link as its scopeId (nvml.h NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY,
# _RECOVERY, _CRC), and for a driver without those fields nvml.h's nvmlNvLinkErrorCounter_t of the per-link call
# (REPLAY 0, RECOVERY 1, CRC_FLIT 2). The per-lane data CRC (counter 3) is not one of them: it counts on a healthy
# H100 (946 on the lent one) where nvidia-smi shows 0.
_NVLINK_COUNTERS = (("replay", 161, 0), ("recovery", 162, 1), ("crc", 163, 2))
# nvml.h clock event (throttle) reason bits, by the names bench's child records them (bench/nvml_state.py).
_REASONS = (("gpu_idle", 0x1), ("applications_clocks_setting", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
            ("sync_boost", 0x10), ("sw_thermal_slowdown", 0x20), ("hw_thermal_slowdown", 0x40),
            ("hw_power_brake_slowdown", 0x80), ("display_clock_setting", 0x100))


def node_health(pynvml, counters=False):
    """{"gpus": [per GPU, by NVML index], "pairs": [per pair]}; a GPU NVML cannot open is marked, never skipped.
    ``counters``: also read the NVLink error counters (check --ready).

    One read after another: NVML serialises its calls, so threads only added their own cost (an H100's
    field-values call took 55 ms on threads, 23 ms alone)."""
    count = _read({}, "count", pynvml.nvmlDeviceGetCount) or 0
    max_links = getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)
    gpus, handles = [], []
    for index in range(count):
        errors = {}
        handle = _read(errors, "handle", pynvml.nvmlDeviceGetHandleByIndex, index)
        gpu = {"errors": errors} if handle is None else gpu_health(pynvml, handle, max_links, counters)
        gpu.update(index=index, lost="lost" in gpu["errors"])
        gpus.append(gpu)
        handles.append(handle)
    return {"gpus": gpus, "pairs": pairs(pynvml, gpus, handles)}


def _read(errors, key, fn, *args):
    """``fn(*args)``, or None with the reason recorded under ``errors[key]``."""
    try:
        return fn(*args)
    except Exception as exc:  # NVMLError (NotSupported, GpuIsLost, FunctionNotFound), AttributeError (old pynvml)
        errors[key] = str(exc) or type(exc).__name__
        if getattr(exc, "value", None) == _GPU_IS_LOST:
            errors["lost"] = errors[key]
        return None


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def gpu_health(pynvml, handle, max_links, counters=False):
    """The health reads of one GPU as plain values; its NVLink error counters only when ``counters``."""
    errors = {}
    out = {"errors": errors}
    pci = _read(errors, "pci", pynvml.nvmlDeviceGetPciInfo, handle)
    out["bus_id"] = _text(pci.busId) if pci is not None else None
    mode = _read(errors, "persistence_mode", pynvml.nvmlDeviceGetPersistenceMode, handle)
    out["persistence_mode"] = None if mode is None else bool(mode)
    ecc = _read(errors, "ecc_mode", pynvml.nvmlDeviceGetEccMode, handle)
    out["ecc_mode"] = None if ecc is None else [bool(ecc[0]), bool(ecc[1])]  # current, pending
    if ecc is not None and ecc[0]:
        # NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0 (since the last driver load)
        out["ecc_volatile_uncorrected"] = _read(errors, "ecc_errors", pynvml.nvmlDeviceGetTotalEccErrors, handle, 1, 0)
    rows = _read(errors, "remapped_rows", pynvml.nvmlDeviceGetRemappedRows, handle)
    if rows is not None:
        out["remapped_rows"] = {"correctable": int(rows[0]), "uncorrectable": int(rows[1]),
                                "pending": bool(rows[2]), "failed": bool(rows[3])}
    else:  # GPUs before Ampere retire pages instead of remapping rows
        pending = _read(errors, "retired_pages", pynvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
        out["retired_pages_pending"] = None if pending is None else bool(pending)
    reasons = _read({}, "clock_events", pynvml.nvmlDeviceGetCurrentClocksEventReasons, handle)
    if reasons is None:  # drivers before 535 name it "throttle reasons"
        reasons = _read(errors, "clock_events", pynvml.nvmlDeviceGetCurrentClocksThrottleReasons, handle)
    out["clock_events"] = None if reasons is None else [name for name, bit in _REASONS if reasons & bit]
    link = {}
    for key, fn in (("gen", "nvmlDeviceGetCurrPcieLinkGeneration"), ("gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"),
                    ("width", "nvmlDeviceGetCurrPcieLinkWidth"), ("width_max", "nvmlDeviceGetMaxPcieLinkWidth")):
        link[key] = _read(errors, "pcie_" + key, getattr(pynvml, fn), handle)
    out["pcie"] = link
    out["nvlinks"] = _nvlinks(pynvml, handle, max_links, errors)
    if counters:
        out["nvlink_errors"] = nvlink_errors(pynvml, handle, out["nvlinks"])
    out["fabric"] = _fabric(pynvml, handle, errors)
    return out


def _nvlinks(pynvml, handle, max_links, errors):
    """Each NVLink the GPU has: whether it is up, and the PCI bus id at its other end."""
    links = []
    for link in range(max_links):
        try:
            active = pynvml.nvmlDeviceGetNvLinkState(handle, link)
        except Exception as exc:
            if link == 0 and "Not Supported" not in str(exc) and "Invalid Argument" not in str(exc):
                errors["nvlink"] = str(exc) or type(exc).__name__
            break  # links are numbered from 0: the first one NVML refuses ends the list
        entry = {"link": link, "active": bool(active)}
        if active:
            remote = _read({}, "remote", pynvml.nvmlDeviceGetNvLinkRemotePciInfo, handle, link)
            entry["remote_bus_id"] = _text(remote.busId) if remote is not None else None
        links.append(entry)
    return links


def nvlink_errors(pynvml, handle, links):
    """The counters nvidia-smi nvlink -e prints, each summed over the GPU's active links.

    One field-values call reads every active link's three counters (18 links: 54 fields); only a counter no field
    answers for a link is read with nvmlDeviceGetNvLinkErrorCounter, and a counter the driver refuses on one link
    is not asked of the next; a counter nothing answers is left out, as nvidia-smi leaves it out."""
    active = [entry["link"] for entry in links if entry["active"]]
    if not active:
        return {}
    wanted = [(name, counter, link) for name, _, counter in _NVLINK_COUNTERS for link in active]
    answers = _field_values(pynvml, handle, [(field, link) for _, field, _ in _NVLINK_COUNTERS for link in active])
    totals, refused = {}, set()
    for (name, counter, link), (rc, value) in zip(wanted, answers):
        if rc != 0:
            if name in refused:
                continue
            value = _read({}, name, pynvml.nvmlDeviceGetNvLinkErrorCounter, handle, link, counter)
            if value is None:
                refused.add(name)
                continue
        totals[name] = totals.get(name, 0) + int(value)
    return totals


def _field_values(pynvml, handle, fields):
    """[(NVML return code, value)] per field of one nvmlDeviceGetFieldValues call; every code is an error where
    the call itself fails (an old driver or pynvml without it)."""
    if not fields:
        return []
    try:
        return [(int(v.nvmlReturn), int(v.value.ullVal)) for v in pynvml.nvmlDeviceGetFieldValues(handle, fields)]
    except Exception:
        return [(-1, None)] * len(fields)


def _fabric(pynvml, handle, errors):
    """The GPU's NVLink fabric registration (NVSwitch systems, Hopper and later); None where NVML has none."""
    try:
        info = pynvml.c_nvmlGpuFabricInfo_t()
        pynvml.nvmlDeviceGetGpuFabricInfo(handle, ctypes.byref(info))  # pynvml hands the argument on as given
    except Exception as exc:
        if "Not Supported" not in str(exc):
            errors["fabric"] = str(exc) or type(exc).__name__
        return None
    return {"state": int(info.state), "status": int(info.status)}


def pairs(pynvml, gpus, handles):
    """P2P read and the common PCIe ancestor of every pair of GPUs (by NVML index), and NVLink P2P status where no
    link of the pair's first GPU ends at the second (NVSwitch systems: the links' far ends are switches)."""
    found = []
    for a, first in enumerate(gpus):
        for b in range(a + 1, len(gpus)):
            if handles[a] is None or handles[b] is None:
                continue
            errors, both = {}, (handles[a], handles[b])
            pair = {"gpus": [a, b],
                    "p2p_read": _read(errors, "p2p_read", pynvml.nvmlDeviceGetP2PStatus, *both, _P2P_READ)}
            pair["p2p_nvlink"] = None if _linked(first, gpus[b]) else _read(
                errors, "p2p_nvlink", pynvml.nvmlDeviceGetP2PStatus, *both, _P2P_NVLINK)
            pair["common_ancestor"] = _read(errors, "topology", pynvml.nvmlDeviceGetTopologyCommonAncestor, *both)
            pair["errors"] = errors
            found.append(pair)
    return found


def _linked(first, second):
    """Whether an active NVLink of ``first`` ends at ``second`` (bus ids compared as sysfs spells them)."""
    far = (second.get("bus_id") or "")[-12:].lower()
    return bool(far) and any(entry["active"] and (entry.get("remote_bus_id") or "")[-12:].lower() == far
                             for entry in first.get("nvlinks") or [])
