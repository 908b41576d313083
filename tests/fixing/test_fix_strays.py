"""What a pip killed part-way leaves in site-packages (fixing/strays.py): a realworld SIGKILL draw (515-5, killed at
5.5 s of 17.7, inside pip's install of nvidia-cudnn-cu12) left 20 of the wheel's headers without its dist-info, so
pip list never showed the package and undo's uninstall never took them. Undoing an interrupted fix now removes every
file not on the list the journal kept, and the folders pip made for them; what was there stays, byte for byte."""
from __future__ import annotations

import os
from pathlib import Path

from cudnn_doctor.fixing import strays


def _tree(site: Path) -> dict:
    return {str(p.relative_to(site)): (p.read_bytes() if p.is_file() else None) for p in sorted(site.rglob("*"))}


def test_an_interrupted_install_is_swept_back_to_the_listed_files(tmp_path):
    site = tmp_path / "lib/python3.11/site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch/__init__.py").write_text("torch")
    (site / "torch-2.5.1.dist-info").mkdir()
    (site / "torch-2.5.1.dist-info/RECORD").write_text("torch/__init__.py,,\n")
    (site / "nvidia/cuda_runtime/lib").mkdir(parents=True)
    (site / "nvidia/cuda_runtime/lib/libcudart.so.12").write_bytes(b"\x7fELF")
    (site / "emptied").mkdir()
    (site / "emptied/keep.txt").write_text("x")
    txn = tmp_path / "txn"
    txn.mkdir()
    strays.keep(str(txn), [str(site)])
    before = _tree(site)
    # pip, killed: half a wheel in a folder it made and in one that was there, and its stash of an upgraded release
    (site / "nvidia/cudnn/include").mkdir(parents=True)
    (site / "nvidia/cudnn/include/cudnn.h").write_text("9.28")
    (site / "nvidia/cudnn/include/__pycache__").mkdir()
    (site / "nvidia/cudnn/include/__pycache__/x.pyc").write_bytes(b"pyc")
    (site / "nvidia/cuda_runtime/lib/libcudart.so.12.9").write_bytes(b"\x7fELF new")
    (site / "~orch").mkdir()
    (site / "~orch/__init__.py").write_text("stashed")
    (site / "torch/__pycache__").mkdir()
    (site / "torch/__pycache__/__init__.cpython-311.pyc").write_bytes(b"pyc")  # an import's: not pip's
    removed = strays.sweep(str(txn))
    assert sorted(os.path.relpath(p, site) for p in removed) == [
        "nvidia/cuda_runtime/lib/libcudart.so.12.9", "nvidia/cudnn/include/cudnn.h", "~orch/__init__.py"]
    after = _tree(site)
    assert {k: v for k, v in after.items() if "__pycache__" not in k} == before
    assert (site / "torch/__pycache__").is_dir()  # bytecode of a package that was there is left alone


def test_no_list_no_sweep(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site/new.py").write_text("x")
    assert strays.sweep(str(tmp_path)) == [] and (tmp_path / "site/new.py").exists()


def test_after_a_finished_fix_only_files_a_record_lists_go(tmp_path):
    """A cuDNN wheel missing libcudnn_ops.so.9 (damaged) that fix reinstalled at the same release (realworld draws
    777-*: "undo not exact: added 1: .../libcudnn_ops.so.9"): undo puts the damage back, and leaves a file the user
    wrote since, which no RECORD lists."""
    site = tmp_path / "site"
    lib = site / "nvidia/cudnn/lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"\x7fELF")
    txn = tmp_path / "txn"
    txn.mkdir()
    strays.keep(str(txn), [str(site)])
    (lib / "libcudnn_ops.so.9").write_bytes(b"\x7fELF ops")  # the reinstall's
    (site / "notes.txt").write_text("mine")  # the user's, since
    listed = {str(lib / "libcudnn.so.9"), str(lib / "libcudnn_ops.so.9")}
    assert strays.sweep(str(txn), listed) == [str(lib / "libcudnn_ops.so.9")]
    assert (site / "notes.txt").exists() and (lib / "libcudnn.so.9").exists()
