"""Failures the fuzz suite found in `check`, each pinned by a plain example."""
from __future__ import annotations

import pytest

from cudnn_doctor.host import Host
from cudnn_doctor.probes.loader import read_conf_dirs
from cudnn_doctor.readers.headers import parse_cuda_h, parse_cudnn_header
from cudnn_doctor.readers.version_files import parse_version_json
from cudnn_doctor.versions import small_int


def test_self_including_ld_so_conf_is_read_once_not_exponentially(tmp_path, monkeypatch):
    """Two `include` lines of itself made 2**9 reads of a 1000-line file: `check` never returned."""
    (tmp_path / "etc" / "ld.so.conf.d").mkdir(parents=True)
    lines = ["include /etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf", "/opt/a/lib"] * 334
    (tmp_path / "etc" / "ld.so.conf").write_text("\n".join(lines) + "\n")
    (tmp_path / "etc" / "ld.so.conf.d" / "loop.conf").write_text("include /etc/ld.so.conf\ninclude loop.conf\n"
                                                                 "/opt/b/lib\n")
    host = Host(str(tmp_path))
    reads = []
    real = host.read_text
    monkeypatch.setattr(host, "read_text", lambda path, *a, **k: reads.append(path) or real(path, *a, **k))
    assert read_conf_dirs(host) == ["/opt/b/lib", "/opt/a/lib"]  # loop.conf is included before line 3
    assert sorted(reads) == ["/etc/ld.so.conf", "/etc/ld.so.conf.d/loop.conf"]


def test_a_conf_file_included_twice_keeps_ldconfig_order(tmp_path):
    (tmp_path / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (tmp_path / "etc" / "ld.so.conf").write_text("include /etc/ld.so.conf.d/a.conf\n/opt/x\n"
                                                  "include /etc/ld.so.conf.d/*.conf\n")
    (tmp_path / "etc" / "ld.so.conf.d" / "a.conf").write_text("/opt/a\n")
    (tmp_path / "etc" / "ld.so.conf.d" / "b.conf").write_text("/opt/b\n")
    assert read_conf_dirs(Host(str(tmp_path))) == ["/opt/a", "/opt/x", "/opt/b"]


def test_version_json_nested_past_the_recursion_limit_is_garbage_not_a_crash():
    assert parse_version_json("[" * 100000) == (None, None)


@pytest.mark.parametrize("value", ["9" * 5000, "9" * 19])
def test_version_macros_with_absurd_digit_counts_are_garbage(value):
    """int() refuses more than 4300 digits (ValueError in the cuDNN probe); such a header has no version."""
    header = "#define CUDNN_MAJOR %s\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n" % value
    assert parse_cudnn_header(header) is None
    assert parse_cuda_h("#define CUDA_VERSION %s\n" % value) is None


def test_small_int_takes_only_plain_ascii_decimals():
    assert small_int("12") == 12 and small_int("0") == 0
    assert small_int("\u00b2") is None and small_int("\u0663") is None and small_int("") is None
    assert small_int(None) is None and small_int("1" * 19) is None and small_int("-1") is None


def test_huge_cudnn_requirement_in_metadata_is_ignored(machine, check_json):
    machine.dist("/opt/venv/lib/python3.12/site-packages", "torch", "2.5.1",
                 requires=["nvidia-cudnn-cu12==%s" % ("9" * 5000)])
    machine.file("/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", b"")
    code, doc = check_json(machine, env={"VIRTUAL_ENV": "/opt/venv"})
    assert code in (0, 1)
    assert [fw["name"] for fw in doc["facts"]["python"]["frameworks"]] == ["torch"]
    assert not [f for f in doc["findings"] if f["id"] == "CD001"], doc["findings"]


def test_libcuda_load_error_names_the_path_inside_the_root(machine, check_json):
    """dlopen's message names the doctor-side file; the report names it as seen under --root."""
    machine.driver("580.95.05")
    machine.file("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", b"")
    machine.ld_conf("x86_64-linux-gnu.conf", ["/usr/lib/x86_64-linux-gnu"])
    machine.ld_cache()
    _, doc = check_json(machine)
    error = doc["facts"]["driver"]["libcuda_error"]
    assert error and str(machine.root) not in error
    assert "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05" in error


def test_nul_bytes_in_ld_so_conf_end_the_line_as_in_ldconfig(tmp_path):
    """A binary ld.so.conf gave folder names with NUL bytes: the cuDNN and ld.so.cache probes raised ValueError."""
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "ld.so.conf").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\n/opt/lib\x00junk\n")
    assert read_conf_dirs(Host(str(tmp_path))) == ["\x7fELF\x02\x01\x01", "/opt/lib"]


def test_binary_ld_so_conf_gives_a_report_without_probe_errors(machine, check_json):
    machine.driver("580.95.05")
    machine.file("/etc/ld.so.conf", b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 40 + b"\n")
    code, doc = check_json(machine)
    assert not [f for f in doc["findings"] if f["id"] == "CD001"], doc["findings"]


def test_zip_member_with_an_empty_name_is_refused_not_a_crash(tmp_path):
    """zipfile's is_dir() raises IndexError on a '' name; `install` crashed with exit 3 instead of refusing."""
    import archive_factory as af
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    entries = af.linux_tree()[1][2:] + [af.entry("", data=b"")]
    archive = af.write_zip(tmp_path / "dl" / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.zip", entries)
    prefix = tmp_path / "prefix"
    result = CliRunner().invoke(app, ["install", str(archive), "--prefix", str(prefix), "--no-smoke"])
    assert result.exit_code == 1, (result.stderr, result.exception)
    assert "empty or NUL-containing name" in result.stderr
    assert not prefix.exists()
