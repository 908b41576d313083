"""readers/ldso.py (system folders compiled into ld.so, glibc-hwcaps levels) and the loader's words per broken file."""
from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from fuzz_support import budget
from hypothesis import example, given
from hypothesis import strategies as st

from cudnn_doctor.readers.elf import SIGBUS, read_elf
from cudnn_doctor.readers.ldso import hwcaps_subdirs, system_dirs


def test_system_dirs_of_this_machines_ld_so():
    ld_so = Path("/lib64/ld-linux-x86-64.so.2")
    if not Path("/etc/debian_version").exists() or not ld_so.exists():
        pytest.skip("needs a Debian x86_64 glibc")
    # `ld.so --help` on Debian 12 lists exactly these as the system search path.
    assert system_dirs(ld_so.read_bytes()) == ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib"]


def test_system_dirs_of_a_rhel_style_ld_so():
    blob = b"\x7fELF junk\0ld.so.cache\0" + b"/lib64/\0/usr/lib64/\0" + b"\0more"
    assert system_dirs(blob) == ["/lib64", "/usr/lib64"]
    assert system_dirs(b"no folders here") == []


# Pieces an ld.so's bytes are drawn from: folders as glibc stores them, near-misses, NULs and other bytes.
_PIECES = [b"/lib/", b"/usr/lib/", b"/lib64/", b"/usr/lib/x86_64-linux-gnu/", b"/lib/x86_64-linux-gnu/", b"\0",
           b"/", b"lib", b"/usr/", b"x86_64", b"-", b".", b"\x7fELF", b" ", b"\xff", b"/\0/", b"/etc/ld.so.cache"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
@budget(500)
@example([b"/x", b"/\0/", b"/lib/", b"\0", b"/usr/lib/", b"\0"])
@example([b"/lib", b"/\0", b"/lib/", b"\0", b"/usr/lib/", b"\0"])
def test_system_dirs_finds_what_the_pattern_finds_first(pieces):
    """The shortcut (start at the first "/\\0/") answers as the pattern searched over the whole file does."""
    from cudnn_doctor.readers.ldso import _SYSTEM_DIRS

    blob = b"".join(pieces)
    m = _SYSTEM_DIRS.search(blob)
    expected = [d.decode().rstrip("/") or "/" for d in m.group().split(b"\0") if d] if m else []
    assert system_dirs(blob) == expected


def test_hwcaps_levels_from_cpuinfo():
    v2 = "cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3"
    v3 = v2 + " avx avx2 bmi1 bmi2 f16c fma movbe abm"
    v4 = v3 + " avx512f avx512bw avx512cd avx512dq avx512vl"
    assert hwcaps_subdirs("flags\t\t: fpu %s\n" % v2) == ["x86-64-v2"]
    assert hwcaps_subdirs("flags : %s\n" % v3) == ["x86-64-v3", "x86-64-v2"]
    assert hwcaps_subdirs("flags : %s\n" % v4) == ["x86-64-v4", "x86-64-v3", "x86-64-v2"]
    assert hwcaps_subdirs("flags : fpu sse2\n") == []
    assert hwcaps_subdirs(None) == ["x86-64-v2"]


def _elf(size_cut=None) -> bytes:
    """A 64-bit ELF with one PT_LOAD segment covering bytes 0..4096 and section headers at the end."""
    body = bytearray(4096 + 128)
    body[:16] = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    struct.pack_into("<HHIQQQIHHHHHH", body, 16, 3, 62, 1, 0, 64, 4096, 0, 64, 56, 1, 64, 2, 0)
    struct.pack_into("<IIQQQQQQ", body, 64, 1, 5, 0, 0, 0, 4096, 4096, 4096)
    return bytes(body[:size_cut] if size_cut else body)


@pytest.mark.parametrize("cut,status,error", [
    (None, "ok", None),
    (0, "empty", "file too short"),
    (40, "truncated", "file too short"),
    (100, "truncated", "cannot read file data"),
    (2000, "truncated", SIGBUS),
    (4100, "truncated", None),  # only the section headers are lost: ld.so loads it
])
def test_loader_error_per_cut(cut, status, error):
    data = _elf() if cut is None else _elf()[:cut]
    info = read_elf(io.BytesIO(data), len(data), dynamic=False)
    assert (info.status, info.loader_error) == (status, error)


def test_short_text_file_is_too_short_not_invalid():
    data = b"not a library"
    assert read_elf(io.BytesIO(data), len(data)).loader_error == "file too short"
