"""fixing/shared.py: a file two distributions' RECORDs list (a namespace nvidia/__init__.py) is kept by the journal
and put back after pip removed it with one owner, only while an installed distribution still lists it (realworld
--fix-command, draw 101-2: undo's uninstall of the cuDNN wheel fix added took the CUDA runtime's nvidia/__init__.py)."""
from __future__ import annotations

from pathlib import Path

from cudnn_doctor.fixing import shared


def _install(site: Path, dist: str, files: dict) -> None:
    info = site / ("%s.dist-info" % dist)
    info.mkdir(parents=True)
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    rows = list(files) + ["%s.dist-info/RECORD" % dist]
    (info / "RECORD").write_text("".join("%s,,\n" % r for r in rows))


def test_a_shared_file_is_put_back_while_an_owner_still_lists_it(tmp_path):
    site = tmp_path / "venv/lib/python3.11/site-packages"
    _install(site, "nvidia_cuda_runtime_cu12-12.3.101", {"nvidia/__init__.py": "", "nvidia/cuda_runtime/a.py": "a"})
    _install(site, "nvidia_cudnn_cu12-9.1.0.70", {"nvidia/__init__.py": "", "nvidia/cudnn/b.py": "b"})
    sites = shared.sites(str(tmp_path / "venv"))
    assert sites == [str(site)]
    folder = tmp_path / "txn"
    kept = shared.keep(str(folder), sites)
    assert [r["path"] for r in kept] == [str(site / "nvidia/__init__.py")]  # the only file two records list
    # pip uninstall nvidia-cudnn-cu12: its files go, the shared one too
    for rel in ("nvidia/__init__.py", "nvidia/cudnn/b.py", "nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD"):
        (site / rel).unlink()
    assert shared.put_back(str(folder), kept, sites) == [str(site / "nvidia/__init__.py")]
    assert (site / "nvidia/__init__.py").read_text() == ""
    # once no installed distribution lists it, it stays gone
    for rel in ("nvidia/__init__.py", "nvidia_cuda_runtime_cu12-12.3.101.dist-info/RECORD"):
        (site / rel).unlink()
    assert shared.put_back(str(folder), kept, sites) == []
    assert not (site / "nvidia/__init__.py").exists()


def test_a_file_fix_made_shared_is_kept_at_undo_and_put_back(tmp_path):
    """Before fix one wheel lists nvidia/__init__.py; fix adds another that lists it too; undo's uninstall of the added
    one takes it (draw 202-12): the copy kept at undo puts it back, and a second undo attempt keeps the first copy."""
    site = tmp_path / "venv/lib/python3.11/site-packages"
    _install(site, "nvidia_cudnn_cu12-9.3.0.75", {"nvidia/__init__.py": "# one\n", "nvidia/cudnn/b.py": "b"})
    sites = shared.sites(str(tmp_path / "venv"))
    folder = tmp_path / "txn"
    assert shared.keep(str(folder), sites) == []  # at fix time: one owner, nothing shared
    _install(site, "nvidia_cublas_cu12-12.9.1.4", {"nvidia/__init__.py": "# one\n", "nvidia/cublas/c.py": "c"})
    kept = shared.keep(str(folder), sites, "shared-undo")
    for rel in ("nvidia/__init__.py", "nvidia/cublas/c.py", "nvidia_cublas_cu12-12.9.1.4.dist-info/RECORD"):
        (site / rel).unlink()
    again = shared.keep(str(folder), sites, "shared-undo", kept)  # an undo killed here and run again
    assert again == kept
    assert shared.put_back(str(folder), again, sites) == [str(site / "nvidia/__init__.py")]
    assert (site / "nvidia/__init__.py").read_text() == "# one\n"


def test_a_file_another_install_overwrote_is_not_put_back_from_the_wrong_copy_and_its_owner_is_named(tmp_path):
    """cuDNN 8's CUDA 12 wheel installed over CUDA 13's cuDNN 9 writes the same nvidia/cudnn/include/cudnn.h (draw
    202-25): the copy kept at undo is the overwrite, so it is not put back; the owner left is named for a reinstall."""
    site = tmp_path / "venv/lib/python3.11/site-packages"
    header = "nvidia/cudnn/include/cudnn.h"
    _install(site, "nvidia_cudnn_cu13-9.24.0.43", {header: "cudnn 9\n"})
    info = site / "nvidia_cudnn_cu13-9.24.0.43.dist-info/RECORD"
    info.write_text(info.read_text().replace("%s,," % header, "%s,%s," % (header, shared._hash(str(site / header)))))
    (site / header).unlink()  # pip's install of the other wheel over it
    _install(site, "nvidia_cudnn_cu12-8.9.7.29", {header: "cudnn 8\n"})
    sites = shared.sites(str(tmp_path / "venv"))
    kept = shared.keep(str(tmp_path / "txn"), sites, "shared-undo")
    for rel in (header, "nvidia_cudnn_cu12-8.9.7.29.dist-info/RECORD"):  # undo's uninstall of the added wheel
        (site / rel).unlink()
    assert shared.put_back(str(tmp_path / "txn"), kept, sites) == []
    assert shared.owners_missing(kept, sites) == {str(site): ["nvidia_cudnn_cu13==9.24.0.43"]}
