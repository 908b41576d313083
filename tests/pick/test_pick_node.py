"""The node a pick is for, read and used: each environment's Python (pyvenv.cfg, lib/python3.X, bin/python3), the
root's glibc (libc's file name or its banner), and `pick --against` answering for them from the wheel index (the
issue's cases: Python 3.10 gets torch 2.14.1 not 2.15.0; aarch64 never gets an ONNX Runtime without an aarch64
wheel; a CUDA 12 driver gets a CUDA 12 ONNX Runtime instead of a driver upgrade)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from clirunner import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pick_nodes import node_report  # noqa: E402

from cudnn_doctor.cli import app  # noqa: E402
from cudnn_doctor.host import Host  # noqa: E402
from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index  # noqa: E402
from cudnn_doctor.probes.hostinfo import glibc_version  # noqa: E402
from cudnn_doctor.probes.python_env import python_of  # noqa: E402

H100 = [("NVIDIA H100 80GB HBM3", "9.0")]
GH200 = [("NVIDIA GH200 480GB", "9.0")]


def _write(root: Path, inside: str, text: str = "") -> None:
    path = root / inside.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_python_of_each_environment(tmp_path):
    _write(tmp_path, "/opt/venv/pyvenv.cfg", "home = /usr/bin\nversion_info = 3.10.12.final.0\n")
    (tmp_path / "opt/venv/lib/python3.10/site-packages").mkdir(parents=True)
    (tmp_path / "usr/lib/python3/dist-packages").mkdir(parents=True)
    _write(tmp_path, "/usr/bin/python3.12", "")
    (tmp_path / "usr/bin/python3").symlink_to("python3.12")
    host = Host(str(tmp_path))
    assert python_of(host, "/opt/venv/lib/python3.10/site-packages") == {
        "site": "/opt/venv/lib/python3.10/site-packages", "version": "3.10", "source": "/opt/venv/pyvenv.cfg"}
    assert python_of(host, "/usr/local/lib/python3.11/dist-packages")["version"] == "3.11"
    assert python_of(host, "/usr/lib/python3/dist-packages")["version"] == "3.12"
    assert python_of(host, "/srv/wheels") is None


def test_glibc_from_the_roots_libc(tmp_path):
    _write(tmp_path, "/lib/x86_64-linux-gnu/libc-2.31.so", "")
    (tmp_path / "lib/x86_64-linux-gnu/libc.so.6").symlink_to("libc-2.31.so")
    assert glibc_version(Host(str(tmp_path))) == "2.31"
    newer = tmp_path / "newer"
    _write(newer, "/lib/aarch64-linux-gnu/libc.so.6",
           "\x7fELF...GNU C Library (Ubuntu GLIBC 2.39-0ubuntu8) stable release version 2.39.\n")
    assert glibc_version(Host(str(newer))) == "2.39"
    assert glibc_version(Host(str(tmp_path / "empty"))) is None


def ask(tmp_path, gpus, python, machine, glibc, *args, driver=("580.95.05", "13.0")):
    path = tmp_path / "node.json"
    path.write_text(node_report(driver[0], driver[1], gpus, toolkit=False, python=python, machine=machine,
                                glibc=glibc))
    result = CliRunner().invoke(app, ["pick", *args, "--against", str(path), "--json"])
    return result, json.loads(result.stdout)


def test_python_310_node_gets_the_newest_release_with_a_cp310_wheel(tmp_path):
    result, doc = ask(tmp_path, H100, "3.10", "x86_64", "2.35", "torch")
    assert result.exit_code == 0 and doc["pick"]["release"] == "2.14.1"
    assert doc["machine"]["python"] == "3.10" and doc["machine"]["glibc"] == "2.35"
    assert any("2.15.0" == n["release"] and "Python" in n["why"][0] for n in doc["newer"])
    _, ort = ask(tmp_path, H100, "3.10", "x86_64", "2.35", "onnxruntime")
    assert ort["pick"]["release"] == "1.23.2"


def test_aarch64_node_never_gets_an_onnxruntime_without_an_aarch64_wheel(tmp_path):
    index = load_wheel_index()
    for python, glibc in (("3.12", "2.28"), ("3.12", "2.35"), ("3.10", "2.35")):
        result, doc = ask(tmp_path, GH200, python, "aarch64", glibc, "onnxruntime")
        if doc["ok"]:
            node = Node(python, "aarch64", glibc)
            assert index.wheels("onnxruntime-gpu", doc["pick"]["release"], node)
        else:
            assert result.exit_code == 1 and doc["why_none"] and doc["would_fit"]


def test_cuda12_driver_gets_a_cuda12_onnxruntime_not_a_driver_upgrade(tmp_path):
    for driver in (("535.104.05", "12.2"), ("550.54.15", "12.4"), ("570.86.10", "12.8")):
        result, doc = ask(tmp_path, H100, "3.12", "x86_64", "2.35", "onnxruntime", driver=driver)
        assert result.exit_code == 0, doc["why_none"]
        assert doc["pick"]["cuda"].startswith("12") and doc["driver_upgrade"] is None
