"""Pure rules of the installer: where members go, which old files retire, what names say."""
from __future__ import annotations

import pytest

from cudnn_doctor.install.archive import Member
from cudnn_doctor.install.errors import Refusal
from cudnn_doctor.install.layout import (cuda_label_from_names, full_version_of, major_of, platform_from_names,
                                         role_of, stale_files)
from cudnn_doctor.install.safety import Checker, Limits, clean_name


@pytest.mark.parametrize("name,expected", [
    ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn.so.9", ("lib", "libcudnn.so.9")),
    ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive/include/cudnn.h", ("include", "cudnn.h")),
    ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive/LICENSE", None),
    ("cuda/lib64/libcudnn_static.a", ("lib", "libcudnn_static.a")),
    ("cuda/lib/libcudnn.7.dylib", ("lib", "libcudnn.7.dylib")),
    ("cuda/lib/x64/cudnn.lib", ("implib", "cudnn.lib")),
    ("cuda/bin/cudnn64_7.dll", ("bin", "cudnn64_7.dll")),
    ("cuda/NVIDIA_SLA_cuDNN_Support.txt", None),
    ("nvidia/cudnn/lib/libcudnn_ops.so.9", ("lib", "libcudnn_ops.so.9")),
    ("nvidia/cudnn/lib/__init__.py", None),
    ("nvidia/__init__.py", None),
    ("nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA", None),
    ("cudnn-x/lib/libz.so.1", None),  # only cuDNN's own files, like the recipe's libcudnn* glob
])
def test_role_of(name, expected):
    assert role_of(name) == expected


@pytest.mark.parametrize("name,major", [
    ("libcudnn.so.9", 9), ("libcudnn_ops.so.9.1.0", 9), ("libcudnn_ops_infer.so.8.9.7", 8),
    ("libcudnn.so", None), ("libcudnn_static.a", None), ("libcudnn_static_v8.a", 8), ("cudnn_version_v8.h", 8),
    ("cudnn.h", None), ("cudnn64_8.dll", 8), ("cudnn_ops64_9.dll", 9), ("cudnn.lib", None),
    ("libcudnn.7.dylib", 7), ("libcudnn.dylib", None),
])
def test_major_of(name, major):
    assert major_of(name) == major


def test_full_version_of():
    assert full_version_of("libcudnn_ops.so.9.14.0") == "9.14.0"
    assert full_version_of("libcudnn.so.9") is None


def test_stale_files_policy():
    existing = ["libcudnn.so", "libcudnn.so.8", "libcudnn.so.8.9.7", "libcudnn_ops_infer.so",
                "libcudnn_ops_infer.so.8", "libcudnn_ops_infer.so.8.9.7", "libcudnn_static_v8.a",
                "libcudnn_ops.so.9.1.0", "libcudnn_engines_tensor_ir.so.9", "libcudart.so.12", "cudnn_ops_infer.h"]
    incoming = ["libcudnn.so", "libcudnn.so.9", "libcudnn.so.9.14.0", "libcudnn_ops.so.9", "libcudnn_ops.so.9.14.0"]
    retired = dict(stale_files(existing, incoming, 9))
    assert set(retired) == {"libcudnn_ops_infer.so", "libcudnn_ops.so.9.1.0", "libcudnn_engines_tensor_ir.so.9",
                            "cudnn_ops_infer.h"}
    assert "D3" in retired["libcudnn_ops.so.9.1.0"] and "D7" in retired["cudnn_ops_infer.h"]
    # cuDNN 8's runtime and versioned static lib stay; other libraries are never touched.
    assert "libcudnn.so.8.9.7" not in retired and "libcudart.so.12" not in retired


@pytest.mark.parametrize("names,expected", [
    (("cudnn-linux-sbsa-9.23.0.39_cuda13-archive",), ("linux", "sbsa")),
    (("cudnn-linux-x86_64-8.9.7.29_cuda12-archive",), ("linux", "x86_64")),
    (("cuda", "cudnn-10.2-linux-x64-v7.6.5.32.tgz"), ("linux", "x86_64")),
    (("cuda", "cudnn-10.2-osx-x64-v7.6.5.32.tgz"), ("macos", "x86_64")),
    (("cuda", "cudnn-10.2-windows10-x64-v7.6.5.32.zip"), ("windows", "x86_64")),
    (("nvidia", "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_aarch64.whl"), ("linux", "sbsa")),
    (("cuda", "renamed.tgz"), (None, None)),
])
def test_platform_from_names(names, expected):
    assert platform_from_names(*names) == expected


