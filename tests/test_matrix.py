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
    ((), "exactly one of"),
    (("--cuda", "10.1", "--driver", "418.39"), "exactly one of"),
    (("--cuda", "banana"), "--cuda wants"),
    (("--cuda", "10.3"), "not in compat"),
    (("--cudnn", "8.9.9"), "not a release compat knows"),
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
