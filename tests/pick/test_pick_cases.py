"""`pick` on the nodes the issue names, asked from a GPU-less login node with --against their saved `check --json`
reports (written by the real rules and renderer): the answers, the install forms, the JSON schema, bad input."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from clirunner import CliRunner
from jsonschema import Draft202012Validator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pick_nodes import node_report  # noqa: E402

from cudnn_doctor.cli import app  # noqa: E402

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schema" / "pick-v1.json").read_text())
MIXED = ("535.104.05", "12.2", [("NVIDIA GeForce GTX 1080 Ti", "6.1"), ("NVIDIA GeForce RTX 4090", "8.9")])
V100 = ("580.95.05", "13.0", [("Tesla V100-SXM2-32GB", "7.0")])
RTX5090_550 = ("550.54.15", "12.4", [("NVIDIA GeForce RTX 5090", "12.0")])
RTX5090_570 = ("570.86.10", "12.8", [("NVIDIA GeForce RTX 5090", "12.0")])
H100 = ("580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")])


def ask(tmp_path, node, *args):
    path = tmp_path / "node.json"
    path.write_text(node_report(*node, toolkit=False))
    result = CliRunner().invoke(app, ["pick", *args, "--against", str(path)])
    doc = None
    if "--json" in args:
        doc = json.loads(result.stdout)
        assert list(Draft202012Validator(SCHEMA).iter_errors(doc)) == []
    return result, doc


def test_mixed_pascal_and_ada_on_r535_gets_the_cu126_build_from_pytorchs_index(tmp_path):
    result, doc = ask(tmp_path, MIXED, "torch", "--json")
    assert result.exit_code == 0 and doc["ok"]
    assert (doc["pick"]["release"], doc["pick"]["cuda"]) == ("2.14.1", "12.6")
    assert [g["runs"] for g in doc["pick"]["gpus"]] == ["sm_60 cubin", "sm_86 cubin"]
    assert doc["install"]["pip"] == "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    assert "uv pip install torch==2.14.1 --torch-backend=cu126" in doc["install"]["uv"]
    assert "UV_TORCH_BACKEND=cu126 uv pip install torch==2.14.1" in doc["install"]["uv"]
    # asked from a login node: the conda solve is told the node's CUDA
    assert doc["install"]["conda"].startswith("CONDA_OVERRIDE_CUDA=12.2 conda install -c conda-forge pytorch-gpu")
    assert any("13.2" in n["cuda"] for n in doc["newer"])


def test_mixed_node_tensorflow_and_jax(tmp_path):
    _, tf = ask(tmp_path, MIXED, "tensorflow", "--json")
    assert tf["pick"]["release"] == "2.21.0" and tf["install"]["pip"] == "pip install 'tensorflow[and-cuda]==2.21.0'"
    _, jax = ask(tmp_path, MIXED, "jax", "--json")
    assert jax["pick"]["cuda"] == "12" and jax["install"]["pip"].startswith("pip install 'jax[cuda12]==")


def test_v100_on_r580_gets_the_last_torch_with_volta_code(tmp_path):
    # torch's CUDA 13 wheels carry no sm_70 (read from the wheels); the CUDA 12.6 builds still do
    result, doc = ask(tmp_path, V100, "torch", "--json")
    assert result.exit_code == 0
    assert (doc["pick"]["release"], doc["pick"]["cuda"]) == ("2.14.1", "12.6")
    assert any("has no code for it" in w for n in doc["newer"] for w in n["why"])


def test_v100_cudnn_falls_back_to_the_cuda12_build(tmp_path):
    result, doc = ask(tmp_path, V100, "cudnn", "--json")
    assert result.exit_code == 0 and doc["pick"]["cuda"].startswith("12.")
    assert doc["install"]["pip"].startswith("pip install nvidia-cudnn-cu12==")


def test_rtx5090_on_r550_nothing_fits_and_it_says_why(tmp_path):
    result, _ = ask(tmp_path, RTX5090_550, "torch")
    assert result.exit_code == 1
    assert ("NVIDIA GeForce RTX 5090 (compute capability 12.0) needs CUDA 12.8 builds; driver 550.54.15 runs CUDA "
            "12.4: upgrade the driver to R570 or newer") in result.stdout
    _, doc = ask(tmp_path, RTX5090_550, "torch", "--json")
    assert doc["pick"] is None and doc["driver_upgrade"]["branch"] == "R570"


def test_rtx5090_on_r570_gets_a_cuda_12_8_build_with_sm_120(tmp_path):
    result, doc = ask(tmp_path, RTX5090_570, "torch", "--json")
    assert result.exit_code == 0
    assert doc["pick"]["cuda"] == "12.8" and doc["pick"]["gpus"][0]["runs"] == "sm_120 cubin"
    assert doc["install"]["pip"] == "pip install torch==%s" % doc["pick"]["release"]


def test_h100_cudnn_names_the_installer_for_the_toolkit(tmp_path):
    path = tmp_path / "node.json"
    path.write_text(node_report(*H100))  # real_machine(): CUDA 13.0 toolkit at /usr/local/cuda
    doc = json.loads(CliRunner().invoke(app, ["pick", "cudnn", "--against", str(path), "--json"]).stdout)
    assert doc["pick"]["cuda"] == "13.0"
    assert doc["install"]["cudnn-doctor"].startswith("sudo cudnn-doctor install --version %s --cuda 13" %
                                                     doc["pick"]["release"])


@pytest.mark.parametrize("form,expect", [
    ("pip", "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126\n"),
    ("uv", "uv pip install torch==2.14.1 --torch-backend=cu126\n"),
    ("requirements", "--index-url https://download.pytorch.org/whl/cu126\ntorch==2.14.1\n"),
])
def test_emit_prints_one_form_alone(tmp_path, form, expect):
    result, _ = ask(tmp_path, MIXED, "torch", "--emit", form)
    assert result.exit_code == 0 and result.stdout == expect


def test_a_version_spec_bounds_the_pick(tmp_path):
    _, doc = ask(tmp_path, H100, "torch", ">=2.10,<2.12", "--json")
    assert doc["pick"]["release"] == "2.11.0"
    _, doc = ask(tmp_path, H100, "torch", "2.10", "--json")
    assert doc["pick"]["release"] == "2.10.0"


@pytest.mark.parametrize("args,words", [
    (["pick", "pytorch"], "not one of"),
    (["pick", "torch", "two.eight"], "not a version spec"),
    (["pick", "torch", "--emit", "wheel"], "--emit wants"),
    (["pick", "torch", "--against", "/nonexistent/node.json"], "cannot read"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and words in result.stderr and "Traceback" not in result.stderr


def test_a_report_of_a_gpu_less_node_asks_for_a_compute_node(tmp_path):
    path = tmp_path / "login.json"
    path.write_text(node_report(None, None, []))
    result = CliRunner().invoke(app, ["pick", "torch", "--against", str(path)])
    assert result.exit_code == 2 and "compute node" in result.stderr
    (tmp_path / "bad.json").write_text('{"command": "matrix"}')
    result = CliRunner().invoke(app, ["pick", "torch", "--against", str(tmp_path / "bad.json")])
    assert result.exit_code == 2 and "not a `cudnn-doctor check --json` report" in result.stderr


def test_on_a_gpu_less_login_node_it_asks_for_a_compute_nodes_report(monkeypatch):
    from facts_factory import no_gpu_machine

    import cudnn_doctor.diagnose as diagnose

    monkeypatch.setattr(diagnose, "collect_facts", lambda *a, **k: no_gpu_machine())
    result = CliRunner().invoke(app, ["pick", "torch"])
    assert result.exit_code == 1
    assert "--against node.json" in result.stderr and "check --json > node.json" in result.stderr
    # the question asked goes into the command it suggests, the version spec too (a new user's `pick jax 0.7`)
    result = CliRunner().invoke(app, ["pick", "torch", ">=2.6,<2.9"])
    assert "`cudnn-doctor pick torch '>=2.6,<2.9' --against node.json`" in result.stderr, result.stderr


def test_this_machine_is_judged_from_the_facts_check_collects(monkeypatch):
    from pick_nodes import node_facts

    import cudnn_doctor.diagnose as diagnose

    monkeypatch.setattr(diagnose, "collect_facts", lambda *a, **k: node_facts(*RTX5090_570))
    result = CliRunner().invoke(app, ["pick", "torch", "--json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["machine"]["label"] == "this machine" and not doc["machine"]["from_report"]
    assert "CONDA_OVERRIDE_CUDA" not in doc["install"]["conda"]  # the solve runs where it installs


def test_a_volta_gpu_on_a_driver_past_r580_gets_no_cudnn(tmp_path):
    """Found by the generator: R590 no longer drives Volta, whatever cuDNN's own verdict for CUDA and driver."""
    result, doc = ask(tmp_path, ("590.44.01", "13.1", [("Tesla V100-SXM2-32GB", "7.0")]), "cudnn", "--json")
    assert result.exit_code == 1 and doc["pick"] is None
    assert any("not driven by driver branches after R580" in w for w in doc["why_none"])
