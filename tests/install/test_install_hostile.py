"""Hostile, damaged and wrong archives are refused with one line, and nothing changes anywhere."""
from __future__ import annotations

import json
import zipfile

import pytest

import archive_factory as af
from archive_factory import entry
from kit import have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")


@pytest.fixture
def world(machine, tmp_path, monkeypatch):
    """A toolkit with cuDNN 9.0 in it, an archive folder, and temp files kept inside tmp_path."""
    base = af.toolkit_with_cudnn9(machine, tmp_path, monkeypatch)
    (tmp_path / "dl").mkdir()
    return dict(base, dl=tmp_path / "dl")


def refused(world, archive, *extra, code=1, expect=""):
    """Runs the install and checks: exit code, one line on stderr, and not one byte changed."""
    before = af.snapshot(world["tmp"])
    result = af.invoke("install", archive, "--cuda-home", world["home"], "--no-smoke", *extra)
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudnn-doctor: error: "), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert expect.lower() in lines[0].lower()
    assert "fix:" in lines[0]
    assert af.snapshot(world["tmp"]) == before
    return lines[0]


def _tree_with(*bad, top=None):
    name, entries = af.linux_tree()
    top = top or name
    return name, entries + [dict(e, name=e["name"].replace("TOP", top)) for e in bad]


def _tar(world, *bad, compression="xz"):
    name, entries = _tree_with(*bad)
    return af.write_tar(world["dl"] / (name + ".tar.xz"), entries, compression)


@pytest.mark.parametrize("bad,expect", [
    (entry("/etc/cudnn_evil.h", data=b"x"), "absolute path"),
    (entry("TOP/include/../../../cudnn_evil.h", data=b"x"), "'..'"),
    (entry("TOP/lib/libcudnn_evil.so", "symlink", target="../../../../etc/passwd"), "escapes"),
    (entry("TOP/lib/libcudnn_evil.so", "symlink", target="/etc/passwd"), "absolute path"),
    (entry("TOP/lib/libcudnn_evil.so", "symlink", target="../include/cudnn.h"), "leaves its own folder"),
    (entry("TOP/lib/libcudnn_evil.so", "symlink", target="libcudnn_missing.so.9"), "does not install"),
    (entry("TOP/lib/libcudnn_evil.so", "hardlink", target="TOP/lib/libcudnn.so.9.1.0"), "hard link"),
    (entry("TOP/lib/libcudnn_evil", "chardev"), "device"),
    (entry("TOP/lib/libcudnn_evil", "fifo"), "fifo"),
    (entry("TOP/lib/libcudnn_suid.so", data=b"x", mode=0o4755), "setuid"),
    (entry("TOP/lib/libcudnn_sgid.so", data=b"x", mode=0o2755), "setgid"),
    (entry("TOP/lib/libcudnn_huge.so.9.1.0", size=20 << 30), "over the"),
    (entry("TOP/lib/libcudnn.so.9.1.0", data=b"second copy"), "appears twice"),
])
def test_hostile_tar_members_are_refused(world, bad, expect):
    if bad["target"]:
        bad = dict(bad, target=str(bad["target"]).replace("TOP", af.linux_tree()[0]))
    refused(world, _tar(world, bad), expect=expect)


def test_member_under_a_link_is_refused(world):
    archive = _tar(world, entry("TOP/lib/libcudnn_dir", "symlink", target="libcudnn.so.9.1.0"),
                   entry("TOP/lib/libcudnn_dir/libcudnn_x.so", data=b"x"))
    refused(world, archive, expect="under the symbolic link")


def test_total_size_bound(world, monkeypatch):
    monkeypatch.setenv("CUDNN_DOCTOR_MAX_TOTAL_BYTES", "4096")
    refused(world, af.make("linux-xz", world["dl"]), expect="unpacks to more than 4096")


