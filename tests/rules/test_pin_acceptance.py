"""CD702 judges a cuDNN wheel outside a framework's pin by what the framework does at run time with that release
(compat's [cudnn_acceptance]), in its own words: torch's and TensorFlow's checks refuse an older minor than their
build; a framework whose rule is the soname alone (ONNX Runtime, CuPy) or that only warns (Paddle) runs with it.
The pins are the real wheels' Requires-Dist lines."""
from __future__ import annotations

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, FrameworkFacts, PythonEnvFacts
from cudnn_doctor.rules import RuleContext, evaluate

SITE = "/venv/lib/python3.11/site-packages"


def _cd702(name: str, version: str, built: str, pin: str, installed: str):
    fw = FrameworkFacts(name=name, version=version, location=SITE, cuda_build=True, cudnn_version=built,
                        requires=[pin])
    wheel = {"name": pin.split("=")[0].split("~")[0].strip(), "version": installed, "location": SITE}
    facts = Facts(python=PythonEnvFacts(site_dirs=[SITE], frameworks=[fw], nvidia_wheels=[wheel]))
    return [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702"]


@pytest.mark.parametrize("name, version, built, pin, installed, words", [
    # torch 2.9.1 (built with 9.8.0, pins 9.10.2.21) beside the 9.5.1 wheel: torch's own check refuses it
    ("torch", "2.9.1", "9.8.0", 'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux"', "9.5.1.17",
     "PyTorch was compiled  against 9.8.0 but found runtime version 9.5.1"),
    # TensorFlow 2.19 (built with and pinning 9.3.0.75) beside 9.1: XLA's check refuses it
    ("tensorflow", "2.19.0", "9.3.0", "nvidia-cudnn-cu12 ==9.3.0.75 ; extra == 'and-cuda'", "9.1.0.70",
     "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0"),
])
def test_an_older_minor_is_refused_in_the_frameworks_own_words(name, version, built, pin, installed, words):
    found = _cd702(name, version, built, pin, installed)
    assert len(found) == 1 and words in found[0].detail, found


@pytest.mark.parametrize("name, kind_words", [
    ("onnxruntime-gpu", "checks no more than the major"),
    ("paddlepaddle-gpu", "it runs and warns"),
])
def test_a_framework_that_checks_only_the_soname_or_warns_runs_with_an_older_minor(name, kind_words):
    # a made-up exact pin on a real release: neither publishes one, so only the acceptance rule can decide
    found = _cd702(name, "1.22.0" if name.startswith("onnx") else "2.6.2", "9.3.0",
                   "nvidia-cudnn-cu12==9.3.0.75", "9.1.0.70")
    assert len(found) == 1 and found[0].severity.value == "warning", found
    assert kind_words in found[0].detail and "stops" not in found[0].detail


def test_a_pin_no_release_shares_with_another_frameworks_is_left_not_installed():
    """A new user's trial: TensorFlow 2.19's [and-cuda] pins nvcc ==12.5.82, the JAX 0.7.2 plugin's [with-cuda] asks
    >=12.6.85 (both read from PyPI's metadata in the wheel index). Installing TensorFlow's pin broke JAX's; no release
    meets both, so the fix says to leave the installed one, and says that pip check does not see an extra's pins."""
    from cudnn_doctor.knowledge.wheel_index import Node, load_wheel_index

    index, node = load_wheel_index(), Node("3.11", "x86_64", "2.36")
    tf_pins = [str(r) for r in index.requirements("tensorflow", "2.19.0", node, ("and-cuda",))]
    jax_pins = [str(r) for r in index.requirements("jax-cuda12-plugin", "0.7.2", node, ("with-cuda",))]
    wheel = {"name": "nvidia-cuda-nvcc-cu12", "version": "12.9.86", "location": SITE}
    tf = FrameworkFacts(name="tensorflow", version="2.19.0", location=SITE, cuda_build=True, requires=tf_pins)
    jax = FrameworkFacts(name="jax-cuda12-plugin", version="0.7.2", location=SITE, cuda_build=True, requires=jax_pins)
    facts = Facts(python=PythonEnvFacts(site_dirs=[SITE], frameworks=[tf, jax], nvidia_wheels=[wheel]))
    found = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0]
             if f.id == "CD702" and "nvcc" in f.title]
    assert len(found) == 1 and "tensorflow 2.19.0 (its [and-cuda] extra) requires nvidia-cuda-nvcc-cu12==12.5.82" in found[0].title, found
    assert not found[0].remedy.commands and "leave nvidia-cuda-nvcc-cu12 12.9.86" in found[0].remedy.text
    assert ">=12.6.85" in found[0].remedy.text and "does not report it" in found[0].detail
    # where one release meets both (JAX's floor at TensorFlow's pin), that release is the fix
    jax.requires = [p.replace(">=12.6.85", ">=12.5") for p in jax_pins]
    [pin] = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702" and "nvcc" in f.title]
    assert pin.remedy.commands == ['pip install "nvidia-cuda-nvcc-cu12==12.5.82"'], pin.remedy.commands
    # ranges only (no exact pin decides): both ranges go to pip, which finds the release or says none is
    tf.requires = [p.replace("==12.5.82", ">=13.0") for p in tf_pins]
    [pin] = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702" and "nvcc" in f.title]
    assert pin.remedy.commands == ['pip install "nvidia-cuda-nvcc-cu12>=13.0,>=12.5"'], pin.remedy.commands


def test_a_pin_is_said_of_the_wheel_that_declares_it():
    """JAX's PJRT wheel declares no requirements; the probe gives it its plugin wheel's (requires_source): CD702 names
    the plugin, whose METADATA a user would read (a new user's trial)."""
    fw = FrameworkFacts(name="jax-cuda12-pjrt", version="0.7.2", location=SITE, cuda_build=True, cudnn_version="9.8.0",
                        requires=['nvidia-cudnn-cu12<10.0,>=9.8; sys_platform == "linux" and extra == "with-cuda"'],
                        requires_source=SITE + "/jax_cuda12_plugin-0.7.2.dist-info/METADATA")
    wheel = {"name": "nvidia-cudnn-cu12", "version": "9.3.0.75", "location": SITE}
    facts = Facts(python=PythonEnvFacts(site_dirs=[SITE], frameworks=[fw], nvidia_wheels=[wheel]))
    [found] = [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id == "CD702"]
    assert found.title.startswith("jax-cuda12-plugin 0.7.2 (its [with-cuda] extra) requires nvidia-cudnn-cu12"), found.title
