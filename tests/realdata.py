"""Real NVIDIA libraries from PyPI wheels, downloaded once and cached, for the real-library test tier."""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

CACHE = Path(os.environ.get("CUDNN_DOCTOR_TEST_CACHE", Path.home() / ".cache" / "cudnn-doctor-tests"))

# Versions the real-library tier uses; each is a plain `pip download` from the package registry.
CUDNN9 = ("nvidia-cudnn-cu12", "9.1.0.70")
CUDNN8 = ("nvidia-cudnn-cu12", "8.9.7.29")
CUDART12 = ("nvidia-cuda-runtime-cu12", "12.4.127")
CUDART11 = ("nvidia-cuda-runtime-cu11", "11.8.89")


@contextlib.contextmanager
def cache_lock(path: Path) -> Iterator[None]:
    """Hold ``path``.lock exclusively: another test run sharing the cache waits here, then finds the work done
    instead of unpacking over (or deleting) what this run is using."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def download_wheel(name: str, version: str, pattern: str, platforms: Sequence[str],
                   require_success: bool = False) -> Optional[Path]:
    """The cached .whl matching `pattern`, fetched by `pip download` for `platforms` on first use; None when
    offline or disabled (and, with `require_success`, when pip failed). pip writes into a private folder and the
    wheel is moved into the cache whole, so a run sharing the cache never sees half a file."""
    wheels = CACHE / "wheels"
    found = sorted(wheels.glob(pattern))
    if found or os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return found[0] if found else None
    with cache_lock(wheels / ("%s-%s" % (name, version))):
        found = sorted(wheels.glob(pattern))
        if found:  # another run fetched it while this one waited
            return found[0]
        private = wheels / (".download-%d" % os.getpid())
        argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        for platform in platforms:
            argv += ["--platform", platform]
        argv += ["--python-version", "3.11", "%s==%s" % (name, version), "-d", str(private)]
        proc = subprocess.run(argv, capture_output=True, text=True)
        for whl in sorted(private.glob("*.whl")):
            os.replace(whl, wheels / whl.name)
        shutil.rmtree(private, ignore_errors=True)
        found = sorted(wheels.glob(pattern))
        return found[0] if found and (proc.returncode == 0 or not require_success) else None


# What a wheel read from PyPI by range requests may fail with: offline, a proxy's error page, a file that is not the
# zip it should be. The readers turn each into None (the test skips), never into a wrong answer.
_READ_ERRORS: Tuple[type, ...] = (ValueError, KeyError, IndexError, StopIteration, struct.error, zlib.error,
                                  UnicodeDecodeError)


def _pypi_wheel(project: str, release: str, ending: str) -> Tuple[str, int, bool]:
    """(url, size, whether PyPI serves its core metadata beside it) of the release's wheel ending with ``ending``."""
    from urllib.parse import urljoin

    import requests

    page = "https://pypi.org/simple/%s/" % project
    resp = requests.get(page, timeout=30, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    if resp.status_code != 200:
        raise ValueError("%s: HTTP %d" % (page, resp.status_code))
    wheel = [f for f in resp.json()["files"] if f["filename"].startswith(
        "%s-%s-" % (project.replace("-", "_"), release)) and f["filename"].endswith(ending)][0]
    return urljoin(page, wheel["url"]), int(wheel["size"]), bool(wheel.get("core-metadata"))


def _bytes(url: str, start: int, length: int, timeout: int = 60) -> bytes:
    """``length`` bytes of ``url`` from ``start``: a 206 answer of exactly that length, else ValueError (a server
    that ignores Range would send the whole wheel)."""
    import requests

    resp = requests.get(url, headers={"Range": "bytes=%d-%d" % (start, start + length - 1)}, timeout=timeout)
    if resp.status_code != 206 or len(resp.content) != length:
        raise ValueError("%s: HTTP %d, %d bytes for a range of %d" % (url, resp.status_code, len(resp.content), length))
    return resp.content


_ZIP64 = 0xFFFFFFFF


def _zip_directory(url: str, size: int) -> List[Tuple[str, int, int, int]]:
    """(name, compression method, compressed size, local header offset) of each member, read from the zip's central
    directory by HTTP range requests; zip64 wheels (over 4 GiB, or members past 2 GiB) by their zip64 records."""
    take = min(size, 65536)
    tail = _bytes(url, size - take, take)
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise ValueError("%s: no end of central directory" % url)
    cd_size, cd_offset = struct.unpack("<II", tail[end + 12:end + 20])
    if _ZIP64 in (cd_size, cd_offset):  # the zip64 end record, named by the locator just before the end record
        locator = tail.rfind(b"PK\x06\x07", 0, end)
        record, = struct.unpack("<Q", tail[locator + 8:locator + 16])
        head = _bytes(url, record, 56)
        cd_size, cd_offset = struct.unpack("<QQ", head[40:56])
    directory = _bytes(url, cd_offset, cd_size)
    out, at = [], 0
    while directory[at:at + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", directory[at + 10:at + 12])
        packed, unpacked = struct.unpack("<II", directory[at + 20:at + 28])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28:at + 34])
        offset, = struct.unpack("<I", directory[at + 42:at + 46])
        extra = directory[at + 46 + name_len:at + 46 + name_len + extra_len]
        packed, offset = _zip64_fields(extra, unpacked, packed, offset)
        out.append((directory[at + 46:at + 46 + name_len].decode(), method, packed, offset))
        at += 46 + name_len + extra_len + comment_len
    if not out:
        raise ValueError("%s: an empty central directory" % url)
    return out


