"""What the Windows probes share: the drive, the environment as Windows reads it, and parsed PE files."""
from __future__ import annotations

import mmap
import ntpath
import re
from typing import Dict, List, Optional

from ...model_windows import WinDll, WindowsFacts
from ...readers.pe import PeInfo, product_version, read_pe
from .drive import WindowsDrive


class State:
    """What the Windows steps share: the drive, the environment as Windows reads it, parsed PE files."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.drive = WindowsDrive(ctx.host)
        # Windows environment variable names ignore case. A drive read from Linux without --env would get this
        # process's POSIX values (PATH=/usr/bin:/bin): those say nothing about the Windows machine.
        self.env: Dict[str, str] = {k.upper(): v for k, v in ctx.host.env.items()
                                    if ctx.host.is_live or not v.startswith("/")}
        self.win = WindowsFacts(drive=None if ctx.host.is_live else str(ctx.host.root))
        ctx.facts.windows = self.win
        self.win.windows_dir = ntpath.normpath(self.env.get("SYSTEMROOT") or self.env.get("WINDIR") or r"C:\Windows")
        self.win.path = split_path(self.env.get("PATH", ""))
        self.win.path_absent = [p for p in self.win.path if not self.drive.is_dir(p)]
        self._pe: Dict[str, PeInfo] = {}
        self.site_dirs: List[str] = []

    @property
    def system32(self) -> str:
        return ntpath.join(self.win.windows_dir, "System32")

    def pe(self, path: str) -> PeInfo:
        key = path.lower()
        if key not in self._pe:
            self._pe[key] = _read_pe_file(self.drive, path)
        return self._pe[key]

    def dll(self, path: str, header_version: Optional[str] = None) -> WinDll:
        """A DLL's facts, recorded once: version from its resource, else the header beside it, else its name."""
        for known in self.win.dlls:
            if known.path.lower() == path.lower():
                return known
        info = self.pe(path)
        dll = WinDll(path=path, machine=info.machine, imports=info.imports + info.delay_imports, error=info.error)
        version = product_version(info) if info.has_version_resource else None
        if version:
            dll.version, dll.version_source = version, "PE version resource"
        elif header_version:
            dll.version, dll.version_source = header_version, "cudnn_version.h beside it (no version resource)"
        else:
            m = re.search(r"64_(\d+)\.dll$", path, re.I)
            if m:
                dll.version, dll.version_source = m.group(1), "file name (no version resource)"
        self.win.dlls.append(dll)
        return dll


def split_path(value: str) -> List[str]:
    """PATH as Windows reads it: ';'-separated, quotes dropped, empty entries ignored."""
    out = []
    for raw in value.split(";"):
        entry = raw.strip().strip('"').strip()
        if entry:
            out.append(entry.rstrip("\\") if len(entry) > 3 else entry)
    return out


def _read_pe_file(drive: WindowsDrive, path: str) -> PeInfo:
    opened = drive.open_binary(path)
    if opened is None:
        return PeInfo(error="cannot be read")
    fh, size = opened
    try:
        if size == 0:
            return PeInfo(error="empty file")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:  # cuDNN DLLs reach 600 MB
            return read_pe(data)
    except (OSError, ValueError) as exc:
        return PeInfo(error="cannot be read (%s)" % exc)
    finally:
        fh.close()


# --- steps -------------------------------------------------------------------
