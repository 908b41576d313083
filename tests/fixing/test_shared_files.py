"""A file two installed wheels' records list (fixing/shared.py): when pip removes it with one of them, the other is
named for a reinstall, in its own site."""
from __future__ import annotations

from cudnn_doctor.fixing import shared, strays


def _dist(site, name, version, files):
    info = site / ("%s-%s.dist-info" % (name, version))
    info.mkdir(parents=True)
    (info / "RECORD").write_text("".join("%s,,\n" % f for f in files) + "%s/RECORD,,\n" % info.name)


def test_a_wheel_whose_file_pip_took_with_another_is_named_for_a_reinstall(tmp_path):
    # a new user's trial: nvidia-cudnn-cu13's libcudnn.so.9 had overwritten cu12's (the same path); uninstalling cu13
    # left cu12 installed without it, and torch without cuDNN
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    lib = site / "nvidia" / "cudnn" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcudnn.so.9").write_bytes(b"cu13's")
    _dist(site, "nvidia_cudnn_cu12", "9.10.2.21", ["nvidia/cudnn/lib/libcudnn.so.9"])
    _dist(site, "nvidia_cudnn_cu13", "9.24.0.43", ["nvidia/cudnn/lib/libcudnn.so.9"])
    before = strays.names([str(site)])
    assert shared.owners_of_gone([str(site)], before) == {}
    (lib / "libcudnn.so.9").unlink()  # pip uninstall -y nvidia-cudnn-cu13
    for path in (site / "nvidia_cudnn_cu13-9.24.0.43.dist-info").iterdir():
        path.unlink()
    (site / "nvidia_cudnn_cu13-9.24.0.43.dist-info").rmdir()
    assert shared.owners_of_gone([str(site)], before) == {str(site): ["nvidia_cudnn_cu12==9.10.2.21"]}
