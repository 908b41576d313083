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


def test_a_release_installed_twice_is_shown_with_its_environment():
    """Twins are matched by their words less the environment (a fix to one rewords the other), and each line still
    names the environment check named, so two lines that would read alike do not."""
    from cudnn_doctor.queries import without_environment

    said = ["torch 2.11.0 (in /opt/a) loads cuDNN 9.1.0, older than its 9.10 build",
            "torch 2.11.0 (in /opt/b) loads cuDNN 9.1.0, older than its 9.10 build"]
    keys = [("CD503", without_environment(t)) for t in said]
    assert keys[0] == keys[1] == ("CD503", "torch 2.11.0 loads cuDNN 9.1.0, older than its 9.10 build")
    lines = before_after_lines(keys, set(), ["CD503"], titles=said)
    assert lines[1] == "  CD503  %s -> gone" % said[0] and lines[2] == "  CD503  %s -> gone" % said[1]
