"""fix's before -> after lines: a finding is its id and its words, since one id reports each framework and wheel
apart (a new user's trial: with TensorFlow's and JAX's CD702 in one site, one was called gone while it stayed)."""
from __future__ import annotations

from cudnn_doctor.render.fix import before_after_lines

TF = ("CD702", "tensorflow 2.19.0 requires nvidia-cuda-nvcc-cu12==12.5.82 but nvidia-cuda-nvcc-cu12 12.9.86 is installed")
JAX = ("CD702", "jax-cuda12-plugin 0.7.2 requires nvidia-cudnn-cu12>=9.8 but nvidia-cudnn-cu12 9.3.0.75 is installed")


def test_two_findings_of_one_id_each_get_their_own_state():
    lines = before_after_lines([TF, JAX], {TF}, ["CD702"])
    assert lines[1].startswith("  CD702  tensorflow") and lines[1].endswith("-> still there  (fix took it on)")
    assert lines[2].startswith("  CD702  jax-cuda12-plugin") and lines[2].endswith("-> gone")
    lines = before_after_lines([TF, JAX], {JAX}, [])
    assert lines[1].endswith("-> gone") and lines[2].endswith("-> still there  (left for you)")
