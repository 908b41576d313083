"""The journal's own copy of each release a fix may replace (fixing/stash.py): kept as hard links, put back byte
for byte, dropped whole when one file cannot be linked, and pruned from older history entries. The real pip round
trip (fix, then --undo with no index) is tests/fixing/test_fix_venv.py."""
from __future__ import annotations

import errno
import os
from pathlib import Path

from cudnn_doctor.fixing import stash


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    lib = site / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"\x7fELF cudnn 9.3")
    (site / "nvidia" / "cudnn" / "lib" / "libcudnn.so").symlink_to("libcudnn.so.9")
    info = site / "nvidia_cudnn_cu12-9.3.0.75.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: nvidia-cudnn-cu12\nVersion: 9.3.0.75\n")
    (info / "RECORD").write_text("nvidia/cudnn/lib/libcudnn.so.9,sha256=x,14\nnvidia/cudnn/lib/libcudnn.so,,\n"
                                 "nvidia_cudnn_cu12-9.3.0.75.dist-info/METADATA,,\n"
                                 "nvidia_cudnn_cu12-9.3.0.75.dist-info/RECORD,,\n")
    other = site / "other-1.0.dist-info"
    other.mkdir()
    (other / "RECORD").write_text("other-1.0.dist-info/RECORD,,\n")
    return site


def test_a_kept_release_comes_back_byte_for_byte_after_pip_took_it_away(tmp_path):
    site = _site(tmp_path)
    txn = tmp_path / "txn"
    txn.mkdir()
    records = stash.keep(str(txn), [str(site)], ["nvidia_cudnn_cu12", "torch"])
    assert [(r["name"], r["version"]) for r in records] == [("nvidia-cudnn-cu12", "9.3.0.75")]  # `other` not named
    lib = site / "nvidia" / "cudnn" / "lib"
    assert os.stat(lib / "libcudnn.so.9").st_nlink == 2  # a link, not a copy
    for path in (lib / "libcudnn.so.9", lib / "libcudnn.so"):
        path.unlink()  # what pip uninstall does
    (lib / "libcudnn.so.9").write_bytes(b"another release")
    kept = stash.kept(str(txn), records, [str(site)])
    assert stash.put_back(str(txn), kept[stash.key("nvidia_cudnn_cu12", "9.3.0.75")]) == 4
    assert (lib / "libcudnn.so.9").read_bytes() == b"\x7fELF cudnn 9.3"
    assert os.readlink(lib / "libcudnn.so") == "libcudnn.so.9"
    assert not [p for p in lib.iterdir() if p.name.startswith(".cudnn-doctor-undo-")]
    assert stash.kept(str(txn), records, ["/elsewhere"]) == {}


def test_a_release_with_a_file_that_cannot_be_linked_is_not_kept_and_undo_reinstalls_it_by_name(tmp_path, monkeypatch):
    site = _site(tmp_path)
    txn = tmp_path / "txn"
    txn.mkdir()
    real = os.link

    def across(src, dst, *args, **kwargs):
        if str(src).endswith("METADATA"):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", across)
    assert stash.keep(str(txn), [str(site)], ["nvidia-cudnn-cu12"]) == []
    assert not list((txn / "stash").iterdir())  # nothing half kept


def test_only_the_newest_entries_keep_their_copies(tmp_path):
    state = tmp_path / "state"
    history = state / "history"
    for n in range(1, 5):
        (history / ("%04d-x" % n) / stash.FOLDER / "0-a").mkdir(parents=True)
    stash.prune(str(state))
    assert sorted(p.name for p in history.iterdir() if (p / stash.FOLDER).exists()) == ["0003-x", "0004-x"]


def test_the_same_release_reinstalled_over_a_damaged_one_is_seen_and_put_back_with_its_old_record(tmp_path):
    # a new user's trial: CD406's reinstall of the same release, undone, had left the repaired library and the
    # reinstall's RECORD (which lists a REQUESTED that the release never had)
    site = _site(tmp_path)
    txn = tmp_path / "txn"
    txn.mkdir()
    [record] = stash.keep(str(txn), [str(site)], ["nvidia-cudnn-cu12"])
    assert not stash.rewritten(str(txn), record)
    lib = site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9"
    info = site / "nvidia_cudnn_cu12-9.3.0.75.dist-info"
    lib.unlink()
    lib.write_bytes(b"the wheel's own file")  # what pip install --force-reinstall writes: a new file
    (info / "REQUESTED").write_text("")
    record_text = (info / "RECORD").read_text()
    (info / "RECORD").unlink()  # pip removes the old release's files and writes new ones
    (info / "RECORD").write_text(record_text + "nvidia_cudnn_cu12-9.3.0.75.dist-info/REQUESTED,,\n")
    assert stash.rewritten(str(txn), record)
    stash.put_back(str(txn), record)
    assert lib.read_bytes() == b"\x7fELF cudnn 9.3" and not (info / "REQUESTED").exists()
    assert "REQUESTED" not in (info / "RECORD").read_text()


def test_a_file_already_in_place_leaves_no_temporary_link(tmp_path):
    # realworld draw 291129-20: two kept releases list nvidia/__init__.py, the one file both put back; rename() of two
    # links to one file does nothing, and the temporary link stayed in the site
    site = _site(tmp_path)
    txn = tmp_path / "txn"
    txn.mkdir()
    [record] = stash.keep(str(txn), [str(site)], ["nvidia-cudnn-cu12"])
    stash.put_back(str(txn), record)  # every file is still the kept one
    lib = site / "nvidia" / "cudnn" / "lib"
    assert not [p for p in lib.rglob(".cudnn-doctor-undo-*")] and not list(site.rglob(".cudnn-doctor-undo-*"))