@pytest.mark.parametrize("kind,keep", [("linux-xz", 0.5), ("linux-gz", 0.5), ("wheel", 0.5), ("linux-xz", -24)])
def test_truncated_archive(world, kind, keep):
    """keep -24: only the xz footer is cut, so tar sees a whole archive and only xz's exit status tells."""
    archive = af.make(kind, world["dl"])
    data = archive.read_bytes()
    archive.write_bytes(data[: int(len(data) * keep)] if keep > 0 else data[:keep])
    refused(world, archive, expect="damaged or incomplete")


@pytest.mark.parametrize("kind", ["linux-xz", "linux-gz", "wheel"])
def test_corrupt_archive(world, kind):
    archive = af.make(kind, world["dl"])
    data = bytearray(archive.read_bytes())
    if kind == "wheel":  # damage the data of the largest member, not the directory
        with zipfile.ZipFile(archive) as zf:
            info = max(zf.infolist(), key=lambda i: i.compress_size)
        at = info.header_offset + 30 + len(info.filename) + info.compress_size // 2
    else:
        at = len(data) // 2
    for i in range(at, at + 64):
        data[i] ^= 0xA5
    archive.write_bytes(bytes(data))
    refused(world, archive, expect="damaged")


def test_not_an_archive(world):
    fake = world["dl"] / "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
    fake.write_text("<html>404 Not Found</html>\n")
    refused(world, fake, expect="not a cuDNN archive format")


def test_archive_without_cudnn_is_refused(world):
    entries = [entry("something/include/zlib.h", data=b"/* zlib */"),
               entry("something/lib/libz.so.1", data=b"\x7fELF fake")]
    refused(world, af.write_tar(world["dl"] / "something.tar.xz", entries), expect="is not a cuDNN archive")


def test_archive_with_libraries_but_no_header_is_refused(world):
    name, entries = af.linux_tree()
    entries = [e for e in entries if "/include/" not in str(e["name"])]
    refused(world, af.write_tar(world["dl"] / (name + ".tar.xz"), entries), expect="cudnn_version.h")


def test_archive_mixing_releases_is_refused(world):
    name, entries = af.linux_tree()
    entries.append(entry(name + "/lib/libcudnn_ops.so.9.0.0", data=b"old"))
    refused(world, af.write_tar(world["dl"] / (name + ".tar.xz"), entries), expect="mixes cuDNN releases")


def test_header_and_library_disagreeing_is_refused(world):
    name, entries = af.linux_tree(version="9.1.0")
    entries = [e for e in entries if not str(e["name"]).endswith("cudnn_version.h")]
    entries.append(entry(name + "/include/cudnn_version.h", data=af.cudnn_header("9.2.0").encode()))
    # the header says 9.2.0 while the libraries are named and built as 9.1.0
    refused(world, af.write_tar(world["dl"] / (name + ".tar.xz"), entries), expect="mixes cuDNN releases")


def test_zip_bomb_is_refused(world):
    name, entries = af.windows_tree()
    entries.append(entry(name + "/bin/cudnn_bomb64_9.dll", data=b"\0" * (24 << 20)))
    refused(world, af.write_zip(world["dl"] / (name + ".zip"), entries), expect="zip bomb")


@pytest.mark.parametrize("bad,expect", [
    (entry("TOP/bin/../../../cudnn_evil.dll", data=b"x"), "'..'"),
    (entry("TOP/bin/cudnn_link64_9.dll", "symlink", target="../../../../etc/passwd"), "escapes"),
    (entry("TOP/bin/cudnn_fifo", "fifo"), "fifo"),
    (entry("TOP/bin/cudnn_suid64_9.dll", data=b"x", mode=0o4755), "setuid"),
])
def test_hostile_zip_members_are_refused(world, bad, expect):
    name, entries = af.windows_tree()
    bad = dict(bad, name=str(bad["name"]).replace("TOP", name))
    refused(world, af.write_zip(world["dl"] / (name + ".zip"), entries + [bad]), expect=expect)


def test_local_checksum_mismatch(world):
    archive = af.make("linux-xz", world["dl"])
    line = refused(world, archive, "--sha256", "0" * 64, expect="sha256 of")
    assert af.sha256_file(archive) in line
    assert archive.exists()  # the user's own file is never deleted


