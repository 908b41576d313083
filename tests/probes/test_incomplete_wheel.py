"""A cuDNN wheel broken as built (compat/known_bad.toml [cudnn], `wheel`): the CUDA 13 wheel of 9.20.0.48, which
torch 2.12.0-2.13.0 pin (and its CUDA 12 one), lacks libcudnn_engines_tensor_ir.so.9, which its libcudnn_graph.so.9
opens by name, so a
system libcudnn9 package lends its own release's copy (pytorch#188892, #187824, #185512: the loader took
/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9 beside the wheel's others, and the first convolution failed
with CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH). On fake machines with real ELF files and the real ld.so.cache; the
wheel's file list is the real one's (tests/knowledge/test_incomplete_wheels.py reads it from PyPI)."""
from __future__ import annotations

import shutil

import pytest

from cudnn_doctor.diagnose import collect_facts
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate
from kit import SUBLIBS, build_ld_cache

SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
SYSTEM = "/usr/lib/x86_64-linux-gnu"
TENSOR_IR = "libcudnn_engines_tensor_ir.so.9"
PIN = 'nvidia-cudnn-cu13==9.20.0.48; platform_system == "Linux"'


def _torch_2_13(machine, system_cudnn: bool, pin: str = PIN):
    """torch 2.13.0 over the 9.20.0.48 cu13 wheel it pins (no tensor_ir engine, as on PyPI); a CUDA 12 system
    cuDNN 9.23.2 with its engine in the loader's cache where `system_cudnn`."""
    machine.driver()
    machine.pip_cudnn(SITE, "9.20.0.48", cuda_major=13, cudart=13000)
    machine.dist(SITE, "torch", "2.13.0", requires=[pin], files={"torch/version.py": "cuda = '13.0'\n"})
    machine.consumer(SITE + "/torch/lib/libtorch_cuda.so", ["libcudnn.so.9"], rpath="$ORIGIN/../../nvidia/cudnn/lib")
    if system_cudnn:
        machine.cudnn("9.23.2", SYSTEM, None, cuda=12080, subs=SUBLIBS[9] + ["engines_tensor_ir"])
    build_ld_cache(machine)


def _upgrade_wheel(machine, release: str):
    """What `pip install -U "nvidia-cudnn-cu13>=9.21.0"` leaves: the newer wheel, whose file list has the engine."""
    for old in machine.p(SITE).glob("nvidia_cudnn_cu13-*.dist-info"):
        shutil.rmtree(old)
    shutil.rmtree(machine.p(SITE + "/nvidia/cudnn"))
    machine.pip_cudnn(SITE, release, cuda_major=13, cudart=13000)
    machine.cudnn(".".join(release.split(".")[:3]), SITE + "/nvidia/cudnn/lib", None, cuda=13000,
                  subs=["engines_tensor_ir"], versioned_names=False)
    build_ld_cache(machine)


def _check(machine):
    facts = collect_facts(str(machine.root), env={"PATH": "/usr/bin:/bin"})
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return facts, findings


def test_the_engine_a_system_cudnn_lends_is_found_and_the_fix_is_a_wheel_that_has_it(machine):
    _torch_2_13(machine, system_cudnn=True)
    facts, findings = _check(machine)
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn_parts[TENSOR_IR].path == SYSTEM + "/" + TENSOR_IR
    [mixed] = [f for f in findings if f.id == "CD709"]
    assert mixed.severity.value == "error" and TENSOR_IR in mixed.title and "9.23.2" in mixed.title
    upgrade = [c for c in mixed.remedy.commands if "install" in c]
    assert upgrade and upgrade[0].endswith('install -U "nvidia-cudnn-cu13>=9.21.0"'), mixed.remedy.commands
    [bad] = [f for f in findings if f.id == "CD506"]
    assert bad.severity.value == "warning" and TENSOR_IR in bad.title
    assert bad.remedy.commands[-1].endswith('install -U "nvidia-cudnn-cu13>=9.21.0"')


def test_without_another_copy_the_wheel_runs_and_only_its_release_is_named(machine):
    _torch_2_13(machine, system_cudnn=False)
    facts, findings = _check(machine)
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn_parts[TENSOR_IR].path is None
    assert not [f for f in findings if f.id == "CD709"]  # an absent later engine is not a missing sub-library
    assert [f.severity.value for f in findings if f.id == "CD506"] == ["warning"]


def test_after_the_fix_the_mix_is_gone_and_torch_s_pin_is_said_not_warned(machine):
    _torch_2_13(machine, system_cudnn=True)
    _upgrade_wheel(machine, "9.21.0.82")
    facts, findings = _check(machine)
    [torch] = facts.python.frameworks
    assert torch.resolved_cudnn_parts[TENSOR_IR].path == SITE + "/nvidia/cudnn/lib/" + TENSOR_IR
    assert not [f for f in findings if f.id in ("CD709", "CD506") or f.severity.value == "error"]
    [pin] = [f for f in findings if f.id == "CD702"]
    assert pin.severity.value == "info" and pin.remedy is None and "way out" in pin.detail


# `==9.20.*` admits no release on PyPI but the broken 9.20.0.48: the same way out. pip check reads no extra's
# requirements (TensorFlow's [and-cuda]): the words must not claim it reports one.
@pytest.mark.parametrize("pin, says, not_said", [
    ("nvidia-cudnn-cu13==9.20.*", "`pip check` reports", "does not report it"),
    ('nvidia-cudnn-cu13==9.20.0.48; extra == "cuda"', "does not report it", "`pip check` reports"),
], ids=["wildcard", "extra"])
def test_the_way_out_is_said_for_every_pin_that_holds_the_broken_release(machine, pin, says, not_said):
    _torch_2_13(machine, system_cudnn=True, pin=pin)
    _upgrade_wheel(machine, "9.21.0.82")
    _, findings = _check(machine)
    [found] = [f for f in findings if f.id == "CD702"]
    assert found.severity.value == "info" and found.remedy is None and "way out" in found.detail
    assert says in found.detail and not_said not in found.detail


def test_the_system_package_of_the_same_release_is_not_the_broken_build(machine):
    machine.driver()
    machine.cudnn("9.20.0", SYSTEM, None, cuda=13000, subs=SUBLIBS[9] + ["engines_tensor_ir"])
    build_ld_cache(machine)
    _, findings = _check(machine)
    assert not [f for f in findings if f.id == "CD506"]
