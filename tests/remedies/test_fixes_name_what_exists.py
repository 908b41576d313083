"""Every version a fix names exists, for machines drawn at random (hypothesis): a cuDNN release in
`install --version X --cuda N`, `nvidia-cudnn-cuN==X`, `libcudnnN=X-1+cudaY` must have a build for that CUDA, a
`torch==X` / `tensorflow[and-cuda]==X` must be a release on PyPI, an `RNNN` driver branch must be one NVIDIA shipped,
each as the knowledge's one validator (knowledge/exists.py) says. A draw that finds one becomes a regression case."""
from __future__ import annotations

import re
from typing import List, Tuple

from hypothesis import HealthCheck, example, given, settings, strategies as st

from cudnn_doctor.model import DriverFacts
from cudnn_doctor.rules import RuleContext, evaluate
from facts_factory import PIP_CUDNN, SYSLIB, TORCH_SITE, cudnn_copy, driver, framework, gpu, real_machine, toolkit
from hermetic import shipped_compat
import pytest

# The fixes these tests build themselves are written for Target() (the live root, a user, sh).
pytestmark = pytest.mark.usefixtures("fix_target")

COMPAT = shipped_compat()

CUDAS = [c for c in COMPAT.cuda_releases() if c.split(".")[0] in ("10", "11", "12", "13")]
CUDNNS = [r for r in COMPAT.cudnn_releases() if r.split(".")[0] in ("7", "8", "9")]
DRIVERS = sorted({r["linux"] for r in COMPAT.toolkit_rows() if r.get("linux") and r["cuda"] >= "10"})
GPUS = COMPAT.gpu_names()
TORCHES = COMPAT.framework_releases("torch")
TARGETS = [None, "torch", "tensorflow", "jax"] + ["torch==%s" % v for v in TORCHES[-8:]] + ["torch==2.5",
                                                                                          "torch==2.5.7"]


def named_versions(text: str) -> List[Tuple[str, str, str]]:
    """(kind, version, for) of every version a fix's line names."""
    out = [("cudnn", v, c) for v, c in re.findall(r"install --version (\S+) --cuda (\d+)", text)]
    out += [("cudnn", v, c) for c, v in re.findall(r"nvidia-cudnn-cu(\d+)==(\d+\.\d+\.\d+)", text)]
    out += [("cudnn", v, c) for v, c in re.findall(r"libcudnn\d+=(\d+\.\d+\.\d+)[\d.*]*-1\+cuda(\d+\.\d+)", text)]
    out += [("torch", v, "") for v in re.findall(r"torch==([0-9][0-9.]*[0-9])", text)]
    out += [("tensorflow", v, "") for v in re.findall(r"tensorflow(?:\[and-cuda\])?==([0-9][0-9.]*[0-9])", text)]
    out += [("driver", b, "") for b in re.findall(r"\bR(\d{3})\b", text)]
    return out


def does_not_exist(kind: str, version: str, cuda: str) -> bool:
    if kind == "cudnn":
        return COMPAT.cudnn_build_exists(version, cuda) is False
    if kind == "driver":
        return COMPAT.driver_branch_exists(version) is False
    return COMPAT.framework_release_exists(kind, version) is False


@st.composite
def machines(draw):
    facts = real_machine()
    cuda = draw(st.sampled_from(CUDAS))
    facts.toolkits = [toolkit(cuda)] if draw(st.booleans()) else []
    has_driver = draw(st.integers(0, 4)) > 0
    facts.driver = driver(draw(st.sampled_from(DRIVERS)), None) if has_driver else \
        DriverFacts(kernel_module_loaded=False)
    if not has_driver:
        facts.loader.resolved.pop("libcuda.so.1", None)
    listed = draw(st.sampled_from(GPUS))
    facts.gpus = [gpu(name=listed.name, cc=listed.cc)] if has_driver else []
    facts.host.in_container = draw(st.booleans())
    copies = []
    for place in draw(st.lists(st.sampled_from(["system", "pip"]), max_size=2, unique=True)):
        version = draw(st.sampled_from(CUDNNS))
        built = draw(st.sampled_from(CUDAS))
        copies.append(cudnn_copy(SYSLIB if place == "system" else PIP_CUDNN, version, built, origin=place,
                                 links=place == "system"))
    facts.cudnn = copies
    if draw(st.booleans()):
        version = draw(st.sampled_from(TORCHES))
        facts.python.frameworks = [framework("torch", version + draw(st.sampled_from(["", "+cpu", "+cu118",
                                                                                     "+cu121", "+cu128", "+cu130"])),
                                             location=TORCH_SITE)]
    else:
        facts.python.frameworks = []
    return facts, draw(st.sampled_from(TARGETS))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(machines())
@example((real_machine(), "torch==2.5"))
@example((real_machine(), "torch==2.5.7"))  # no such release: the pin is the table's 2.5 (2.5.0)
def test_no_fix_names_a_build_that_does_not_exist(drawn):
    facts, target = drawn
    findings, _ = evaluate(facts, RuleContext(compat=COMPAT, target=target))
    bad = []
    for f in findings:
        if f.remedy is None:
            continue
        for line in [f.remedy.text, *f.remedy.commands]:
            bad += [(f.id, kind, version, cuda, line) for kind, version, cuda in named_versions(line)
                    if does_not_exist(kind, version, cuda)]
    assert bad == [], bad


def test_the_parser_reads_what_builders_print():
    line = ('sudo cudnn-doctor install --version 9.1.0 --cuda 13 --cuda-home /usr/local/cuda; '
            'pip install "nvidia-cudnn-cu12==9.1.0.*"; sudo apt install libcudnn8=8.9.7.*-1+cuda12.2; '
            'pip install --force-reinstall torch==2.5 --index-url https://download.pytorch.org/whl/cu124; '
            'pip install "tensorflow[and-cuda]==2.15.0"; upgrade to R570')
    assert named_versions(line) == [("cudnn", "9.1.0", "13"), ("cudnn", "9.1.0", "12"), ("cudnn", "8.9.7", "12.2"),
                                    ("torch", "2.5", ""), ("tensorflow", "2.15.0", ""), ("driver", "570", "")]
    assert does_not_exist("cudnn", "9.1.0", "13") and not does_not_exist("cudnn", "9.1.0", "12")
    assert does_not_exist("torch", "2.5.7", "") and not does_not_exist("torch", "2.5", "")
    assert not does_not_exist("driver", "570", "") and does_not_exist("driver", "120", "")