def test_malformed_checksum_is_a_usage_error(world):
    refused(world, af.make("linux-xz", world["dl"]), "--sha256", "abc", code=2, expect="not a SHA-256")


def test_incompatible_cuda_build_is_refused_and_force_installs_it(world):
    archive = af.make("linux-xz", world["dl"], cuda="11", cudart=11080)  # a CUDA 11 build, CUDA 12.4 toolkit
    line = refused(world, archive, expect="built for CUDA 11")
    assert "--force" in line and "12.4" in line
    result = af.invoke("install", archive, "--cuda-home", world["home"], "--no-smoke", "--force", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["plan"]["compatibility"]["compatible"] is False
    assert (world["home"] / "lib64" / "libcudnn.so.9.1.0").is_file()


def test_incompatible_verdict_comes_from_the_compat_module(world, monkeypatch):
    seen = []

    def verdict(cudnn, built, toolkit):
        seen.append((cudnn, built, toolkit))
        return False, "the test table says no"

    monkeypatch.setattr("cudnn_doctor.install.plan.compat_verdict", verdict)
    line = refused(world, af.make("linux-xz", world["dl"]), expect="the test table says no")
    assert seen == [("9.1.0", "12", "12.4")] and "--force" in line


def test_dry_run_of_a_refused_install_shows_the_plan_and_exits_1(world):
    archive = af.make("linux-xz", world["dl"], cuda="11", cudart=11080)
    before = af.snapshot(world["tmp"])
    result = af.invoke("install", archive, "--cuda-home", world["home"], "--dry-run")
    assert result.exit_code == 1
    assert "NOT compatible" in result.stdout and "lib64/libcudnn.so.9.1.0" in result.stdout
    assert len(result.stderr.strip().splitlines()) == 1
    assert af.snapshot(world["tmp"]) == before


def test_refusals_in_a_real_process_have_no_traceback(world):
    archive = _tar(world, entry("TOP/lib/libcudnn_evil.so", "hardlink", target="x"))
    proc = af.run_cli("install", archive, "--cuda-home", world["home"], "--no-smoke", "--json")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "hard link" in proc.stderr
    assert json.loads(proc.stdout)["exit_code"] == 1


@pytest.mark.parametrize("other", ["second-top/include/cudnn_version.h", "TOP/lib64/libcudnn.so.9.1.0"])
def test_members_installing_to_the_same_place_are_refused(world, other):
    """Two top folders (or lib and lib64) holding the same file: one line naming both, no internal paths."""
    name, entries = af.linux_tree()
    entries.append(entry(other.replace("TOP", name), data=af.cudnn_header("9.1.0").encode()))
    archive = af.write_tar(world["dl"] / (name + ".tar.xz"), entries)
    dest = "include/cudnn_version.h" if "include" in other else "lib/libcudnn.so.9.1.0"
    line = refused(world, archive, expect="both install to %s" % dest)
    assert other.replace("TOP", name) in line and "Errno" not in line and ".cudnn-doctor" not in line
    result = af.invoke("install", archive, "--cuda-home", world["home"], "--dry-run")  # the dry run agrees
    assert result.exit_code == 1 and "both install to %s" % dest in result.stderr
    assert result.stderr.count("\n") == 1 and "Errno" not in result.stderr


def test_archive_with_a_header_but_no_library_says_so_plainly(world):
    name, entries = af.linux_tree()
    entries = [e for e in entries if "/lib/" not in str(e["name"])]
    line = refused(world, af.write_tar(world["dl"] / (name + ".tar.xz"), entries), expect="has no libcudnn library")
    assert "no a " not in line


def test_a_folder_is_not_an_archive(world, tmp_path):
    result = af.invoke("install", str(tmp_path), "--cuda-home", str(world["home"]), "--dry-run")
    assert result.exit_code == 2 and "is a folder, not an archive" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
