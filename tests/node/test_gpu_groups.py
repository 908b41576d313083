"""Identical GPUs share one finding about their model: CD201 says 'GPUs 0, 1, 2 and 3' once instead of once per GPU,
and GPUs of two models get one finding each."""
from __future__ import annotations

import pytest

from facts_factory import gpu, make_facts, real_machine

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.rules import RuleContext, evaluate


def cd201(facts):
    findings, _ = evaluate(facts, RuleContext(compat=load_compat()))
    return [f for f in findings if f.id == "CD201"]


def with_code(gpus, sass, ptx=()):
    facts = make_facts(gpus=gpus)
    torch = facts.python.frameworks[0]
    torch.gpu_code = [{"library": "libtorch_cuda.so", "sass": list(sass), "ptx": list(ptx)}]
    return facts


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_identical_gpus_are_one_cd201_finding(count):
    gpus = [gpu(i, uuid="GPU-%d" % i) for i in range(count)]
    for sass, severity in ((["sm_90"], "info"), (["sm_80"], "error")):
        [finding] = cd201(with_code(gpus, sass))
        assert finding.severity.value == severity
        which = "GPU 0 (" if count == 1 else "GPUs %s and %d (" % (", ".join(map(str, range(count - 1))), count - 1)
        assert which in finding.title, finding.title


def test_two_models_are_one_finding_each():
    gpus = [gpu(0), gpu(1), gpu(2, name="NVIDIA A100-SXM4-80GB", cc="8.0"), gpu(3)]
    findings = cd201(with_code(gpus, ["sm_80"]))
    assert sorted(f.severity.value for f in findings) == ["error", "info"]
    assert any("GPUs 0, 1 and 3 (NVIDIA H100" in f.title for f in findings)
    assert any("GPU 2 (NVIDIA A100" in f.title for f in findings)


def test_the_real_machine_is_unchanged():
    assert len(cd201(real_machine())) <= 1
