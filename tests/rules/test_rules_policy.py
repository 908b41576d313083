"""--require and --for: parsing, the facts each key means, and judging a machine against a framework build."""
from __future__ import annotations

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate
from cudnn_doctor.rules.policy import REQUIRE_KEYS, parse_requirement, parse_target
from facts_factory import dl4j_machine, driver, gpu, no_gpu_machine, real_machine


def verdicts(facts, rule_id, **kw):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat(), **kw))
    return [f for f in findings if f.id == rule_id]


@pytest.mark.parametrize("expr,key,inside,outside", [
    ("cuda>=11.8", "cuda", "12.0", "11.7"),
    ("cudnn>=8.9,<10", "cudnn", "9.1.0", "10.0.0"),
    ("driver>=535", "driver", "580.159.04", "470.82.01"),
    ("cc>=7.0", "cc", "9.0", "6.1"),
    (" toolkit == 13.0.* ", "toolkit", "13.0.2", "12.9"),
    ("compute_capability>=8.0", "cc", "8.6", "7.5"),
])
def test_parse_requirement(expr, key, inside, outside):
    req = parse_requirement(expr)
    assert req.key == key
    assert req.spec.contains(inside) and not req.spec.contains(outside)


@pytest.mark.parametrize("expr,message", [
    ("foo>=1", "unknown key"),
    ("cudnn", "needs a version comparison"),
    ("cudnn>=abc", "not a valid version comparison"),
    ("", "expected KEY"),
    ("cuda=>11", "needs a version comparison"),
])
def test_parse_requirement_rejects(expr, message):
    with pytest.raises(ValueError) as exc:
        parse_requirement(expr)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_every_key_is_documented():
    assert set(REQUIRE_KEYS) == {"driver", "cuda", "toolkit", "cudnn", "cc"}
    assert all(len(text) > 20 for text in REQUIRE_KEYS.values())


def test_requirements_on_the_real_machine():
    found = verdicts(real_machine(), "CD910", requires=["cuda>=12", "cudnn>=9.14", "cc>=9.0", "driver>=590",
                                                        "toolkit>=13", "cudnn>=9.15"])
    by = {f.evidence["requirement"]: f.severity.value for f in found}
    assert by == {"cuda>=12": "info", "cudnn>=9.14": "info", "cc>=9.0": "info", "driver>=590": "error",
                  "toolkit>=13": "info", "cudnn>=9.15": "error"}  # the system copy a plain process loads is 9.14
    failing = [f for f in found if f.severity.value == "error"]
    assert all(f.fix for f in failing)


def test_requirement_on_a_machine_without_the_component():
    found = verdicts(no_gpu_machine(), "CD910", requires=["cudnn>=8"])
    assert found[0].severity.value == "error" and "not met" in found[0].title


def test_requirement_cannot_tell():
    facts = real_machine()
    for c in facts.cudnn:
        c.version = None
    found = verdicts(facts, "CD910", requires=["cudnn>=8"])
    assert found[0].severity.value == "warning" and "Cannot tell" in found[0].title


@pytest.mark.parametrize("text,framework,version", [
    ("dl4j==1.0.0-beta6", "dl4j", "1.0.0-beta6"), ("deeplearning4j==1.0.0-m2.1", "dl4j", "1.0.0-M2.1"),
    ("torch", "torch", None), ("tensorflow==2.15", "tensorflow", "2.15"), ("jax", "jax", None),
    ("pytorch==2.11.0+cu130", "torch", "2.11.0+cu130"),
])
def test_parse_target(text, framework, version):
    t = parse_target(text, load_compat())
    assert (t.framework, t.version) == (framework, version)


@pytest.mark.parametrize("text,message", [
    ("caffe", "unknown framework"), ("dl4j==0.9.1", "no compat data for DL4J"),
    ("tensorflow==3.0", "no compat data for TensorFlow"), ("torch==0.4", "no compat data for PyTorch"),
    ("torch>=2", "expected FRAMEWORK"),
])
def test_parse_target_rejects(text, message):
    with pytest.raises(ValueError) as exc:
        parse_target(text, load_compat())
    assert message in str(exc.value)


def test_hopper_cannot_run_any_dl4j_beta6_backend():
    found = verdicts(real_machine(), "CD920", target="dl4j==1.0.0-beta6")
    assert found[0].severity.value == "error"
    assert "No DL4J release in compat has a CUDA backend for this GPU" in found[0].fix


def test_dl4j_with_the_wrong_cudnn_minor():
    facts = dl4j_machine("10.0.130", "7.3.1", "410.48")
    found = verdicts(facts, "CD920", target="dl4j==1.0.0-beta6")
    assert found[0].severity.value == "error"
    assert "cuDNN 7.4" in found[0].detail and "nd4j-cuda-10.0" in found[0].fix
    # beta4 paired CUDA 10.0 with cuDNN 7.3, so the same machine fits that release
    assert verdicts(facts, "CD920", target="dl4j==1.0.0-beta4")[0].severity.value == "info"


def test_dl4j_driver_too_old_names_the_upgrade():
    facts = dl4j_machine("10.2.89", "7.6.5", "418.39")
    found = verdicts(facts, "CD920", target="dl4j==1.0.0-beta6")
    fits = found[0]
    # 10.1 is not installed, so nothing fits; the fix for the installed 10.2 pair is a driver upgrade
    assert fits.severity.value == "error" and ">= 440.33" in fits.fix


def test_torch_target_picks_a_build_the_driver_runs():
    facts = real_machine()
    facts.driver = driver("535.104.05", "12.2")
    found = verdicts(facts, "CD920", target="torch==2.11")
    assert found[0].severity.value == "info" and "CUDA 12.8" in found[0].title
    assert "whl/cu128" in found[0].fix


def test_torch_target_on_a_gpu_the_build_lacks():
    facts = real_machine()
    facts.gpus = [gpu(name="NVIDIA GeForce GTX 1080", cc="6.1")]
    found = verdicts(facts, "CD920", target="torch==2.12.0+cu130")
    assert found[0].severity.value == "error" and "no kernels" in found[0].detail


def test_jax_and_tensorflow_targets():
    assert verdicts(real_machine(), "CD920", target="jax")[0].severity.value == "info"
    old = real_machine()
    old.driver = driver("470.82.01", "11.4")
    assert verdicts(old, "CD920", target="jax")[0].severity.value == "error"
    assert verdicts(old, "CD920", target="tensorflow==2.15")[0].severity.value == "error"
    assert verdicts(old, "CD920", target="tensorflow==2.11")[0].severity.value == "error"  # no CUDA 11.2 toolkit
    windows = real_machine()
    windows.host.platform = "windows"
    found = verdicts(windows, "CD920", target="tensorflow==2.15")
    assert found[0].severity.value == "error" and "WSL2" in found[0].fix


def test_bad_target_in_context_is_a_finding_not_a_crash():
    found = verdicts(real_machine(), "CD920", target="caffe")
    assert found[0].severity.value == "error" and found[0].fix
