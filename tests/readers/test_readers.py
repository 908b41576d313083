"""The readers layer on its own: pure functions of text, no machine needed."""
from __future__ import annotations

from cudnn_doctor.readers.ldconf import parse_ld_so_conf
from cudnn_doctor.readers.package_meta import (dist_info_name, dpkg_status_version, parse_conda_record,
                                               parse_metadata)


def test_ld_so_conf_keeps_folders_and_includes_in_order():
    text = "# comment\n/usr/local/cuda/lib64/ \ninclude ld.so.conf.d/*.conf /etc/extra.conf\nhwcap 0 nosegneg\n" \
           "/opt/old=libc5  # trailing comment\n/\n"
    assert parse_ld_so_conf(text) == [("dir", "/usr/local/cuda/lib64"), ("include", "ld.so.conf.d/*.conf"),
                                      ("include", "/etc/extra.conf"), ("dir", "/opt/old"), ("dir", "/")]


def test_package_records():
    assert dist_info_name("nvidia_cudnn_cu12-9.1.0.70.dist-info") == ("nvidia-cudnn-cu12", "9.1.0.70")
    assert dist_info_name("torch") is None
    meta = parse_metadata("Name: torch\nRequires-Dist: nvidia-cudnn-cu12==9.1.0.70\nRequires-Dist: sympy\n\n"
                          "Body: not a field\n")
    assert meta == {"Name": ["torch"], "Requires-Dist": ["nvidia-cudnn-cu12==9.1.0.70", "sympy"]}
    record = parse_conda_record('{"name": "pytorch", "version": "2.5.1", "build": "cuda12",'
                                ' "depends": ["cudnn >=9.1.1.17,<10.0a0", "libcudnn-dev", 3]}')
    assert record == {"name": "pytorch", "version": "2.5.1", "build": "cuda12",
                      "cudnn_depends": "cudnn >=9.1.1.17,<10.0a0"}
    assert parse_conda_record("[1, 2]") is None and parse_conda_record("{broken") is None
    status = "Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.14.0.64-1\n\n" \
             "Package: other\nVersion: 1\n"
    assert dpkg_status_version(status, "libcudnn9-cuda-12") == "9.14.0.64-1"
    assert dpkg_status_version(status, "libcudnn9") is None
