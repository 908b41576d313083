"""The .nv_fatbin reader: real nvcc-built libraries, fat binaries built byte by byte, and CD201 end to end."""
from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from cudnn_doctor.readers.fatbin import FATBIN_MAGIC, GpuCode, gpu_code, read_fatbins, runs_on, section

DATA = Path(__file__).parent.parent / "data" / "fatbin"


# --- real files (tests/data/fatbin/make.sh: the -gencode lists are the expectations) -------------------------------

def test_real_nvcc_library_lists_every_gencode():
    code = gpu_code((DATA / "libtorch_cuda.so").read_bytes())
    assert code.sass == ["sm_80", "sm_90", "sm_90a", "sm_100", "sm_120"]
    assert code.ptx == ["compute_120"]
    assert code.error is None and code.containers == 2


def test_real_library_with_arch_specific_cubin_and_old_ptx():
    code = gpu_code((DATA / "libptx_only.so").read_bytes())
    assert code.sass == ["sm_100a"] and code.ptx == ["compute_75"]


def test_library_without_gpu_code_has_none():
    libc = Path("/lib/x86_64-linux-gnu/libc.so.6")
    if not libc.exists():
        pytest.skip("no x86_64 libc to read")
    assert gpu_code(libc.read_bytes()) is None


# --- synthetic fat binaries, laid out per fatbinary.h -------------------------------------------------------------

