"""Property-based fuzzing of `install`: generated archives either install (and roll back exactly) or are refused
with one line and a byte-identical machine."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import archive_factory as af
import fuzz_support as fz
from kit import FakeMachine, have_gcc

pytestmark = pytest.mark.skipif(not have_gcc(), reason="gcc is needed to build the fake NVIDIA libraries")

TOP = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
_NAMES = st.sampled_from([
    TOP + "/lib/libcudnn.so.9.1.0", TOP + "/lib/libcudnn_ops.so.9", TOP + "/lib/libcudnn.so",
    TOP + "/include/cudnn_version.h", TOP + "/include/cudnn.h", TOP + "/lib", TOP + "/LICENSE",
    "/etc/ld.so.preload", "../../escape.so", TOP + "/../../escape.so", TOP + "/lib/../../../x.so", "",
    ".", "./" + TOP + "/lib/libcudnn_graph.so.9.1.0", TOP + "/lib/" + "a" * 300, TOP + "/lib/libcudnn_adv.so.9\n",
    "cuda/lib64/libcudnn.so.8", "nvidia/cudnn/lib/libcudnn.so.9", TOP + "//lib///libcudnn_cnn.so.9.1.0",
])
_LINK_TARGETS = st.sampled_from(["libcudnn.so.9.1.0", "../../../etc/passwd", "/etc/passwd", "libcudnn.so.9",
                                 ".", "..", "", "a/../../b", "libcudnn_missing.so.9"])


def _extra_entry():
    """One hostile or odd member added to (or replacing one of) a good archive's members."""
    return st.one_of(
        st.builds(lambda n, d, m: af.entry(n, data=d, mode=m), _NAMES, st.binary(max_size=64),
                  st.sampled_from([None, 0, 0o777, 0o4755, 0o7777])),
        st.builds(lambda n, t: af.entry(n, "symlink", target=t), _NAMES, _LINK_TARGETS),
        st.builds(lambda n, t: af.entry(n, "hardlink", target=t), _NAMES, st.sampled_from([
            TOP + "/lib/libcudnn.so.9.1.0", "/etc/passwd", "../x"])),
        st.builds(lambda n, k: af.entry(n, k), _NAMES, st.sampled_from(["dir", "fifo", "chardev", "blockdev"])),
        st.builds(lambda n, s: af.entry(n, size=s), _NAMES, st.sampled_from([1 << 40, 10 ** 12, 1, 2 ** 33])),
        st.builds(lambda n, d: af.entry(n, data=d), st.just(TOP + "/include/cudnn_version.h"), fz.header_text()
                  .map(lambda t: t.encode("utf-8", "surrogatepass"))),
        st.builds(lambda n, d: af.entry(n, data=d), st.sampled_from([TOP + "/lib/libcudnn.so.9.1.0",
                                                                     TOP + "/lib/libcudnn_ops.so.9.1.0"]),
                  fz.elf_bytes()),
    )


@pytest.fixture(scope="module")
def good_entries():
    return af.linux_tree()[1]


def _archive_bytes(entries, fmt, cut, tmp):
    path = Path(tmp) / ("%s.%s" % (TOP, {"xz": "tar.xz", "gz": "tar.gz", "": "tar", "zip": "zip"}[fmt]))
    if fmt == "zip":  # zip has no hard links or block devices: such members become plain files
        entries = [dict(e, kind="file") if e["kind"] in ("hardlink", "blockdev") else e for e in entries]
        af.write_zip(path, entries)
    else:
        af.write_tar(path, entries, fmt)
    if cut is not None:
        data = path.read_bytes()
        path.write_bytes(data[:cut % max(len(data), 1)])
    return path


def _toolkit(top: Path) -> Path:
    """A CUDA 12.4 toolkit holding cuDNN 9.0.0 under a fresh machine root."""
    m = FakeMachine(top / "root")
    home = m.p(m.toolkit("12.4.1"))
    rel = str(home.relative_to(m.root))
    m.cudnn("9.0.0", rel + "/lib64", rel + "/include", cuda=12040)
    return home


@fz.budget(20)
@given(data=st.data(), fmt=st.sampled_from(["", "gz", "xz", "zip"]),
       cut=st.one_of(st.none(), st.none(), st.integers(0, 1 << 20)))
def test_generated_archive_installs_cleanly_or_changes_nothing(good_entries, data, fmt, cut):
    top = Path(tempfile.mkdtemp(prefix="cudnn-doctor-fuzz-install-"))
    try:
        entries = list(good_entries)
        drops = data.draw(st.lists(st.integers(0, len(entries) - 1), max_size=3, unique=True), label="drop")
        entries = [e for i, e in enumerate(entries) if i not in drops]
        extra = data.draw(st.lists(_extra_entry(), max_size=3), label="extra")
        entries += extra
        data.draw(st.randoms(use_true_random=False), label="order").shuffle(entries)
        archive = _archive_bytes(entries, fmt, cut, top / "dl")
        home = _toolkit(top)
        before = af.snapshot(top)  # the whole machine root and the download folder: nothing else may change
        result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke")
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert "Traceback" not in result.stderr + result.stdout
        assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
        if result.exit_code != 0:
            line = result.stderr.strip()
            assert line.startswith("cudnn-doctor: error: ") and "\n" not in line, result.stderr
            assert af.snapshot(top) == before, "a refused install changed files: %s" % line
            return
        back = af.invoke("rollback", "--cuda-home", home)
        assert back.exit_code == 0, back.stderr
        assert af.snapshot(top) == before
    finally:
        shutil.rmtree(top, ignore_errors=True)


@fz.budget(10)
@given(blob=st.one_of(st.binary(max_size=2048), fz.elf_bytes()),
       suffix=st.sampled_from([".tar.xz", ".tgz", ".tar", ".zip", ".whl", ".tar.gz"]))
def test_junk_bytes_named_like_an_archive_are_refused_without_change(blob, suffix):
    top = Path(tempfile.mkdtemp(prefix="cudnn-doctor-fuzz-junk-"))
    try:
        home = _toolkit(top)
        archive = top / "dl" / ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive" + suffix)
        archive.parent.mkdir()
        archive.write_bytes(blob)
        before = af.snapshot(top)
        result = af.invoke("install", archive, "--cuda-home", home, "--no-smoke")
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code in (1, 2), (result.exit_code, result.stdout)
        line = result.stderr.strip()
        assert line.startswith("cudnn-doctor: error: ") and "\n" not in line and "Traceback" not in line
        assert af.snapshot(top) == before
    finally:
        shutil.rmtree(top, ignore_errors=True)