def _zip64_fields(extra: bytes, unpacked: int, packed: int, offset: int) -> Tuple[int, int]:
    """A member's compressed size and header offset, from its zip64 extra field (0x0001) where the 32-bit fields say
    0xFFFFFFFF; the field holds, in order, only those that overflowed (uncompressed, compressed, offset)."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack("<HH", extra[at:at + 4])
        if kind == 1:
            values = iter(struct.unpack("<%dQ" % (length // 8), extra[at + 4:at + 4 + length - length % 8]))
            if unpacked == _ZIP64:
                next(values)
            packed = next(values) if packed == _ZIP64 else packed
            offset = next(values) if offset == _ZIP64 else offset
        at += 4 + length
    return packed, offset


def _member(url: str, offset: int, packed: int, method: int) -> bytes:
    """One member's bytes, inflated: its local header says where its data starts."""
    head = _bytes(url, offset, 30)
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    data = _bytes(url, offset + 30 + name_len + extra_len, packed, timeout=300)
    return zlib.decompress(data, -15) if method == 8 else data


def wheel_members(project: str, release: str, ending: str) -> Optional[List[str]]:
    """The member names of the release's wheel whose file name ends with ``ending`` ("x86_64.whl",
    "cp312-win_amd64.whl"), read from its zip central directory on PyPI by HTTP range requests (a few hundred KB, not
    the whole wheel); None where PyPI cannot be asked (offline, CUDNN_DOCTOR_NO_DOWNLOAD)."""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    import requests

    try:
        url, size, _ = _pypi_wheel(project, release, ending)
        return [name for name, _, _, _ in _zip_directory(url, size)]
    except (requests.RequestException,) + _READ_ERRORS:
        return None


def wheel_requires(project: str, release: str, ending: str = "x86_64.whl") -> Optional[List[str]]:
    """The Requires-Dist lines of the release's wheel: the core metadata PyPI serves beside it (PEP 658), else its
    dist-info/METADATA member read by range requests (older uploads); None where PyPI cannot be asked."""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    from email.parser import Parser

    import requests

    try:
        url, size, served = _pypi_wheel(project, release, ending)
        if served:
            resp = requests.get(url + ".metadata", timeout=30)
            if resp.status_code != 200:
                raise ValueError("%s.metadata: HTTP %d" % (url, resp.status_code))
            text = resp.text
        else:
            _, method, packed, offset = next(m for m in _zip_directory(url, size)
                                             if m[0].endswith(".dist-info/METADATA"))
            text = _member(url, offset, packed, method).decode()
    except (requests.RequestException,) + _READ_ERRORS:
        return None
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def wheel_elf_symbols(project: str, release: str, member_suffix: str, ending: str = "x86_64.whl") -> Optional[Set[str]]:
    """The names of the functions and objects a shared library of the release's wheel defines (its .dynsym), read
    from that member alone by HTTP range requests (its dynamic segment lies near the end, so the whole member:
    NVRTC's is about 20 MB, NCCL's too big to fetch in a test); None where PyPI cannot be asked or the member is not
    an ELF library this reader follows."""
    if os.environ.get("CUDNN_DOCTOR_NO_DOWNLOAD"):
        return None
    import requests

    try:
        url, size, _ = _pypi_wheel(project, release, ending)
        _, method, packed, offset = next(m for m in _zip_directory(url, size) if m[0].endswith(member_suffix))
        return _defined_symbols(_member(url, offset, packed, method))
    except (requests.RequestException, AssertionError) + _READ_ERRORS:
        return None


