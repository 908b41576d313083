"""A Windows machine seen through the Host: Windows paths in and out, case-insensitive like NTFS.

Live on Windows, a Windows path is the path itself. Under ``--root DIR`` on any OS, DIR is drive C: (the
folder that holds Windows/System32); paths on other drives are not on the image and read as absent.
"""
from __future__ import annotations

import ntpath
import os
import sys
from typing import BinaryIO, Dict, List, Optional, Tuple

from ...host import Host


def is_windows(host: Host) -> bool:
    """True for a live Windows machine, or a --root that holds Windows/System32 (any letter case)."""
    if host.is_live:
        return sys.platform == "win32"
    return WindowsDrive(host).exists(r"C:\Windows\System32")


class WindowsDrive:
    """File access by Windows path (``C:\\Program Files\\...``) through the Host seam."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.live = host.is_live
        self._listing: Dict[str, Dict[str, str]] = {}  # inside folder -> {lower name: real name}

    # --- path mapping -------------------------------------------------------

    def inside(self, winpath: str) -> Optional[str]:
        """The Host path of a Windows path; None when it lies on another drive than the image's C:."""
        if self.live:
            return winpath
        drive, rest = ntpath.splitdrive(ntpath.normpath(winpath))
        if drive.upper() != "C:" or not rest.startswith("\\"):
            return None
        current = "/"
        for part in [p for p in rest.split("\\") if p]:
            real = self._names(current).get(part.lower())
            if real is None:
                return None
            current = current.rstrip("/") + "/" + real
        return current

    def _names(self, inside: str) -> Dict[str, str]:
        if inside not in self._listing:
            self._listing[inside] = {n.lower(): n for n in self.host.listdir(inside)}
        return self._listing[inside]

    def winpath(self, inside: str) -> str:
        """How a Windows user writes a Host path of this drive: C:\\Program Files\\..."""
        if self.live:
            return inside
        return "C:\\" + "\\".join(p for p in inside.split("/") if p)

    # --- queries ------------------------------------------------------------

    def exists(self, winpath: str) -> bool:
        inside = self.inside(winpath)
        return inside is not None and self.host.lexists(inside)

    def is_dir(self, winpath: str) -> bool:
        inside = self.inside(winpath)
        return inside is not None and self.host.is_dir(inside)

    def is_file(self, winpath: str) -> bool:
        inside = self.inside(winpath)
        return inside is not None and self.host.is_file(inside)

    def listdir(self, winpath: str) -> List[str]:
        inside = self.inside(winpath)
        return [] if inside is None else self.host.listdir(inside)

    def find(self, folder: str, name: str) -> Optional[str]:
        """The file ``name`` in ``folder``, spelled as on disk; None when absent (no wildcards)."""
        inside = self.inside(folder)
        if inside is None:
            return None
        real = self._names(inside).get(name.lower())
        if real is None or not self.host.is_file(inside.rstrip("/") + "/" + real if not self.live else
                                                  ntpath.join(inside, real)):
            return None
        return ntpath.join(self.winpath(inside) if not self.live else folder, real)

    def glob_dirs(self, base: str, prefix: str) -> List[str]:
        """Sub-folders of ``base`` whose name starts with ``prefix`` (case-insensitive), sorted."""
        return sorted(ntpath.join(base, n) for n in self.listdir(base)
                      if n.lower().startswith(prefix.lower()) and self.is_dir(ntpath.join(base, n)))

    def read_text(self, winpath: str, limit: int = 1 << 20) -> Optional[str]:
        inside = self.inside(winpath)
        return None if inside is None else self.host.read_text(inside, limit)

    def open_binary(self, winpath: str) -> Optional[Tuple[BinaryIO, int]]:
        inside = self.inside(winpath)
        return None if inside is None else self.host.open_binary(inside)

    def outside(self, winpath: str) -> Optional[str]:
        """The doctor's own path of a file (for a native load on the live machine)."""
        inside = self.inside(winpath)
        return None if inside is None else os.fspath(self.host.real(inside))
