"""A broken cuDNN 7 (CD408: libcudnn.so.7 left pointing at a deleted libcudnn.so.7.6.5) gets a `cudnn-doctor install`
line like other releases. NVIDIA never published cuDNN 7 on PyPI (tests/data/pypi_cudnn_files.json: the nvidia-cudnn
name holds two placeholder sdists) nor with redist manifests, so the line installs the archive from NVIDIA's cuDNN
archive by its name (`cudnn-10.2-linux-x64-v7.6.5.*.tgz`); run as printed, in the folder the archive was downloaded
to, it heals the toolkit and `check` no longer reports CD408."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys

import archive_factory as af


def _broken_cudnn7(machine):
    machine.driver("470.256.02", cuda=11040)
    home = machine.toolkit("10.2.89", layout="txt")
    machine.cudnn("7.6.5", home + "/lib64", home + "/include", cuda=10020)
    os.remove(machine.p(home + "/lib64/libcudnn.so.7.6.5"))
    return home


def test_a_broken_cudnn7_gets_an_install_line_that_heals_it(machine, tmp_path, check_json):
    home = _broken_cudnn7(machine)
    _, doc = check_json(machine)
    found = [f for f in doc["findings"] if f["id"] == "CD408" and f["evidence"]["link"].endswith("libcudnn.so.7")]
    assert found and found[0]["severity"] == "error"
    command = found[0]["remedy"]["doctor"]
    # The toolkit's real folder (/usr/local/cuda is a link whose absolute target is inside the machine's root).
    assert " install cudnn-10.2-linux-x64-v7.6.5.*.tgz --cuda-home %s" % machine.p(home) in command
    assert "NVIDIA's cuDNN archive" in found[0]["fix"] and "(or by hand:" in found[0]["fix"]

    # Run it as printed (without sudo; this cudnn-doctor by its module), in the folder the archive was saved to.
    downloads = tmp_path / "Downloads"
    af.make("legacy-linux", downloads)  # cudnn-10.2-linux-x64-v7.6.5.32.tgz, NVIDIA's pre-8.3 layout
    words = shlex.split(command)
    start = words.index("install")
    line = " ".join([shlex.quote(sys.executable), "-m", "cudnn_doctor"] + words[start:start + 4] +
                    ["--no-smoke", "--no-check"])  # the archive's glob stays for the shell to expand
    ran = subprocess.run(["bash", "-c", line], cwd=str(downloads), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "reports cuDNN 7.6.5" in ran.stdout
    _, after = check_json(machine)
    assert not [f for f in after["findings"] if f["id"] == "CD408"]