@pytest.mark.parametrize("names,label", [
    (("cudnn-linux-x86_64-9.1.0.70_cuda12-archive",), "12"),
    (("cudnn-linux-x86_64-8.6.0.163_cuda11-archive",), "11"),
    (("cuda", "cudnn-10.2-linux-x64-v7.6.5.32.tgz"), "10.2"),
    (("nvidia", "nvidia_cudnn_cu13-9.19.0.56.dist-info"), "13"),
    (("cuda", "cudnn.tgz"), None),
])
def test_cuda_label_from_names(names, label):
    assert cuda_label_from_names(*names) == label


@pytest.mark.parametrize("name", ["/etc/passwd", "C:/Windows/x.dll", "a/../../b", "..", ""])
def test_clean_name_refuses(name):
    with pytest.raises(Refusal):
        clean_name(Member(name, "file", 1, 0o644))


def test_clean_name_normalises():
    assert clean_name(Member("./cuda//include/./cudnn.h", "file", 1, 0o644)) == "cuda/include/cudnn.h"
    assert clean_name(Member("cuda\\include\\cudnn.h".replace("\\", "/"), "file", 1, 0o644)) == "cuda/include/cudnn.h"


def test_checker_counts_members_and_bytes():
    checker = Checker(Limits(max_member=100, max_total=150, max_members=3))
    checker.check(Member("a/libcudnn.so.9.1.0", "file", 100, 0o644))
    with pytest.raises(Refusal, match="unpacks to more than 150"):
        checker.check(Member("a/libcudnn_ops.so.9.1.0", "file", 60, 0o644))
    checker = Checker(Limits(max_members=2))
    checker.check(Member("a", "dir", 0, 0o755))
    checker.check(Member("a/b", "dir", 0, 0o755))
    with pytest.raises(Refusal, match="more than 2 members"):
        checker.check(Member("a/c", "dir", 0, 0o755))


def test_lying_member_is_bounded_while_writing(tmp_path):
    import os

    from cudnn_doctor.install.safety import CountingWriter

    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    try:
        writer = CountingWriter(fd, Member("x", "file", 10, 0o644), Limits())
        with pytest.raises(Refusal, match="more data than its header declares"):
            writer.write(b"\0" * (1 << 17))
    finally:
        os.close(fd)


def test_toolkit_version_is_read_like_check_reads_it(tmp_path):
    """One reader (probes.toolkit): a toolkit with neither version file nor cuda.h still has libcudart's name."""
    import os

    from cudnn_doctor.install.target import resolve

    (tmp_path / "bin").mkdir()
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libcudart.so.12.4.127").write_bytes(b"not really ELF")
    os.symlink("libcudart.so.12.4.127", tmp_path / "lib64" / "libcudart.so.12")
    target = resolve(str(tmp_path), None, {})
    assert target.cuda_version == "12.4" and "libcudart" in target.cuda_version_source
    (tmp_path / "version.json").write_text('{"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}')
    target = resolve(str(tmp_path), None, {})
    assert (target.cuda_version, target.cuda_version_source) == ("12.4.1", str(tmp_path / "version.json"))


@pytest.mark.parametrize("machine,order,expected", [
    (62, "little", "x86_64"), (183, "little", "sbsa"), (21, "little", "ppc64le"), (3, "little", None),
])
def test_elf_arch_uses_the_probes_elf_reader(tmp_path, machine, order, expected):
    from cudnn_doctor.install.inspect import elf_arch

    head = bytearray(64)
    head[:4], head[4], head[5] = b"\x7fELF", 2, 1 if order == "little" else 2
    head[18:20] = machine.to_bytes(2, order)
    path = tmp_path / "lib.so"
    path.write_bytes(bytes(head))
    assert elf_arch(str(path)) == expected
    path.write_bytes(b"MZ not elf")
    assert elf_arch(str(path)) is None
