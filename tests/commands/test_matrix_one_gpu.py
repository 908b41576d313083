"""`matrix`'s one-GPU questions: a GPU with a driver (which CUDA and cuDNN it runs there, or the branch it needs),
with a CUDA release (does the toolkit build code for it; which driver), with a cuDNN release (does the release ship
code for it; the newest that does). Each answer is the pair question's own steps, so every CUDA/cuDNN it offers
passes `matrix --cuda --cudnn --driver --gpu` too; every reason that says no names an NVIDIA (or recorded) source."""
from __future__ import annotations

import json

import pytest
from clirunner import CliRunner

from cudnn_doctor.cli import app
from hermetic import shipped_compat

COMPAT = shipped_compat()


def matrix(*args):
    return CliRunner().invoke(app, ["matrix", *args])


def answer(*args):
    result = matrix(*args, "--json")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_blackwell_on_r550_names_the_branch_it_needs():
    result = matrix("--gpu", "B200", "--driver", "550")
    assert result.exit_code == 1, result.output
    assert "DOES NOT WORK" in result.stdout and "needs R570 or newer" in result.stdout
    doc = answer("--gpu", "B200", "--driver", "550")
    assert doc["ok"] is False and doc["query"]["cc"] == "10.0" and doc["query"]["architecture"] == "Blackwell"
    assert all("https://" in r["source"] for r in doc["reasons"] if r["ok"] is False)


def test_a_driver_that_drives_the_gpu_lists_cuda_and_cudnn_per_major():
    doc = answer("--gpu", "B200", "--driver", "580")
    assert doc["ok"] is True
    majors = [row["cuda"].split(".")[0] for row in doc["fits"]]
    assert majors == ["13", "12"]  # newest first; CUDA 11 never had Blackwell code
    for row in doc["fits"]:
        assert row["cudnn"] and row["source"].startswith("https://")
        pair = COMPAT.pair_lookup(row["cuda"], row["cudnn"], "580", "linux", None, "10.0")
        assert pair["ok"] is True, (row, pair["reasons"])


def test_rtx_4090_with_cuda_12_8():
    result = matrix("--gpu", "RTX 4090", "--cuda", "12.8")
    assert result.exit_code == 0, result.output
    doc = answer("--gpu", "RTX 4090", "--cuda", "12.8")
    texts = " ".join(r["text"] for r in doc["reasons"])
    floor = COMPAT.min_driver("12.8")
    assert "CUDA 12.8 builds code for Ada Lovelace" in texts and floor.text() in texts and "R520" in texts
    newest = [r for r in doc["reasons"] if r["check"] == "cudnn"][0]["text"]
    assert newest.endswith(": %s." % COMPAT.cudnn.newest_cudnn_build("12.8"))


@pytest.mark.parametrize("gpu, cuda, why", [("B200", "12.4", "needs CUDA 12.8 or newer"),
                                            ("GTX 1080", "13.0", "CUDA 13 builds for compute capability 7.5"),
                                            ("Tesla K80", "12.4", "CUDA 12 builds for compute capability 5.0")])
def test_a_cuda_without_code_for_the_gpu(gpu, cuda, why):
    result = matrix("--gpu", gpu, "--cuda", cuda)
    assert result.exit_code == 1 and why in result.stdout, result.output


def test_gtx_1080_with_cudnn_9_11_and_the_newest_that_serves_it():
    result = matrix("--gpu", "GTX 1080", "--cudnn", "9.11")
    assert result.exit_code == 1, result.output
    assert "supports only GPUs of compute capability 7.5 and newer; this one is 6.1" in result.stdout
    doc = answer("--gpu", "GTX 1080", "--cudnn", "9.11")
    assert doc["query"]["cudnn"] == "9.11.0"
    assert "is 9.10.2" in [r for r in doc["reasons"] if r["check"] == "cudnn"][0]["text"]
    assert matrix("--gpu", "GTX 1080", "--cudnn", "9.10.2").exit_code == 0


def test_a_cudnn_built_for_cudas_that_dropped_the_gpu():
    doc = answer("--cc", "6.1", "--cudnn", "9.10.2")
    assert doc["ok"] is True  # its CUDA 11 and 12 builds serve Pascal
    assert answer("--gpu", "H100", "--cudnn", "9.28.1")["ok"] is True


def test_a_retired_architecture_and_the_last_branch():
    assert "no longer drives Pascal" in matrix("--gpu", "GTX 1080", "--driver", "590").stdout
    doc = answer("--gpu", "Tesla K80", "--driver", "470")
    assert doc["ok"] is True and doc["fits"][0]["cuda"] == "11.8"


def test_the_gpu_alone_says_what_it_needs():
    doc = answer("--gpu", "GTX 1080")
    assert doc["ok"] is True and "R367 to R580" in doc["reasons"][0]["text"]
    assert doc["fits"][0]["cuda"] == "12.9" and doc["fits"][0]["cudnn"] == "9.10.2"


@pytest.mark.parametrize("args, message", [
    (("--gpu", "Foo", "--driver", "550"), "not a GPU the knowledge knows"),
    (("--gpu", "B200", "--cc", "10.0", "--driver", "550"), "not both"),
    (("--gpu", "B200", "--for", "torch"), "--for cannot be combined"),
    (("--gpu", "B200", "--cuda", "12.x"), "--cuda wants"),
    (("--gpu", "B200", "--cudnn", "9.99.1"), "--cudnn wants"),
    (("--gpu", "B200", "--driver", "new"), "--driver wants"),
    (("--cc", "4.2", "--driver", "550"), "not an architecture"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = matrix(*args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
