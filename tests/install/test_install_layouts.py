"""Every official archive layout installs into the right folders, keeps links, is readable, and rolls back exactly."""
from __future__ import annotations

import json
import os
import stat

import pytest

import archive_factory as af
from kit import cudnn_header, have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


@pytest.fixture
def compat_ok(monkeypatch):
    """Layout tests are about files, not the compatibility table: every pair is accepted."""
    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict",
                        lambda cudnn, built, toolkit: (True, "accepted by the test"))


def _install(*args):
    result = af.invoke("install", *args, "--no-smoke")
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result


def _rollback(home, flag="--cuda-home"):
    result = af.invoke("rollback", flag, home)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def _assert_world_readable(paths):
    for p in paths:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            continue
        assert st.st_mode & 0o444 == 0o444, "%s is %o" % (p, st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            assert st.st_mode & 0o555 == 0o555


def test_linux_tar_xz_into_runfile_toolkit_keeps_links_and_rolls_back(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    before = af.snapshot(home)
    _install(archive, "--cuda-home", home)
    lib = home / "lib64"
    assert (lib / "libcudnn.so.9.1.0").is_file() and not (lib / "libcudnn.so.9.1.0").is_symlink()
    assert os.readlink(lib / "libcudnn.so.9") == "libcudnn.so.9.1.0"  # the cp -P rule
    assert os.readlink(lib / "libcudnn_ops.so") == "libcudnn_ops.so.9"
    assert "CUDNN_MINOR 1" in (home / "include" / "cudnn_version.h").read_text()
    assert not (home / "LICENSE").exists() and not (lib / "LICENSE").exists()
    _assert_world_readable([lib / n for n in os.listdir(lib)] + [home / "include" / "cudnn.h"])
    _rollback(home)
    assert af.snapshot(home) == before


def test_deb_layout_installs_into_the_target_folder_lib64_links_to(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1", layout="deb"))
    archive = af.make("linux-xz", tmp_path / "dl")
    before = af.snapshot(home)
    _install(archive, "--cuda-home", home)
    real = home / "targets" / "x86_64-linux" / "lib"
    assert (real / "libcudnn_graph.so.9.1.0").is_file()
    assert os.path.islink(home / "lib64")  # the link itself is left alone
    assert (home / "targets" / "x86_64-linux" / "include" / "cudnn_version.h").is_file()
    _rollback(home)
    assert af.snapshot(home) == before


def test_sbsa_archive_into_an_sbsa_toolkit(machine, tmp_path, compat_ok):
    home = af.arm_toolkit(machine)
    archive = af.make("linux-sbsa", tmp_path / "dl")
    before = af.snapshot(home)
    result = _install(archive, "--cuda-home", home)
    assert (home / "targets" / "sbsa-linux" / "lib" / "libcudnn.so.9.1.0").is_file()
    assert "not this machine" in result.stdout or "cannot be loaded here" in result.stdout
    _rollback(home)
    assert af.snapshot(home) == before


def test_sbsa_archive_into_an_x86_toolkit_is_refused_without_force(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-sbsa", tmp_path / "dl")
    before = af.snapshot(tmp_path)
    result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke")
    assert result.exit_code == 1
    assert "sbsa" in result.stderr and "--force" in result.stderr and len(result.stderr.splitlines()) == 1
    assert af.snapshot(tmp_path) == before
    _install(archive, "--cuda-home", home, "--force")
    assert (home / "lib64" / "libcudnn.so.9.1.0").is_file()


def test_legacy_7x_tgz_into_a_cuda_10_toolkit(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("10.2.89", layout="txt"))
    archive = af.make("legacy-linux", tmp_path / "dl")
    before = af.snapshot(home)
    result = _install(archive, "--cuda-home", home)
    lib = home / "lib64"
    assert os.readlink(lib / "libcudnn.so.7") == "libcudnn.so.7.6.5"
    assert (lib / "libcudnn_static.a").is_file()
    assert "CUDNN_MAJOR 7" in (home / "include" / "cudnn.h").read_text()
    assert "reports cuDNN 7.6.5" in result.stdout
    assert not list(home.rglob("NVIDIA_SLA*"))
    _rollback(home)
    assert af.snapshot(home) == before


def test_macos_tgz_into_a_macos_toolkit(machine, tmp_path, compat_ok):
    home = af.macos_toolkit(machine)
    archive = af.make("legacy-macos", tmp_path / "dl")
    before = af.snapshot(home)
    _install(archive, "--cuda-home", home)
    assert (home / "lib" / "libcudnn.7.dylib").is_file()
    assert os.readlink(home / "lib" / "libcudnn.dylib") == "libcudnn.7.dylib"
    assert not (home / "lib64").exists()
    _rollback(home)
    assert af.snapshot(home) == before


@pytest.mark.parametrize("kind,version,cuda", [("windows-new", "9.1.0", "12"), ("windows-old", "7.6.5", "10.2")])
def test_windows_zip_into_a_windows_toolkit(machine, tmp_path, compat_ok, kind, version, cuda):
    home = af.windows_toolkit(machine)
    archive = af.make(kind, tmp_path / "dl", version=version, cuda=cuda, build="32")
    before = af.snapshot(home)
    _install(archive, "--cuda-home", home)
    major = version.split(".")[0]
    assert (home / "bin" / ("cudnn64_%s.dll" % major)).is_file()
    assert (home / "lib" / "x64" / "cudnn.lib").is_file()
    assert (home / "include" / "cudnn.h").is_file()
    _assert_world_readable(list((home / "bin").iterdir()))
    _rollback(home)
    assert af.snapshot(home) == before


def test_windows_zip_into_a_linux_toolkit_is_refused(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("windows-new", tmp_path / "dl")
    before = af.snapshot(tmp_path)
    result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke")
    assert result.exit_code == 1 and "windows" in result.stderr
    assert af.snapshot(tmp_path) == before


def test_wheel_into_a_toolkit_adds_dev_links(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    wheel = af.make("wheel", tmp_path / "dl")
    before = af.snapshot(home)
    result = _install(wheel, "--cuda-home", home)
    lib = home / "lib64"
    assert (lib / "libcudnn_ops.so.9").is_file() and not (lib / "libcudnn_ops.so.9").is_symlink()
    assert os.readlink(lib / "libcudnn_ops.so") == "libcudnn_ops.so.9"
    assert not (lib / "__init__.py").exists() and not (home / "include" / "__init__.py").exists()
    assert "reports cuDNN 9.1.0" in result.stdout
    _rollback(home)
    assert af.snapshot(home) == before


def test_wheel_into_a_new_prefix_and_rollback_removes_it(tmp_path, compat_ok):
    wheel = af.make("wheel", tmp_path / "dl")
    prefix = tmp_path / "opt" / "cudnn"
    (tmp_path / "opt").mkdir()
    before = af.snapshot(tmp_path)
    _install(wheel, "--prefix", prefix)
    assert (prefix / "lib" / "libcudnn.so.9").is_file()
    assert (prefix / "include" / "cudnn_version.h").is_file()
    _assert_world_readable([prefix / "lib", prefix / "include"])
    _rollback(prefix, "--prefix")
    assert af.snapshot(tmp_path) == before


def test_tar_xz_into_a_prefix_uses_include_and_lib(tmp_path, compat_ok):
    archive = af.make("linux-xz", tmp_path / "dl")
    prefix = tmp_path / "prefix"
    prefix.mkdir()
    _install(archive, "--prefix", prefix)
    assert os.readlink(prefix / "lib" / "libcudnn.so") == "libcudnn.so.9"
    assert (prefix / "include" / "cudnn_graph.h").is_file()


def test_9_over_8_keeps_the_8_runtime_and_retires_its_headers(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    machine.cudnn("8.9.7", str(home.relative_to(machine.root)) + "/lib64",
                  str(home.relative_to(machine.root)) + "/include", cuda=12020)
    machine.file(str(home.relative_to(machine.root)) + "/include/cudnn_ops_infer.h", "/* 8 */\n")
    before = af.snapshot(home)
    archive = af.make("linux-xz", tmp_path / "dl")
    result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    retired = {os.path.basename(f["dest"]) for f in doc["plan"]["files"] if f["action"] == "retire"}
    lib = home / "lib64"
    # cuDNN 8's runtime (own sonames) stays for programs built against it ...
    assert (lib / "libcudnn_ops_infer.so.8.9.7").is_file() and os.path.islink(lib / "libcudnn_ops_infer.so.8")
    # ... its unversioned dev link and headers go, so builds cannot mix 8 headers with 9 libraries.
    assert "libcudnn_ops_infer.so" in retired and not (lib / "libcudnn_ops_infer.so").exists()
    assert "cudnn_ops_infer.h" in retired and not (home / "include" / "cudnn_ops_infer.h").exists()
    assert os.readlink(lib / "libcudnn.so") == "libcudnn.so.9"
    _rollback(home)
    assert af.snapshot(home) == before


def test_9_14_over_9_1_retires_the_older_same_major_files(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    rel = str(home.relative_to(machine.root))
    machine.cudnn("9.1.0", rel + "/lib64", rel + "/include", cuda=12040)
    machine.lib(rel + "/lib64/libcudnn_engines_tensor_ir.so.9.1.0", "cudnn", soname="libcudnn_engines_tensor_ir.so.9")
    before = af.snapshot(home)
    archive = af.make("linux-xz", tmp_path / "dl", version="9.14.0", build="64")
    _install(archive, "--cuda-home", home)
    lib = home / "lib64"
    leftovers = sorted(n for n in os.listdir(lib) if n.startswith("libcudnn") and "9.1.0" in n)
    assert leftovers == []  # no 9.1.0 file may sit next to 9.14.0 (failure D3)
    assert os.readlink(lib / "libcudnn_ops.so.9") == "libcudnn_ops.so.9.14.0"
    _rollback(home)
    assert af.snapshot(home) == before


def test_dry_run_lists_every_file_and_changes_nothing(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    rel = str(home.relative_to(machine.root))
    machine.file(rel + "/include/cudnn_version.h", cudnn_header("9.0.0"))
    archive = af.make("linux-xz", tmp_path / "dl")
    before = af.snapshot(tmp_path)
    result = af.invoke("install", archive, "--cuda-home", home, "--dry-run")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for name in ("lib64/libcudnn.so.9.1.0", "lib64/libcudnn_adv.so -> libcudnn_adv.so.9", "include/cudnn.h"):
        assert name in out
    assert "include/cudnn_version.h  (replaces the existing one)" in out
    assert "nothing was changed" in out
    assert af.snapshot(tmp_path) == before


def test_json_plan_and_result_use_the_envelope(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    dry = json.loads(af.invoke("install", archive, "--cuda-home", home, "--dry-run", "--json").stdout)
    assert dry["command"] == "install" and dry["exit_code"] == 0 and dry["dry_run"] is True
    assert dry["plan"]["archive"]["cudnn_version"] == "9.1.0"
    assert dry["plan"]["archive"]["built_for_cuda"] == "12"
    assert dry["plan"]["archive"]["library_cudart"] == "12.4"
    assert dry["plan"]["counts"]["new"] == len(dry["plan"]["files"])
    result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke", "--json")
    doc = json.loads(result.stdout)
    assert doc["installed"] is True and doc["verify"]["ok"] is True and doc["verify"]["version"] == "9.1.0"
    assert doc["smoke"]["summary"].startswith("skipped")
    back = json.loads(af.invoke("rollback", "--cuda-home", home, "--json").stdout)
    assert back["command"] == "rollback" and back["rolled_back"]["cudnn_version"] == "9.1.0"


def test_cuda_home_comes_from_the_environment(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    machine.link("/opt/cuda", "../usr/local/cuda-12.4")  # a link, like /usr/local/cuda
    result = af.invoke("install", archive, "--no-smoke", env={"CUDA_HOME": str(machine.p("/opt/cuda"))})
    assert result.exit_code == 0, result.stderr
    assert (home / "lib64" / "libcudnn.so.9.1.0").is_file()  # the link /usr/local/cuda was followed


def test_smoke_failure_is_reported_not_rolled_back(machine, tmp_path, compat_ok, monkeypatch):
    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")

    class Failed:
        ok, summary, diagnosis, fix = False, "no CUDA device", "no GPU on this machine", "run it on a GPU machine"

        def to_dict(self):
            return {"ok": False, "summary": self.summary}

    import cudnn_doctor.smoke as smoke_pkg

    monkeypatch.setattr(smoke_pkg, "run_smoke", lambda library, **kw: Failed(), raising=False)
    result = af.invoke("install", archive, "--cuda-home", home)
    assert result.exit_code == 0, result.stderr  # the policy: files proven by the load check stay, exit 0
    assert "Installed; smoke test failed: no CUDA device (exit 0: the files are in place; fix the driver/GPU " \
           "and run `cudnn-doctor smoke`)" in result.stdout
    assert "Installed. Undo" not in result.stdout  # one closing line, not a plain success line as well
    assert (home / "lib64" / "libcudnn.so.9.1.0").is_file()


def test_exit_policy_is_documented_in_help():
    result = af.invoke("install", "--help")
    text = " ".join(result.stdout.split())
    assert "smoke test fails" in text and "exit" in text.lower() and "--no-check" in text


def test_smoke_unavailable_is_a_note(machine, tmp_path, compat_ok, monkeypatch):
    import sys
    import types

    home = machine.p(machine.toolkit("12.4.1"))
    archive = af.make("linux-xz", tmp_path / "dl")
    monkeypatch.setitem(sys.modules, "cudnn_doctor.smoke", types.ModuleType("cudnn_doctor.smoke"))
    result = af.invoke("install", archive, "--cuda-home", home, "--json")
    assert result.exit_code == 0, result.stderr
    smoke = json.loads(result.stdout)["smoke"]
    assert smoke["available"] is False and "not available" in smoke["summary"]


def test_retarred_archive_with_dot_entries_and_python_lzma(machine, tmp_path, compat_ok, monkeypatch):
    """`tar -C dir -cJf x.tar.xz .` style names, read with Python's lzma when there is no xz binary."""
    import cudnn_doctor.install.archive as archive_mod

    name, entries = af.linux_tree()
    entries = [af.entry(".", "dir")] + [dict(e, name="./" + str(e["name"])) for e in entries]
    archive = af.write_tar(tmp_path / "dl" / (name + ".tar.xz"), entries)
    monkeypatch.setattr(archive_mod.shutil, "which", lambda name: None)
    home = machine.p(machine.toolkit("12.4.1"))
    _install(archive, "--cuda-home", home)
    assert os.readlink(home / "lib64" / "libcudnn.so.9") == "libcudnn.so.9.1.0"


def test_wheel_with_dist_info_first_still_gets_dev_links(machine, tmp_path, compat_ok):
    name, entries = af.wheel_tree()
    entries = sorted(entries, key=lambda e: ".dist-info" not in str(e["name"]))
    wheel = af.write_zip(tmp_path / "dl" / (name + ".whl"), entries)
    home = machine.p(machine.toolkit("12.4.1"))
    result = _install(wheel, "--cuda-home", home)
    assert os.readlink(home / "lib64" / "libcudnn.so") == "libcudnn.so.9"
    assert "for CUDA 12" in result.stdout


def test_cudnn_frontend_headers_are_left_alone(machine, tmp_path, compat_ok):
    home = machine.p(machine.toolkit("12.4.1"))
    rel = str(home.relative_to(machine.root))
    machine.file(rel + "/include/cudnn_frontend.h", "/* separate project */\n")
    machine.file(rel + "/include/cudnn_ops_infer.h", "/* cuDNN 8 leftover */\n")
    _install(af.make("linux-xz", tmp_path / "dl"), "--cuda-home", home)
    assert (home / "include" / "cudnn_frontend.h").exists()
    assert not (home / "include" / "cudnn_ops_infer.h").exists()
