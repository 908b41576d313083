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
# By the names nvidia-smi nvlink -e prints: nvml.h nvmlNvLinkErrorCounter_t per link, and the field id of the
# total over the links (NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL).
_NVLINK_COUNTERS = (("replay", 0, 52), ("recovery", 1, 59), ("crc_flit", 2, 38), ("crc_data", 3, 45))
# The same counters of one link as field ids: NVML_FI_DEV_NVLINK_ERROR_DL_{REPLAY,RECOVERY,CRC} take the link as
# their scopeId (what DCGM reads on Hopper, whose 18 links outnumber the per-lane ids); the data CRC has only the
# per-lane ids NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_L0..L5 and L6..L11 (first id of each run).
_SCOPED = {"replay": 161, "recovery": 162, "crc_flit": 163}
_PER_LANE = {"crc_data": (39, 102)}
# nvml.h clock event (throttle) reason bits, by the names bench's child records them (bench/nvml_state.py).
_REASONS = (("gpu_idle", 0x1), ("applications_clocks_setting", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
            ("sync_boost", 0x10), ("sw_thermal_slowdown", 0x20), ("hw_thermal_slowdown", 0x40),
            ("hw_power_brake_slowdown", 0x80), ("display_clock_setting", 0x100))


def node_health(pynvml, workers=16):
    """{"gpus": [per GPU, by NVML index], "pairs": [per pair]}; a GPU NVML cannot open is marked, never skipped.

    The GPUs are read side by side, then the pairs, on up to ``workers`` threads: each read waits on the driver
    (about a millisecond for a P2P status), and 8 GPUs have 28 pairs."""
    count = _read({}, "count", pynvml.nvmlDeviceGetCount) or 0
    max_links = getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)
    errors = [{} for _ in range(count)]
    handles = [_read(errors[index], "handle", pynvml.nvmlDeviceGetHandleByIndex, index) for index in range(count)]

    def one(index):
        if handles[index] is None:
            return {"index": index, "errors": errors[index], "lost": "lost" in errors[index]}
        gpu = gpu_health(pynvml, handles[index], max_links)
        gpu.update(index=index, lost="lost" in gpu["errors"])
        return gpu
    gpus = side_by_side(one, range(count), workers)
    return {"gpus": gpus, "pairs": pairs(pynvml, handles, workers)}


def side_by_side(fn, items, workers):
    """[fn(item) for item in items], computed on up to ``workers`` threads; the first exception is raised here."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    import threading

    results, failures, lock = [None] * len(items), [], threading.Lock()
    todo = iter(range(len(items)))

    def work():
        while True:
            with lock:
                index = next(todo, None)
            if index is None:
                return
            try:
                results[index] = fn(items[index])
            except BaseException as exc:  # handed to the caller, as a plain loop would raise it
                failures.append(exc)
    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(workers, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results


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


def gpu_health(pynvml, handle, max_links):
    """The health reads of one GPU as plain values."""
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
    out["nvlink_errors"] = nvlink_errors(pynvml, handle, out["nvlinks"])
    out["fabric"] = _fabric(pynvml, handle, errors)
    return out


def _nvlinks(pynvml, handle, max_links, errors):
    """Each NVLink the GPU has: whether it is up, its error counters, and the PCI bus id at its other end."""
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
    """Each error counter summed over the GPU's active links, as nvidia-smi nvlink -e counts them per link.

    One field-values call for the totals (what DCGM reads); where the driver has no totals (Hopper), one more
    call with every active link's counters as per-link field ids; only a counter no field id answers for a link
    is read with nvmlDeviceGetNvLinkErrorCounter, and a counter the driver refuses on one link is not asked of
    the next (each such call costs about a millisecond on an H100: 72 of them per GPU did)."""
    active = [entry["link"] for entry in links if entry["active"]]
    if not active:
        return {}
    values = _field_values(pynvml, handle, [field for _, _, field in _NVLINK_COUNTERS])
    if all(rc == 0 for rc, _ in values):
        return {name: value for (name, _, _), (_, value) in zip(_NVLINK_COUNTERS, values)}
    wanted = [(name, counter, link, _link_field(name, link)) for name, counter, _ in _NVLINK_COUNTERS
              for link in active]
    batched = [(name, counter, link, field) for name, counter, link, field in wanted if field is not None]
    answers = dict(zip([(name, link) for name, _, link, _ in batched],
                       _field_values(pynvml, handle, [field for _, _, _, field in batched])))
    totals, refused = {}, set()
    for name, counter, link, _ in wanted:
        rc, value = answers.get((name, link), (-1, None))
        if rc != 0:
            if name in refused:
                continue
            value = _read({}, name, pynvml.nvmlDeviceGetNvLinkErrorCounter, handle, link, counter)
            if value is None:
                refused.add(name)
                continue
        totals[name] = totals.get(name, 0) + int(value)
    return totals


def _link_field(name, link):
    """The field id (with its scope) that reads counter ``name`` of one link, or None where nvml.h has none."""
    if name in _SCOPED:
        return (_SCOPED[name], link)
    first = _PER_LANE.get(name)
    if first is None or link >= 12:
        return None
    return first[0] + link if link < 6 else first[1] + link - 6


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


def pairs(pynvml, handles, workers=1):
    """P2P read and NVLink status and the common PCIe ancestor of every pair of GPUs (by NVML index)."""
    both = [(a, b) for a in range(len(handles)) for b in range(a + 1, len(handles))
            if handles[a] is not None and handles[b] is not None]

    def pair(ab):
        a, b = ab
        errors = {}
        return {
            "gpus": [a, b],
            "p2p_read": _read(errors, "p2p_read", pynvml.nvmlDeviceGetP2PStatus, handles[a], handles[b], _P2P_READ),
            "p2p_nvlink": _read(errors, "p2p_nvlink", pynvml.nvmlDeviceGetP2PStatus, handles[a], handles[b],
                                _P2P_NVLINK),
            "common_ancestor": _read(errors, "topology", pynvml.nvmlDeviceGetTopologyCommonAncestor, handles[a],
                                     handles[b]),
            "errors": errors}
    return side_by_side(pair, both, workers)
