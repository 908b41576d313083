"""PE (Windows DLL) reader: machine type, import tables and the version resource, through pefile."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# IMAGE_FILE_HEADER.Machine values a CUDA DLL can carry (winnt.h).
MACHINES = {0x8664: "x64", 0x14C: "x86", 0xAA64: "arm64"}


@dataclass
class PeInfo:
    """What a DLL says about itself; ``error`` is set when the bytes are not a readable PE image."""

    machine: Optional[str] = None  # "x64", "x86", "arm64" or "0x..." for others
    imports: List[str] = field(default_factory=list)  # load-time imports, in table order
    delay_imports: List[str] = field(default_factory=list)
    file_version: Optional[str] = None  # VS_FIXEDFILEINFO, e.g. "9.1.0.70"
    strings: Dict[str, str] = field(default_factory=dict)  # StringFileInfo: ProductName, FileVersion, ...
    error: Optional[str] = None

    @property
    def has_version_resource(self) -> bool:
        return self.file_version is not None or bool(self.strings)


def read_pe(data: Any) -> PeInfo:
    """Parse a PE image given as bytes or an mmap; never raises."""
    try:
        import pefile  # why: 15 ms, only for a Windows drive's DLLs
    except ImportError as exc:  # pefile is a dependency; a broken install is reported, not raised
        return PeInfo(error="pefile is not installed: %s" % exc)
    info = PeInfo()
    try:
        pe = pefile.PE(data=data, fast_load=True)
    except Exception as exc:  # pefile.PEFormatError and friends: not a DLL, truncated, ...
        info.error = "not a PE image (%s)" % str(exc).strip().rstrip(".")
        return info
    try:
        machine = pe.FILE_HEADER.Machine
        info.machine = MACHINES.get(machine, hex(machine))
        directories = pe.OPTIONAL_HEADER.DATA_DIRECTORY
        imports = directories[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"]]
        if imports.VirtualAddress:  # DLL names only: cuDNN's sub-libraries import thousands of symbols
            entries = pe.parse_import_directory(imports.VirtualAddress, imports.Size, dllnames_only=True)
            info.imports = [_name(e.dll) for e in entries or []]
        delay = directories[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT"]]
        if delay.VirtualAddress:
            info.delay_imports = [_name(e.dll) for e in pe.parse_delay_import_directory(
                delay.VirtualAddress, delay.Size) or []]
        pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_RESOURCE"]])
        fixed = getattr(pe, "VS_FIXEDFILEINFO", None)
        if fixed:
            f = fixed[0]
            info.file_version = "%d.%d.%d.%d" % (f.FileVersionMS >> 16, f.FileVersionMS & 0xFFFF,
                                                 f.FileVersionLS >> 16, f.FileVersionLS & 0xFFFF)
        for block in getattr(pe, "FileInfo", None) or []:
            for entry in block:
                for table in getattr(entry, "StringTable", []):
                    info.strings.update({_name(k): _name(v) for k, v in table.entries.items()})
    except Exception as exc:  # a damaged directory: keep what was read
        info.error = "damaged PE directories (%s)" % exc
    # No pe.close(): it runs a full gc.collect() per file (half a second for a cuDNN copy); the caller owns the data.
    return info


def _name(raw: Any) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def product_version(info: PeInfo) -> Optional[str]:
    """The product's own version: cuDNN's FileVersion (9.1.0.70); CUDA's runtime names it in ProductName
    ('NVIDIA CUDA 12.4.127 Runtime') while its FileVersion is the driver-style 6.14.11.12040."""
    m = re.search(r"\bCUDA (\d+\.\d+(?:\.\d+)?)", info.strings.get("ProductName", ""))
    if m:
        return m.group(1)
    text = info.strings.get("ProductVersion") or info.strings.get("FileVersion") or info.file_version
    return text.replace(",", ".").replace(" ", "") if text else None
