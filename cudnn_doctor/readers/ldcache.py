"""Parses /etc/ld.so.cache (glibc's old and new formats) into soname -> paths, as `ldconfig -p` lists it."""
from __future__ import annotations

import struct
from typing import Dict, List, Tuple

_OLD_MAGIC = b"ld.so-1.7.0"
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_FLAG_X8664 = 0x0300  # FLAG_ELF_LIBC6 | FLAG_X8664_LIB64
_FLAG_AARCH64 = 0x0a00
_FLAG_TYPE_MASK = 0x00FF


def _cstr(data: bytes, offset: int) -> str:
    end = data.find(b"\0", offset)
    return data[offset:end if end >= 0 else len(data)].decode("utf-8", "replace")


def parse_ld_cache(data: bytes, machine: str = "x86_64") -> Tuple[Dict[str, List[str]], int]:
    """Returns ({soname: [paths in cache order]}, entry count) for libraries of this machine's ABI.

    Raises ValueError when the bytes are not an ld.so.cache the doctor understands.
    """
    start = 0
    if data.startswith(_OLD_MAGIC):
        # Old header: magic(11) + pad(1) + nlibs(4), then 12-byte entries; the new format follows, aligned.
        (nlibs,) = struct.unpack_from("<I", data, 12)
        start = data.find(_NEW_MAGIC, 16 + nlibs * 12)
        if start < 0:
            raise ValueError("old-format ld.so.cache without the new section is not supported")
    elif not data.startswith(_NEW_MAGIC):
        raise ValueError("not an ld.so.cache file")
    nlibs, _strlen = struct.unpack_from("<II", data, start + 20)
    entries_at = start + 48
    if entries_at + nlibs * 24 > len(data):
        raise ValueError("ld.so.cache is truncated")
    want = {"x86_64": _FLAG_X8664, "aarch64": _FLAG_AARCH64}.get(machine)
    out: Dict[str, List[str]] = {}
    for i in range(nlibs):
        flags, key, value, _osv, _hwcap = struct.unpack_from("<iIIIQ", data, entries_at + i * 24)
        # String offsets in the new format count from the start of the new header.
        name = _cstr(data, start + key)
        path = _cstr(data, start + value)
        if want is not None and (flags & 0xFF00) and (flags & 0xFF00) != want & 0xFF00:
            continue  # a 32-bit or foreign-ABI entry: ld.so skips it for this process
        out.setdefault(name, []).append(path)
    return out, nlibs
