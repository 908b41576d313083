"""CD810-CD815 as pure functions of an image's facts, alone and on a node (driver and GPUs from its report)."""
from __future__ import annotations

from facts_factory import make_facts, toolkit

from cudnn_doctor.diagnose import image_report
from cudnn_doctor.image.node import node_from_fields
from cudnn_doctor.model_image import ImageFacts
from cudnn_doctor.readers.nvidia_require import requirements_from_env

REQUIRE = "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471"


def image_facts(env=None, compat=()):
    env = dict({"NVIDIA_REQUIRE_CUDA": REQUIRE, "CUDA_VERSION": "12.4.1", "NVIDIA_DRIVER_CAPABILITIES":
                "compute,utility"}, **(env or {}))
    reqs, error = requirements_from_env(env)
    facts = make_facts(toolkits=[toolkit("12.4.1", realpath="/usr/local/cuda-12.4")], gpus=[], cudnn=[])
    facts.driver.version = facts.driver.cuda_version = facts.driver.kernel_module_version = None
    facts.image = ImageFacts(reference="oci:/img:v1", layers=[{}, {}], env=env, requirements=reqs,
                             requirement_error=error, disable_require=env.get("NVIDIA_DISABLE_REQUIRE") == "1",
                             compat_libcuda=[{"path": "/usr/local/cuda-12.4/compat/libcuda.so.%s" % v, "version": v}
                                             for v in compat])
    return facts


def node(driver="535.183.01", cuda="12.2", gpu="NVIDIA A100-SXM4-80GB", cc="8.0"):
    return node_from_fields("gpu001", {"driver": driver, "driver_cuda": cuda, "kernel_module": driver,
                                       "gpus": [{"name": gpu, "compute_capability": cc, "count": 2}]})


def by_id(report, rid):
    return [f for f in report.findings if f.id == rid]


def test_alone_the_node_side_is_pending_not_an_error():
    report = image_report(image_facts())
    assert [f.severity.value for f in by_id(report, "CD810")] == ["info"]
    assert not any(f.id.startswith(("CD1", "CD2")) for f in report.findings)


def test_refusal_and_acceptance_on_a_node():
    refused = by_id(image_report(image_facts(), node()), "CD811")
    assert refused[0].severity.value == "error" and refused[0].remedy.commands == ["sudo ubuntu-drivers install",
                                                                                  "sudo reboot"]
    assert refused[0].fix.startswith("on gpu001: Install or upgrade the NVIDIA driver to >= 550")
    assert by_id(image_report(image_facts(), node("580.95.05", "13.0")), "CD811")[0].severity.value == "info"


def test_brand_dependent_refusal_is_a_warning_naming_the_brands():
    found = by_id(image_report(image_facts(), node("470.57.02", "11.4")), "CD811")[0]
    assert found.severity.value == "warning" and "GeForce" in found.title and "Tesla" not in found.title
    # the name narrows the brand: a Tesla is a Tesla, so 470 passes through the forward-compatibility alternative
    tesla = by_id(image_report(image_facts(), node("470.57.02", "11.4", gpu="Tesla K80", cc="3.7")), "CD811")[0]
    assert tesla.severity.value == "info"
    geforce = by_id(image_report(image_facts(), node("470.57.02", "11.4", gpu="NVIDIA GeForce RTX 3090", cc="8.6")),
                    "CD811")[0]
    assert geforce.severity.value == "warning" and geforce.evidence["refused_brands"] == ["GeForce"]


def test_an_invalid_requirement_is_refused_everywhere():
    found = by_id(image_report(image_facts({"NVIDIA_REQUIRE_CUDA": "cuda==12.4"}), node("580.95.05", "13.0")),
                  "CD811")[0]
    assert found.severity.value == "error" and "invalid expression" in found.title


def test_disabled_requirements_warn_when_the_driver_is_too_old():
    facts = image_facts({"NVIDIA_DISABLE_REQUIRE": "1"})
    assert by_id(image_report(facts, node()), "CD812")[0].severity.value == "warning"
    assert by_id(image_report(facts, node("580.95.05", "13.0")), "CD812")[0].severity.value == "info"
    assert not by_id(image_report(facts, node()), "CD811")


def test_forward_compat_on_datacenter_and_consumer_gpus():
    facts = image_facts({"NVIDIA_DISABLE_REQUIRE": "1"}, compat=["550.54.15"])
    assert by_id(image_report(facts, node()), "CD813")[0].severity.value == "info"  # A100: data center
    geforce = by_id(image_report(facts, node(gpu="NVIDIA GeForce RTX 4090", cc="8.9")), "CD813")[0]
    assert geforce.severity.value == "error" and "804" in geforce.detail
    older = by_id(image_report(facts, node("580.95.05", "13.0")), "CD813")[0]
    assert older.severity.value == "warning" and "803" in older.detail


def test_driver_capabilities_and_visible_devices():
    no_compute = image_report(image_facts({"NVIDIA_DRIVER_CAPABILITIES": "utility"}))
    assert by_id(no_compute, "CD814")[0].severity.value == "error"
    assert not by_id(image_report(image_facts({"NVIDIA_DRIVER_CAPABILITIES": "all"})), "CD814")
    assert not by_id(image_report(image_facts({"NVIDIA_DRIVER_CAPABILITIES": ""})), "CD814")  # default: compute
    odd = by_id(image_report(image_facts({"NVIDIA_DRIVER_CAPABILITIES": "compute,gpu"})), "CD814")
    assert [f.severity.value for f in odd] == ["warning"]
    assert by_id(image_report(image_facts({"NVIDIA_VISIBLE_DEVICES": "void"})), "CD815")[0].severity.value == "warning"
    assert not by_id(image_report(image_facts({"NVIDIA_VISIBLE_DEVICES": "all"})), "CD815")


def test_legacy_cuda_version_that_cannot_be_read_is_refused():
    facts = image_facts({"NVIDIA_REQUIRE_CUDA": "", "CUDA_VERSION": "latest"})
    assert by_id(image_report(facts), "CD811")[0].severity.value == "error"
