"""CUDA fat binaries: which GPU architectures (sm_XX cubins, compute_XX PTX) an ELF file's .nv_fatbin carries.

Layout (NVIDIA's fatbinary.h, cross-checked with files nvcc 13.0 wrote): the section holds containers, each a
16-byte header {u32 magic 0xBA55ED50, u16 version 1, u16 header size, u64 size of the entries that follow},
then entries back to back, each {u16 kind (1 PTX, 2 cubin), u16, u32 entry-header size, u64 payload size, ...,
u16 minor, u16 major (code version) at 24, u32 arch (e.g. 90) at 28, u64 flags at 40}; the payload follows the
entry header. Only headers are read, so the cost is one small read per entry whatever the payload size.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, List, Optional, Protocol, Set, Tuple

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_CUBIN = 1, 2
FLAG_ARCH_SPECIFIC = 0x100000  # set on sm_90a / sm_100a code: it runs on exactly that GPU family member
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQ")


class Buffer(Protocol):
    """What the reader slices: bytes, or a file whose slices are read on demand."""

    def __getitem__(self, key: slice) -> bytes: ...

    def __len__(self) -> int: ...



@dataclass
class GpuCode:
    """What one library ships: cubins per architecture and PTX per virtual architecture."""

    sass: List[str] = field(default_factory=list)  # "sm_80", "sm_90a", ... sorted by architecture
    ptx: List[str] = field(default_factory=list)  # "compute_120", ...
    containers: int = 0
    entries: int = 0
    error: Optional[str] = None  # a damaged section: what was read before it stays valid


def _arch_key(name: str) -> Tuple[int, str]:
    digits = "".join(c for c in name.split("_", 1)[1] if c.isdigit())
    return int(digits or 0), name


def _at(buf: Buffer, fmt: str, offset: int) -> Tuple[Any, ...]:
    """struct.unpack of fmt at offset, through slicing: buf may be bytes or a file read on demand."""
    return struct.unpack(fmt, bytes(buf[offset:offset + struct.calcsize(fmt)]))


def section(buf: Buffer, name: str) -> Optional[Tuple[int, int]]:
    """(file offset, size) of the named section of a 64-bit little-endian ELF file, or None.

    ``buf`` is anything with len() and slicing that returns bytes: the file's bytes, or a view that reads
    each slice from the file (probes/gpu_code.py), so a 1 GB library costs a few kilobytes of reads."""
    ident = bytes(buf[:6])
    if len(buf) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        return None
    e_shoff, = _at(buf, "<Q", 40)
    e_shentsize, e_shnum, e_shstrndx = _at(buf, "<HHH", 58)
    if not e_shoff or e_shentsize < 64 or e_shoff + e_shnum * e_shentsize > len(buf) or e_shstrndx >= e_shnum:
        return None
    str_off, str_size = _at(buf, "<QQ", e_shoff + e_shstrndx * e_shentsize + 24)
    if str_off + str_size > len(buf):
        return None
    want = name.encode() + b"\0"
    table = bytes(buf[e_shoff:e_shoff + e_shnum * e_shentsize])  # one read of the whole section table
    names = bytes(buf[str_off:str_off + str_size])
    for i in range(e_shnum):
        at = i * e_shentsize
        sh_name, = struct.unpack_from("<I", table, at)
        if names[sh_name:sh_name + len(want)] == want:
            off, size = struct.unpack_from("<QQ", table, at + 24)
            return (off, size) if off + size <= len(buf) else (off, max(0, len(buf) - off))
    return None


def read_fatbins(buf: Buffer, start: int = 0, size: Optional[int] = None) -> GpuCode:
    """Every container in buf[start:start+size]: the architectures of its cubins and PTX."""
    end = len(buf) if size is None else min(len(buf), start + size)
    sass: Set[str] = set()
    ptx: Set[str] = set()
    out = GpuCode()
    at = start
    while at + _HEADER.size <= end:
        magic, _version, hsize, fsize = _HEADER.unpack(bytes(buf[at:at + _HEADER.size]))
        if magic != FATBIN_MAGIC:
            if magic == 0:  # padding between containers (they are 8-byte aligned)
                at += 8 - at % 8
                continue
            out.error = "no fat binary header at offset %d" % at
            break
        if hsize < _HEADER.size or at + hsize + fsize > end:
            out.error = "fat binary at offset %d runs past its section" % at
            break
        out.containers += 1
        entry, stop = at + hsize, at + hsize + fsize
        while entry + 32 <= stop:
            head = bytes(buf[entry:entry + 48])  # one small read: the payload is never touched
            kind, _, ehsize, payload = _ENTRY.unpack_from(head, 0)
            if ehsize < 32 or entry + ehsize > stop:
                out.error = "damaged fat binary entry at offset %d" % entry
                break
            arch, = struct.unpack_from("<I", head, 28)
            flags = struct.unpack_from("<Q", head, 40)[0] if ehsize >= 48 and len(head) >= 48 else 0
            out.entries += 1
            if kind == KIND_PTX:
                ptx.add("compute_%d" % arch)
            elif kind == KIND_CUBIN:
                sass.add("sm_%d%s" % (arch, "a" if flags & FLAG_ARCH_SPECIFIC else ""))
            entry += ehsize + payload
        at = stop
        if at % 8:
            at += 8 - at % 8
    out.sass = sorted(sass, key=_arch_key)
    out.ptx = sorted(ptx, key=_arch_key)
    return out


def gpu_code(buf: Buffer) -> Optional[GpuCode]:
    """The GPU code an ELF file carries, from its .nv_fatbin section; None when it has none."""
    where = section(buf, ".nv_fatbin")
    if where is None:
        return None
    return read_fatbins(buf, *where)


def runs_on(code: GpuCode, cc: str) -> Optional[str]:
    """How a GPU of compute capability `cc` ("9.0") runs this code: "sm_90" (native), "compute_80" (PTX, JIT
    compiled at first use), or None when nothing fits ("no kernel image is available").

    A cubin runs on its own major at an equal or higher minor; arch-specific cubins (sm_90a) only on that exact
    capability; PTX is compiled for any equal or newer capability (CUDA C++ Programming Guide, binary and PTX
    compatibility).
    """
    try:
        major, minor = (int(x) for x in cc.split(".")[:2])
    except ValueError:
        return None
    best, best_key = None, (0, False)
    for name in code.sass:
        num = int("".join(c for c in name[3:] if c.isdigit()))
        a_major, a_minor = divmod(num, 10)
        exact = name.endswith("a")
        if a_major == major and (a_minor == minor if exact else a_minor <= minor):
            key = (num, not exact)  # the highest fitting architecture; of sm_90 and sm_90a, the portable one
            if best is None or key > best_key:
                best, best_key = name, key
    if best:
        return best
    for name in reversed(code.ptx):
        a_major, a_minor = divmod(int(name[8:]), 10)
        if (a_major, a_minor) <= (major, minor):
            return name
    return None