def entry(kind: int, arch: int, payload: bytes = b"\x7fELF" + b"\0" * 12, flags: int = 0x11, header: int = 64) -> bytes:
    padded = payload + b"\0" * (-len(payload) % 8)
    head = struct.pack("<HHIQIIHHIIIQ", kind, 0x0101, header, len(padded), 0, len(payload), 8, 1, arch, 0, 0, flags)
    return head + b"\0" * (header - len(head)) + padded


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def elf_with(sections) -> bytes:
    """A 64-bit little-endian ELF file holding the given (name, bytes) sections and a section name table."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n, _ in sections) + b".shstrtab\0"
    body, headers, offset = b"", [b"\0" * 64], 64
    name_at = 1
    for name, data in sections:
        data += b"\0" * (-len(data) % 8)
        headers.append(struct.pack("<IIQQQQIIQQ", name_at, 1, 2, 0, offset, len(data), 0, 0, 8, 0))
        body += data
        offset += len(data)
        name_at += len(name) + 1
    headers.append(struct.pack("<IIQQQQIIQQ", name_at, 3, 0, 0, offset, len(names), 0, 0, 1, 0))
    body += names + b"\0" * (-len(names) % 8)
    shoff = 64 + len(body)
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64, len(headers),
                               len(headers) - 1)
    return head + body + b"".join(headers)


def test_synthetic_containers_with_padding_between_them():
    first = container(entry(2, 70), entry(1, 70, b".version 7.0\n"))
    second = container(entry(2, 90, flags=0x100011), entry(2, 100, header=112), entry(1, 120, header=80))
    blob = first + b"\0" * (-len(first) % 8) + b"\0" * 8 + second
    code = gpu_code(elf_with([(".text", b"\x90" * 24), (".nv_fatbin", blob)]))
    assert code.sass == ["sm_70", "sm_90a", "sm_100"] and code.ptx == ["compute_70", "compute_120"]
    assert code.containers == 2 and code.entries == 5 and code.error is None


def test_damaged_container_keeps_what_was_read():
    good = container(entry(2, 80))
    bad = struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, 1 << 40)  # claims more bytes than the section has
    code = read_fatbins(good + bad)
    assert code.sass == ["sm_80"] and "runs past" in code.error


def test_garbage_is_not_a_fat_binary():
    code = read_fatbins(b"\x01\x02\x03\x04" * 8)
    assert code.entries == 0 and code.error
    assert section(b"not an elf file at all" * 4, ".nv_fatbin") is None
    assert gpu_code(elf_with([(".text", b"\x90" * 8)])) is None


@pytest.mark.parametrize("sass,ptx,cc,want", [
    (["sm_80", "sm_90"], [], "9.0", "sm_90"),
    (["sm_80"], [], "8.6", "sm_80"),  # same major, higher minor: binary compatible
    (["sm_80"], [], "9.0", None),  # another major needs PTX
    (["sm_80"], ["compute_80"], "9.0", "compute_80"),
    (["sm_90a"], [], "9.0", "sm_90a"),
    (["sm_100a"], [], "10.3", None),  # arch-specific code runs on that exact capability only
    (["sm_120"], ["compute_120"], "8.9", None),  # PTX never runs on an older GPU
])
def test_runs_on(sass, ptx, cc, want):
    assert runs_on(GpuCode(sass=sass, ptx=ptx), cc) == want


# --- CD201 end to end: a torch install whose libtorch_cuda.so is the nvcc-built library ------------------------------

SITE = "/opt/venv/lib/python3.11/site-packages"


def _torch_machine(m, gpu):
    from kit import Gpu

    m.ld_conf("x86_64-linux-gnu.conf", ["/usr/lib/x86_64-linux-gnu"])
    m.driver("580.95.05", cuda=13000, gpus=[gpu])
    m.dist(SITE, "torch", "2.11.0+cu130", files={"torch/__init__.py": "", "torch/version.py": "cuda = '13.0'\n"})
    m.file(SITE + "/torch/lib/libtorch_cuda.so", (DATA / "libtorch_cuda.so").read_bytes(), mode=0o755)


def test_cd201_names_the_architectures_read_from_the_binary(machine, check_json):
    from kit import Gpu

    _torch_machine(machine, Gpu())
    _, doc = check_json(machine, env={"PYTHONPATH": ""})
    [hit] = [f for f in doc["findings"] if f["id"] == "CD201"]
    assert hit["severity"] == "info", hit
    assert "sm_80, sm_90, sm_90a, sm_100, sm_120 cubins and compute_120 PTX" in hit["title"]
    assert "runs natively (sm_90" in hit["title"]


def test_cd201_error_when_the_binary_lacks_the_gpu(machine, check_json):
    from kit import Gpu

    _torch_machine(machine, Gpu(name="Tesla V100-SXM2-16GB", cc="7.0", memory_mib=16160))
    _, doc = check_json(machine)
    [hit] = [f for f in doc["findings"] if f["id"] == "CD201"]
    assert hit["severity"] == "error" and "no kernels for" in hit["title"]
    assert "libtorch_cuda.so carries sm_80" in hit["detail"] and hit["fix"]


def test_portable_cubin_named_before_arch_specific():
    assert runs_on(GpuCode(sass=["sm_80", "sm_90", "sm_90a"]), "9.0") == "sm_90"


def test_each_jax_distribution_reads_its_own_libraries(machine, check_json):
    from kit import Gpu

    machine.ld_conf("x86_64-linux-gnu.conf", ["/usr/lib/x86_64-linux-gnu"])
    machine.driver("580.95.05", cuda=13000, gpus=[Gpu()])
    machine.dist(SITE, "jax-cuda13-pjrt", "0.7.1")
    machine.dist(SITE, "jax-cuda13-plugin", "0.7.1")
    machine.file(SITE + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so", (DATA / "libtorch_cuda.so").read_bytes())
    machine.file(SITE + "/jax_cuda13_plugin/_linalg.so", (DATA / "libptx_only.so").read_bytes())
    _, doc = check_json(machine)
    code = {fw["name"]: [g["library"].rsplit("/", 1)[1] for g in fw["gpu_code"]]
            for fw in doc["facts"]["python"]["frameworks"]}
    assert code["jax-cuda13-pjrt"] == ["xla_cuda_plugin.so"] and code["jax-cuda13-plugin"] == ["_linalg.so"]
    plugin = [f for f in doc["findings"] if f["id"] == "CD201" and "jax-cuda13-plugin" in f["title"]]
    assert plugin and "compute_75" in plugin[0]["title"] and "through compute_75 PTX" in plugin[0]["title"]


def test_the_probe_reads_a_library_by_pread_with_the_same_answer(tmp_path):
    """The probe reads headers with pread (no mmap pages left in memory) and must see what a full read sees."""
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes.gpu_code import read_libraries

    (tmp_path / "lib").mkdir()
    lib = tmp_path / "lib" / "libtorch_cuda.so"
    lib.write_bytes((DATA / "libtorch_cuda.so").read_bytes())
    whole = gpu_code(lib.read_bytes())
    found = read_libraries(Host(str(tmp_path)), ["/lib/libtorch_cuda.so"])[0]
    assert found["sass"] == whole.sass and found["ptx"] == whole.ptx and found["entries"] == whole.entries


def test_a_library_scan_is_remembered_while_the_file_is_the_same_and_read_again_when_it_changes(tmp_path,
                                                                                                  monkeypatch):
    from cudnn_doctor import parsed_cache
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes import gpu_code as probe

    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    scans = []
    real_scan = probe._scan
    monkeypatch.setattr(probe, "_scan", lambda fd, size: scans.append(size) or real_scan(fd, size))
    (tmp_path / "lib").mkdir()
    lib = tmp_path / "lib" / "libtorch_cuda.so"
    lib.write_bytes((DATA / "libtorch_cuda.so").read_bytes())
    host = Host(str(tmp_path))
    first = probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    again = probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    assert len(scans) == 1 and {k: v for k, v in again.items() if k != "ms"} == {
        k: v for k, v in first.items() if k != "ms"}
    # a rebuild of the same size in place (new mtime and ctime) is read afresh, and so is a replaced file
    os.utime(lib, ns=(1, 1))
    probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    lib.unlink()
    (tmp_path / "lib" / "libtorch_cuda.so").write_bytes(b"\0" * 100)
    assert probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0] is None
    assert probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0] is None  # "no GPU code" is remembered too
    assert len(scans) == 3
    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", "off")
    calls = []
    assert parsed_cache.remember("t", ("x",), lambda: calls.append(1) or 5) == 5
    assert parsed_cache.remember("t", ("x",), lambda: calls.append(1) or 5) == 5 and len(calls) == 2


def test_a_library_known_to_the_cache_is_not_opened_and_one_replaced_meanwhile_is_read_but_not_remembered(
        tmp_path, monkeypatch):
    """The cache is asked by each library's stat; only a miss opens the file, and a file whose open shows another
    identity than its stat did (replaced between the two) is read as it is now, never stored under the old one."""
    from cudnn_doctor.host import Host
    from cudnn_doctor.probes import gpu_code as probe

    monkeypatch.setenv("CUDNN_DOCTOR_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "lib").mkdir()
    lib = tmp_path / "lib" / "libtorch_cuda.so"
    lib.write_bytes((DATA / "libtorch_cuda.so").read_bytes())
    host = Host(str(tmp_path))
    first = probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    opened = []
    real_open = Host.open_binary
    monkeypatch.setattr(Host, "open_binary", lambda self, p: opened.append(p) or real_open(self, p))
    again = probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    assert opened == [] and again["sass"] == first["sass"]

    real_stat = Host.stat
    stale = os.stat_result(tuple(real_stat(host, "/lib/libtorch_cuda.so"))[:8] + (1, 1))  # another mtime/ctime
    monkeypatch.setattr(Host, "stat", lambda self, p: stale)
    scans = []
    real_scan = probe._scan
    monkeypatch.setattr(probe, "_scan", lambda fd, size: scans.append(size) or real_scan(fd, size))
    changed = probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    assert changed["sass"] == first["sass"] and len(scans) == 2  # scanned, found replaced, read as it is now
    probe.read_libraries(host, ["/lib/libtorch_cuda.so"])[0]
    assert len(scans) == 4  # nothing was remembered under the stale identity
