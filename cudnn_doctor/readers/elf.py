"""Reads just enough of an ELF file to judge it and to follow its dynamic links, without loading it."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import BinaryIO, List, Optional

ELF_MAGIC = b"\x7fELF"
_EM_NAMES = {3: "i386", 62: "x86_64", 183: "aarch64", 21: "ppc64", 40: "arm"}
TOO_SHORT = "file too short"
SIGBUS = "the process is killed by SIGBUS (the file ends inside a segment ld.so maps)"
_DT_NEEDED, _DT_STRTAB, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 1, 5, 14, 15, 29


@dataclass
class ElfInfo:
    status: str  # ok, empty, not-elf, truncated, elfclass32, wrong-machine, unreadable
    elf_class: Optional[int] = None  # 1 = 32-bit, 2 = 64-bit
    machine: Optional[str] = None
    soname: Optional[str] = None
    needed: List[str] = field(default_factory=list)
    rpath: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)
    loader_error: Optional[str] = None  # how ld.so fails on this file, when it does


def _read_cstr(fh: BinaryIO, offset: int, limit: int = 4096) -> str:
    fh.seek(offset)
    raw = fh.read(limit)
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def read_elf(fh: BinaryIO, size: int, expect_machine: str = "x86_64", dynamic: bool = True) -> ElfInfo:
    """Judge an ELF header (the D6/F4 failures) and, if asked, read SONAME/NEEDED/RPATH/RUNPATH."""
    # loader_error: what glibc 2.36's ld.so says when it reaches this file (checked in chroots of Debian's own
    # libc6 by tests/probes/test_loader_glibc.py): any file under an ELF header's 64 bytes is "file too short".
    if size == 0:
        return ElfInfo("empty", loader_error=TOO_SHORT)
    head = fh.read(64)
    short = size < 64
    if len(head) < 16 or head[:4] != ELF_MAGIC:
        return ElfInfo("not-elf", loader_error=TOO_SHORT if short else "invalid ELF header")
    cls, data = head[4], head[5]
    end = "<" if data == 1 else ">"
    if cls == 1:
        if len(head) < 52:
            return ElfInfo("truncated", elf_class=1, loader_error=TOO_SHORT)
        (e_machine,) = struct.unpack_from(end + "H", head, 18)
        info = ElfInfo("elfclass32", elf_class=1, machine=_EM_NAMES.get(e_machine, str(e_machine)))
        return info
    if cls != 2 or len(head) < 64:
        return ElfInfo("truncated" if cls == 2 else "not-elf", elf_class=cls,
                       loader_error=TOO_SHORT if short else "invalid ELF header")
    (e_machine,) = struct.unpack_from(end + "H", head, 18)
    e_phoff, e_shoff = struct.unpack_from(end + "QQ", head, 32)
    e_phentsize, e_phnum, e_shentsize, e_shnum = struct.unpack_from(end + "HHHH", head, 54)
    machine = _EM_NAMES.get(e_machine, str(e_machine))
    info = ElfInfo("ok", elf_class=2, machine=machine)
    # A file cut short (interrupted copy, full disk): past the program headers ld.so cannot read it; past a
    # loaded segment it maps the file anyway and the process dies of SIGBUS; only the section headers missing,
    # it loads (ld.so never reads them), though the file is still damaged.
    if e_phoff + e_phnum * e_phentsize > size:
        info.status, info.loader_error = "truncated", "cannot read file data"
        return info
    fh.seek(e_phoff)
    phdrs = fh.read(e_phnum * e_phentsize)
    for i in range(e_phnum):
        p_type, _flags, p_offset, _vaddr, _paddr, p_filesz = struct.unpack_from(end + "IIQQQQ", phdrs,
                                                                                 i * e_phentsize)
        if p_type == 1 and p_offset + p_filesz > size:
            info.status, info.loader_error = "truncated", SIGBUS
            return info
    if expect_machine and machine != expect_machine:
        info.status = "wrong-machine"
    elif e_shnum and e_shoff + e_shnum * e_shentsize > size:
        info.status = "truncated"
    if not dynamic:
        return info
    loads = []
    dyn = None
    for i in range(e_phnum):
        p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from(end + "IIQQQQ", phdrs, i * e_phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dyn = (p_offset, p_filesz)
    if dyn is None:
        return info
    if dyn[0] + dyn[1] > size:
        info.status = "truncated"
        return info
    fh.seek(dyn[0])
    raw = fh.read(dyn[1])
    entries = []
    strtab_vaddr = None
    for off in range(0, len(raw) - 15, 16):
        tag, val = struct.unpack_from(end + "qQ", raw, off)
        if tag == 0:
            break
        if tag == _DT_STRTAB:
            strtab_vaddr = val
        entries.append((tag, val))
    if strtab_vaddr is None:
        return info
    strtab = None
    for vaddr, offset, filesz in loads:
        if vaddr <= strtab_vaddr < vaddr + filesz:
            strtab = strtab_vaddr - vaddr + offset
            break
    if strtab is None:
        return info
    for tag, val in entries:
        if tag == _DT_NEEDED:
            info.needed.append(_read_cstr(fh, strtab + val))
        elif tag == _DT_SONAME:
            info.soname = _read_cstr(fh, strtab + val)
        elif tag == _DT_RPATH:
            info.rpath = [p for p in _read_cstr(fh, strtab + val).split(":") if p]
        elif tag == _DT_RUNPATH:
            info.runpath = [p for p in _read_cstr(fh, strtab + val).split(":") if p]
    return info