def _defined_symbols(elf: bytes) -> Set[str]:
    """The defined dynamic symbols of a 64-bit little-endian ELF: its dynamic segment (program headers) gives .dynsym
    and .dynstr. Version-node names (absolute symbols, st_shndx SHN_ABS) are not functions and are left out."""
    if elf[:6] != b"\x7fELF\x02\x01":
        raise ValueError("not a 64-bit little-endian ELF")
    phoff, = struct.unpack("<Q", elf[32:40])
    phentsize, phnum = struct.unpack("<HH", elf[54:58])
    loads, dynamic = [], None
    for i in range(phnum):
        kind, _, off, vaddr, _, filesz = struct.unpack("<IIQQQQ", elf[phoff + i * phentsize:phoff + i * phentsize + 40])
        if kind == 1:
            loads.append((vaddr, off, filesz))
        elif kind == 2:
            dynamic = (off, filesz)
    if dynamic is None:
        raise ValueError("no dynamic segment")

    def at(address: int) -> int:  # a virtual address as a file offset
        return next(off + address - vaddr for vaddr, off, filesz in loads if vaddr <= address < vaddr + filesz)

    tags: Dict[int, int] = {}
    for i in range(dynamic[1] // 16):
        tag, value = struct.unpack("<qQ", elf[dynamic[0] + 16 * i:dynamic[0] + 16 * i + 16])
        if tag == 0:
            break
        tags.setdefault(tag, value)
    symtab, strtab, strsz = at(tags[6]), at(tags[5]), tags[10]
    # DT_HASH's nchain is the symbol count; without it, .dynsym ends where .dynstr (or any section after it) starts
    count = struct.unpack("<I", elf[at(tags[4]) + 4:at(tags[4]) + 8])[0] if 4 in tags else \
        ((strtab if strtab > symtab else len(elf)) - symtab) // 24
    out = set()
    for i in range(1, count):
        st_name, info, _, shndx = struct.unpack("<IBBH", elf[symtab + 24 * i:symtab + 24 * i + 8])
        if st_name >= strsz:
            break
        if shndx not in (0, 0xFFF1) and info >> 4 in (1, 2):  # defined (not SHN_ABS), GLOBAL or WEAK
            end = elf.index(b"\0", strtab + st_name)
            out.add(elf[strtab + st_name:end].decode())
    return out


def wheel_file(name: str, version: str) -> Optional[Path]:
    """The cached .whl, downloading it on first use; None when offline or disabled."""
    # Linux wheels only: the same cache holds win_amd64 wheels of the same name and version.
    pattern = "%s-%s-*manylinux*x86_64.whl" % (name.replace("-", "_"), version)
    return download_wheel(name, version, pattern, ("manylinux2014_x86_64",), require_success=True)


def filled_once(target: Path, fill: Callable[[Path], bool]) -> Optional[Path]:
    """``target`` made once by ``fill(folder)`` (False: it cannot be had now): into a temporary sibling, moved into
    place whole and marked complete, so a run killed half-way leaves nothing a later run would take for done. Runs
    sharing the cache take turns (cache_lock): the second finds it complete and never replaces it under the first."""
    if (target / ".complete").exists():
        return target
    with cache_lock(target):
        if (target / ".complete").exists():  # another run filled it while this one waited
            return target
        tmp = target.with_name(target.name + ".tmp%d" % os.getpid())
        shutil.rmtree(tmp, ignore_errors=True)
        if not fill(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        shutil.rmtree(target, ignore_errors=True)  # an incomplete one a killed run left
        os.replace(tmp, target)
        (target / ".complete").write_text("ok")
    return target


def unpacked_wheel(target: Path, get_wheel: Callable[[], Optional[Path]],
                   fill: Callable[[zipfile.ZipFile, Path], None], keep_wheel: bool = True) -> Optional[Path]:
    """``target`` filled once (filled_once) from the wheel ``get_wheel()`` fetches by ``fill(zip, folder)``; None
    when the wheel is unavailable; ``keep_wheel=False`` deletes it afterwards (the tests need only what was
    unpacked)."""
    def make(tmp: Path) -> bool:
        wheel = get_wheel()
        if wheel is None:
            return False
        with zipfile.ZipFile(wheel) as zf:
            fill(zf, tmp)
        if not keep_wheel:
            wheel.unlink(missing_ok=True)
        return True

    return filled_once(target, make)


def real_wheel(name: str, version: str) -> Optional[Path]:
    """The wheel unpacked as a site-packages folder (cached); None when it cannot be had."""
    def fill(zf: zipfile.ZipFile, tmp: Path) -> None:
        zf.extractall(tmp)
        for info in zf.infolist():  # zip drops the exec bits pip would keep
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(tmp / info.filename, mode)
    return unpacked_wheel(CACHE / "unpacked" / ("%s-%s" % (name, version)), lambda: wheel_file(name, version), fill)


# --- Windows (win_amd64) wheels: NVIDIA's real DLLs with version resources and import tables ---------------

WIN_CUDNN9 = ("nvidia-cudnn-cu12", "9.1.0.70")
WIN_CUDNN8 = ("nvidia-cudnn-cu11", "8.9.5.29")
WIN_CUDART12 = ("nvidia-cuda-runtime-cu12", "12.4.127")
WIN_CUDART11 = ("nvidia-cuda-runtime-cu11", "11.8.89")
_SLIM_OVER = 16 << 20  # bigger DLLs keep only what pefile reads: headers, import and resource sections


def win_wheel_file(name: str, version: str) -> Optional[Path]:
    """The cached win_amd64 .whl, downloaded on first use; None when offline or disabled."""
    pattern = "%s-%s-*win_amd64.whl" % (name.replace("-", "_"), version)
    return download_wheel(name, version, pattern, ("win_amd64",))


def win_files(name: str, version: str) -> Optional[Path]:
    """The wheel's bin/ DLLs and include/cudnn_version.h, cached; DLLs over 16 MB kept as sparse files that
    hold only the PE headers and the import/resource sections (all the probes read). None when unavailable."""
    def fill(zf: zipfile.ZipFile, tmp: Path) -> None:
        for info in zf.infolist():
            base = info.filename.rsplit("/", 1)[-1]
            if not (base.lower().endswith(".dll") or base == "cudnn_version.h"):
                continue
            dest = tmp / ("bin" if base.lower().endswith(".dll") else "include") / base
            dest.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            if info.file_size > _SLIM_OVER:
                _slim_pe(dest)
    # keep only what the tests read: the cuDNN wheels are 0.7 GB each
    return unpacked_wheel(CACHE / "win" / ("%s-%s" % (name, version)), lambda: win_wheel_file(name, version), fill,
                          keep_wheel=False)


def _slim_pe(path: Path) -> None:
    """Rewrite a DLL as a sparse file of the same size keeping headers and the import/resource sections."""
    import pefile

    pe = pefile.PE(str(path), fast_load=True)
    keep = [(0, pe.OPTIONAL_HEADER.SizeOfHeaders)]
    for index in (pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"],
                  pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT"],
                  pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_RESOURCE"]):
        rva = pe.OPTIONAL_HEADER.DATA_DIRECTORY[index].VirtualAddress
        section = pe.get_section_by_rva(rva) if rva else None
        if section is not None:
            keep.append((section.PointerToRawData, section.SizeOfRawData))
    size = path.stat().st_size
    pe.close()
    slim = path.with_name(path.name + ".slim")
    with open(path, "rb") as src, open(slim, "wb") as out:
        for start, length in keep:
            src.seek(start)
            out.seek(start)
            out.write(src.read(length))
        out.truncate(size)
    os.replace(slim, path)
