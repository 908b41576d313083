"""CD611 (a plain process loads another cuDNN than the build headers say) and CD410 (leftovers of a removed cuDNN)."""
from __future__ import annotations

import os

from kit import Gpu, build_ld_cache
from shellcheck_kit import ld_library_path_after

MA = "/usr/lib/x86_64-linux-gnu"
TK_LIB = "/usr/local/cuda-12.4/lib64"
TK_INC = "/usr/local/cuda-12.4/include"


def _base(m):
    m.ld_conf("x86_64-linux-gnu.conf", [MA])
    m.driver("550.54.15", cuda=12040, gpus=[Gpu(name="NVIDIA A100-SXM4-80GB", cc="8.0")])
    m.toolkit("12.4.1")


def _only(doc, rule_id):
    hits = [f for f in doc["findings"] if f["id"] == rule_id]
    assert hits, [(f["id"], f["severity"], f["title"]) for f in doc["findings"]]
    return hits


def test_ld_library_path_copy_differs_from_toolkit_headers(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", TK_LIB, TK_INC, cuda=12040)
    machine.file("/etc/ld.so.conf.d/cuda.conf", TK_LIB + "\n")
    machine.cudnn("9.5.0", "/opt/cudnn/lib64", None, cuda=12040)
    build_ld_cache(machine)
    _, doc = check_json(machine, env={"LD_LIBRARY_PATH": "/opt/cudnn/lib64"})
    [hit] = _only(doc, "CD611")
    assert "load cuDNN 9.5.0 but builds compile against cuDNN 9.1.0" in hit["title"]
    assert "LD_LIBRARY_PATH entry /opt/cudnn/lib64 is searched first" in hit["detail"]
    assert "/usr/local/cuda/include/cudnn_version.h (the header nvcc and gcc find first) says 9.1.0" in hit["detail"]
    assert ld_library_path_after([hit["fix"]], ["/opt/cudnn/lib64"]) == []


def test_earlier_ld_so_conf_folder_wins_over_the_toolkit_copy(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", TK_LIB, TK_INC, cuda=12040)
    machine.cudnn("9.3.0", "/opt/a/lib", None, cuda=12040)
    machine.file("/etc/ld.so.conf.d/00-a.conf", "/opt/a/lib\n")
    machine.file("/etc/ld.so.conf.d/10-cuda.conf", TK_LIB + "\n")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _only(doc, "CD611")
    assert "load cuDNN 9.3.0 but builds compile against cuDNN 9.1.0" in hit["title"]
    assert "ld.so.cache lists /opt/a/lib/libcudnn.so.9 first" in hit["detail"]
    assert hit["fix"].startswith("export LD_LIBRARY_PATH=/usr/local/cuda/lib64")


def test_matching_headers_and_library_are_quiet(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", TK_LIB, TK_INC, cuda=12040)
    machine.file("/etc/ld.so.conf.d/cuda.conf", TK_LIB + "\n")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    assert not [f for f in doc["findings"] if f["id"] in ("CD611", "CD410")]


def test_deleted_library_leaves_a_dangling_link_and_a_header(machine, check_json):
    """The issue's case: libcudnn.so.9.1.0 deleted, ldconfig dropped libcudnn.so.9, libcudnn.so and the header stay."""
    _base(machine)
    machine.cudnn("9.1.0", MA, "/usr/include/x86_64-linux-gnu", cuda=12040, subs=[],
                  header_name="cudnn_version_v9.h")
    os.unlink(machine.p(MA + "/libcudnn.so.9.1.0"))
    os.unlink(machine.p(MA + "/libcudnn.so.9"))
    build_ld_cache(machine)
    code, doc = check_json(machine)
    assert not [f for f in doc["findings"] if f["id"] == "CD401"], "leftovers are not absence"
    [hit] = _only(doc, "CD410")
    assert "Leftovers of cuDNN 9.1.0" in hit["title"]
    assert MA + "/libcudnn.so -> libcudnn.so.9" in hit["title"]
    assert "/usr/include/x86_64-linux-gnu/cudnn_version_v9.h" in hit["title"]
    # Under --root the fix names the root's files from outside it (remedies/machine.py).
    r = str(machine.root)
    assert "cudnn-doctor install --version 9.1.0 --cuda 12 --cuda-home %s/usr/local/cuda" % r in hit["fix"]
    assert hit["fix"].startswith("Remove the leftovers and install cuDNN 9.1.0 into the toolkit: sudo rm -f "
                                 "%s/usr/include/x86_64-linux-gnu/cudnn_version_v9.h %s%s/libcudnn.so && " % (r, r, MA))
    assert "//" not in hit["fix"].replace("https://", "")


def test_library_without_its_soname_link(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", TK_LIB, TK_INC, cuda=12040, subs=["ops"])
    os.unlink(machine.p(TK_LIB + "/libcudnn_ops.so.9"))
    machine.file("/etc/ld.so.conf.d/cuda.conf", TK_LIB + "\n")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    hits = [f for f in _only(doc, "CD410") if "soname link" in f["title"]]
    assert hits and "libcudnn_ops.so.9.1.0" in hits[0]["title"] and "libcudnn_ops.so.9" in hits[0]["title"]
    assert hits[0]["fix"].startswith("sudo ldconfig")


def test_leftovers_beside_another_major_are_removed_first(machine, check_json):
    _base(machine)
    machine.cudnn("9.1.0", TK_LIB, TK_INC, cuda=12040)
    machine.file("/etc/ld.so.conf.d/cuda.conf", TK_LIB + "\n")
    machine.file("/usr/include/x86_64-linux-gnu/cudnn_version_v8.h",
                 "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n")
    machine.link(MA + "/libcudnn.so", "libcudnn.so.8")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _only(doc, "CD410")
    assert hit["severity"] == "warning" and "Leftovers of cuDNN 8.9.7" in hit["title"]
    r = str(machine.root)  # under --root the fix names the root's files from outside it
    assert hit["fix"].startswith("Remove the leftovers: sudo rm -f %s/usr/include/x86_64-linux-gnu/cudnn_version_v8.h "
                                 "%s%s/libcudnn.so   (or restore cuDNN 8.9.7: sudo /opt/cudnn-doctor/bin/cudnn-doctor install --version 8.9.7 "
                                 "--cuda 12 --cuda-home %s/usr/local/cuda)" % (r, r, MA, r))


def test_no_install_command_for_a_build_nvidia_never_made(machine, check_json):
    """cuDNN 7.6.5 was never built for CUDA 12: only the removal is offered."""
    _base(machine)
    machine.file("/usr/include/cudnn.h", "#define CUDNN_MAJOR 7\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 5\n")
    build_ld_cache(machine)
    _, doc = check_json(machine)
    [hit] = _only(doc, "CD410")
    assert hit["fix"] == ("Remove the leftovers: sudo rm -f %s/usr/include/cudnn.h, then install cuDNN again."
                          % machine.root)  # under --root, the root's file named from outside it


def test_human_report_names_the_leftovers(machine):
    from clirunner import CliRunner

    from cudnn_doctor.cli import app

    _base(machine)
    machine.file("/usr/include/x86_64-linux-gnu/cudnn_version_v9.h",
                 "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")
    machine.link(MA + "/libcudnn.so", "libcudnn.so.9")
    build_ld_cache(machine)
    out = CliRunner().invoke(app, ["check", "--root", str(machine.root)], env={"NO_COLOR": "1"}).stdout
    assert "leftover of cuDNN 9.1.0: /usr/include/x86_64-linux-gnu/cudnn_version_v9.h" in out
    assert "No cuDNN library was found" not in out and "CD410" in out
