"""An old PyTorch release named as the fix comes with the Python it installs on: the wheel index (PyPI's own files,
compat/wheels.json) says which Pythons a release has wheels for. Found by asking pip's resolver about every pip line
explain prints: `torch==1.2` for a paste that names no Python resolves for 3.5-3.7 and for nothing a user runs today."""
from __future__ import annotations

from cudnn_doctor.explain import explain
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index
from cudnn_doctor.remedies.paste_python import torch_release_fix

DRIVER_CUDA_10_0 = ("AssertionError:\nThe NVIDIA driver on your system is too old (found version 10000).\n"
                    "Please update your GPU driver by downloading and installing a new\nversion from the URL: "
                    "http://www.nvidia.com/Download/index.aspx\nAlternatively, go to: https://pytorch.org to install\n"
                    "a PyTorch version that has been compiled with your version\nof the CUDA driver.")


def test_the_index_knows_each_releases_pythons_from_its_files():
    index, linux = load_wheel_index(), Node(machine="x86_64")
    assert index.pythons("torch", "1.2.0", linux) == ["2.7", "3.5", "3.6", "3.7"]
    assert index.pythons("torch", "1.2", linux) == index.pythons("torch", "1.2.0", linux)  # as pip reads "1.2"
    assert "3.8" in index.pythons("torch", "1.6.0", linux) and "3.9" not in index.pythons("torch", "1.6.0", linux)
    assert index.pythons("torch", "1.2.0", Node(platform="win32", machine="AMD64")) == []  # PyPI had no Windows wheel


def test_a_paste_that_names_no_python_gets_the_release_and_the_environment_it_needs():
    ex = explain(DRIVER_CUDA_10_0, check=False).explanation
    assert "torch==1.2" in ex.fix.text and "Python 3.5 to 3.7 only" in ex.fix.text, ex.fix.text
    assert "python3.7 -m venv .venv-py37" in ex.fix.alternatives, ex.fix.alternatives  # run instead, not after


def test_a_named_python_decides_between_the_plain_install_and_the_environment(fix_target):
    compat = load_compat()
    on_36 = torch_release_fix(compat, "1.2.0", "10.0", "why", python="3.6.9")
    assert on_36.commands == ["pip install --force-reinstall torch==1.2.0"] and not on_36.alternatives
    on_311 = torch_release_fix(compat, "1.2.0", "10.0", "why", python="3.11")
    assert on_311.commands[0] == "python3.7 -m venv .venv-py37" and "no wheel for Python 3.11" in on_311.text
    on_27 = torch_release_fix(compat, "1.2.0", "10.0", "why", python="2.7.18")  # PyPI has its cp27 wheels
    assert on_27.commands == ["pip install --force-reinstall torch==1.2.0"], on_27.commands


def test_a_windows_paste_is_told_the_pythons_of_the_page_pypi_had_no_wheel_for(fix_target):
    # PyPI held no Windows wheel of 1.5 and older (torch_stable.html did, for the same Pythons as Linux's)
    fix = torch_release_fix(load_compat(), "1.2.0", "10.0", "why", platform="windows")
    assert "Python 3.5 to 3.7 only" in fix.text and "py -3.7 -m venv .venv-py37" in fix.alternatives, fix.text


def test_a_release_of_today_gets_no_note(fix_target):
    fix = torch_release_fix(load_compat(), "2.5.1", "12.4", "why")
    assert "wheels for Python" not in fix.text and not fix.alternatives, fix.text
