"""`cudnn-doctor matrix`: lookups by CUDA, cuDNN, driver and framework, as text and as JSON."""
from __future__ import annotations

import json

import pytest
import typer
from clirunner import CliRunner

from cudnn_doctor.commands import matrix as matrix_cmd


@pytest.fixture(scope="module")
def app():
    try:
        from cudnn_doctor.cli import app as full_app
        return full_app
    except ImportError:  # the check command may be mid-edit; matrix stands alone
        fresh = typer.Typer()
        matrix_cmd.register(fresh)
        fresh.command("noop")(lambda: None)  # keep typer in multi-command mode
        return fresh


def invoke(app, *args):
    return CliRunner().invoke(app, ["matrix", *args])


def as_json(app, *args):
    result = invoke(app, *args, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["command"] == "matrix" and doc["schema_version"] == "1" and doc["exit_code"] == 0
    return doc


def test_cuda_10_1_lists_cudnn_7_6_and_its_driver(app):
    result = invoke(app, "--cuda", "10.1")
    assert result.exit_code == 0, result.output
    assert "7.6" in result.stdout and "418.39" in result.stdout and "418.96" in result.stdout
    doc = as_json(app, "--cuda", "10.1")
    assert any(b["cudnn"].startswith("7.6") or b["cudnn"].endswith("7.6.5") for b in doc["cudnn_builds"])
    assert {d["driver"] for d in doc["drivers"] if d["platform"] == "linux"} == {">= 418.39"}
    assert all(b["source"] for b in doc["cudnn_builds"]) and all(d["source"] for d in doc["drivers"])


def test_cuda_13_shows_minor_compat_and_the_family(app):
    doc = as_json(app, "--cuda", "13.0")
    assert any(d["how"].startswith("minor-version") and d["driver"] == ">= 580.65.06" for d in doc["drivers"])
    assert any(b["variant"] == "cuda13" for b in doc["cudnn_builds"])
    assert doc["cudnn_by_family"][0]["variant"] == "cuda13"
    assert doc["min_cc"]["cc"] == "7.5"


def test_cudnn_8_9_7(app):
    result = invoke(app, "--cudnn", "8.9.7")
    assert result.exit_code == 0, result.output
    assert "cuda12" in result.stdout and "cuda11" in result.stdout and "5.0" in result.stdout
    doc = as_json(app, "--cudnn", "8.9.7")
    # No 8.9.7 edition was found: the CUDA 12 row is what its wheel reports (built with 12.2), and the CUDA 11
    # build is known from NVIDIA's manifest only.
    variants = {b["variant"]: b for b in doc["builds"]}
    assert set(variants) == {"cuda12"} and variants["cuda12"]["cuda"][-1] == "12.2"
    assert variants["cuda12"]["status"] == "secondary" and "pypi.org" in variants["cuda12"]["source"]
    assert variants["cuda12"]["driver"] == ">= 525.60.13"
    assert [v["variant"] for v in doc["likely_variants"]] == ["cuda11"]
    assert doc["min_cc"]["cc"] == "5.0"
    windows = as_json(app, "--cudnn", "8.9.7", "--platform", "windows")
    assert {b["driver"] for b in windows["builds"]} == {">= 527.41"}


def test_cudnn_without_a_matrix_row_says_so(app):
    doc = as_json(app, "--cudnn", "8.0.4")
    assert doc["builds"] == [] and {v["variant"] for v in doc["likely_variants"]} == {"cuda11"}
    assert "No support-matrix row" in doc["note"]


def test_driver_418_39(app):
    result = invoke(app, "--driver", "418.39")
    assert result.exit_code == 0, result.output
    doc = as_json(app, "--driver", "418.39")
    runs = {r["cuda"]: r["runs"] for r in doc["cuda"]}
    assert runs["10.1"] is True and runs["10.2"] is False and runs["9.0"] is True
    assert doc["max_cuda"] == "10.1"


def test_driver_minor_version_compat(app):
    doc = as_json(app, "--driver", "535.104.05")
    how = {r["cuda"]: r["how"] for r in doc["cuda"]}
    assert how["12.2"] == "exact" and how["12.8"] == "minor-version compatibility" and how["13.0"] == "driver too old"


@pytest.mark.parametrize("name,table", [("dl4j", "dl4j"), ("tensorflow", "tensorflow_linux"), ("torch", "pytorch"),
                                        ("jax", "jax")])
def test_for_framework(app, name, table):
    result = invoke(app, "--for", name)
    assert result.exit_code == 0, result.output
    doc = as_json(app, "--for", name)
    rows = doc["tables"][table]["rows"]
    assert rows and all(r["source"] and r["status"] for r in rows)


def test_for_dl4j_has_the_beta6_pairs(app):
    result = invoke(app, "--for", "dl4j")
    assert "1.0.0-beta6" in result.stdout and "nd4j-cuda-10.2" in result.stdout
    doc = as_json(app, "--for", "dl4j")
    pairs = {(r["cuda"], r["cudnn"]) for r in doc["tables"]["dl4j"]["rows"] if r["dl4j"] == "1.0.0-beta6"}
    assert pairs == {("9.2", "7.2"), ("10.0", "7.4"), ("10.1", "7.6"), ("10.2", "7.6")}


@pytest.mark.parametrize("args,message", [
    ((), "give one of"),
    (("--cudnn", "9.1.0", "--driver", "418.39"), "give one of"),
    (("--cuda", "banana"), "--cuda wants"),
    (("--cuda", "10.3"), "not a release the knowledge knows"),
    (("--cudnn", "8.9.9"), "not a release the knowledge knows"),
    (("--cuda", "12.4", "--cc", "8.0", "--for", "torch"), "--for cannot be combined"),  # --cuda --cc alone: a GPU question
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--cc", "eight"), "--cc wants"),
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--gpu", "Voodoo 3"), "not a GPU the knowledge knows"),
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--gpu", "H100", "--cc", "9.0"), "not both"),
    (("--cuda", "12.4", "--cudnn", "banana"), "--cudnn wants"),
    (("--driver", "abc"), "--driver wants"),
    (("--for", "caffe"), "--for wants"),
    (("--cuda", "12.4", "--platform", "mac"), "--platform"),
])
def test_bad_input_is_one_line_exit_2(app, args, message):
    result = invoke(app, *args)
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in result.output


def test_driver_branch_means_any_release_of_the_branch(app):
    doc = as_json(app, "--driver", "580")
    rows = {r["cuda"]: r for r in doc["cuda"]}
    assert doc["query"]["branch"] == "580"
    assert rows["13.0"]["runs"] is True and rows["13.1"]["runs"] is True
    assert "580.65.06" in rows["13.0"]["branch_releases"]
    assert rows["12.4"]["branch_releases"] == "R580: any release"
    result = invoke(app, "--driver", "580")
    assert result.exit_code == 0 and "580.65.06" in result.output


def test_for_accepts_framework_and_version(app):
    doc = as_json(app, "--for", "torch==2.5.1")
    assert doc["query"] == {"for": "torch", "version": "2.5.1"}
    assert doc["tables"]["pytorch"]["rows"] and all(r["torch"] == "2.5" for r in doc["tables"]["pytorch"]["rows"])
    doc = as_json(app, "--for", "dl4j==1.0.0-M2.1")
    assert {r["dl4j"] for r in doc["tables"]["dl4j"]["rows"]} == {"1.0.0-M2.1"}
    assert invoke(app, "--for", "torch==9.9").exit_code != 0


def test_cudnn_9_1_0_lists_cuda_12_4(app):
    doc = as_json(app, "--cudnn", "9.1.0")
    (cuda12,) = [b for b in doc["builds"] if b["variant"] == "cuda12"]
    assert cuda12["cuda"] == ["12.0", "12.1", "12.2", "12.3", "12.4"] and cuda12["status"] == "confirmed"
    assert cuda12["source"].startswith("https://docs.nvidia.com/deeplearning/cudnn/")


def test_cuda_12_4_lists_every_cudnn_release_that_covers_it(app):
    from cudnn_doctor.knowledge import load_compat
    from cudnn_doctor.versions import release3

    doc = as_json(app, "--cuda", "12.4")
    compat = load_compat()
    covering = {r for r in compat.cudnn_releases() if any(
        "12.4" in b.cuda for b in compat.cudnn_builds(r))}
    shown = {r for r in compat.cudnn_releases() for b in doc["cudnn_builds"]
             if release3(b["cudnn"].split("-")[0]) <= release3(r) <= release3(b["cudnn"].split("-")[-1])
             and b["variant"] == "cuda12"}
    assert covering == shown and {"9.1.0", "9.2.0", "9.3.0", "9.28.0"} <= shown
    older = {b["cudnn"] for b in doc["cudnn_builds_minor_compat"]}
    assert {"9.0.0", "8.9.7", "8.9.5"} <= older  # their editions stop at 12.3 / 12.2: minor-version compatibility
    assert not any(r.startswith("8.9") for r in covering)  # no 8.9 edition or wheel lists 12.4


@pytest.mark.parametrize("args,verdict,code", [
    (("--cuda", "12.4", "--cudnn", "9.1.0"), "works", 0),
    (("--cuda", "12.6", "--cudnn", "9.1.0"), "works through minor-version compatibility", 0),
    (("--cuda", "13.0", "--cudnn", "9.1.0"), "does not work", 1),
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--driver", "535"), "works through minor-version compatibility", 0),
    (("--cuda", "12.4", "--cudnn", "9.1.0", "--driver", "470.82.01"), "does not work", 1),
    (("--cuda", "12.4", "--cudnn", "9.10.2", "--cc", "12.0"), "does not work", 1),
    (("--cuda", "12.8", "--cudnn", "9.10.2", "--gpu", "NVIDIA B200"), "works", 0),
    (("--cuda", "12.4", "--cudnn", "9.99.0"), "cannot tell", 0),
])
def test_pair_question_answers_with_a_verdict_and_sources(app, args, verdict, code):
    result = invoke(app, *args, "--json")
    assert result.exit_code == code, result.output
    doc = json.loads(result.stdout)
    assert doc["verdict"] == verdict and doc["reasons"]
    assert all(r["source"] for r in doc["reasons"] if r["ok"] is not None)
    text = invoke(app, *args)
    assert text.exit_code == code and verdict.upper() in text.stdout


def test_pair_newer_than_the_knowledge_says_update(app):
    doc = as_json(app, "--cuda", "12.4", "--cudnn", "9.99.0")
    assert "cudnn-doctor update" in doc["reasons"][0]["text"]


def test_for_a_framework_release_shows_its_wheel_pins(app):
    doc = as_json(app, "--for", "torch==2.4.0")
    (pin,) = doc["tables"]["pypi_pins"]["rows"]
    assert pin["cudnn"] == "==9.1.0.70" and pin["cuda"] == "12.1" and "pypi.org/project/torch/2.4.0" in pin["source"]
