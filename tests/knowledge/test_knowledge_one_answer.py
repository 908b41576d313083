"""One answer everywhere: for any (cuDNN release, CUDA minor, driver branch) the knowledge knows, `matrix`'s pair
verdict, check's rules (CD501 cuDNN-vs-toolkit, CD301 driver-vs-toolkit), install's CUDA-match line and explain
(which reports the routed rules' findings) say the same thing."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import facts_factory as ff
from cudnn_doctor.install.plan import compat_verdict
from cudnn_doctor.results import Report
from cudnn_doctor.rules import RuleContext, evaluate
from cudnn_doctor.versions import major_of
from hermetic import shipped_compat

COMPAT = shipped_compat()
RELEASES = [r for r in COMPAT.cudnn_releases() if r.split(".")[0] in ("8", "9")]
MINORS = [c for c in COMPAT.cuda_releases() if major_of(c) and major_of(c) >= 10 and COMPAT.min_driver(c)]
BRANCHES = ["418", "440", "450", "470", "495", "510", "525", "535", "550", "560", "570", "575", "580", "590",
            "595", "610", "615"]


def _machine(cudnn: str, built_for: str, cuda: str, driver: str):
    facts = ff.make_facts()
    facts.driver = ff.driver("%s.999.99" % driver, cuda=None)
    facts.toolkits = [ff.toolkit(cuda + ".0", path="/usr/local/cuda-%s" % cuda)]
    facts.cudnn = [ff.cudnn_copy("/usr/local/cuda-%s/lib64" % cuda, cudnn, built_for, origin="toolkit")]
    facts.python.frameworks = []
    return facts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cudnn=st.sampled_from(RELEASES), cuda=st.sampled_from(MINORS), branch=st.sampled_from(BRANCHES))
def test_matrix_rules_install_and_explain_agree(cudnn, cuda, branch):
    driver = "%s.999.99" % branch
    answer = COMPAT.pair_lookup(cuda, cudnn, driver, "linux", None, None)
    verdict = COMPAT.pair_verdict(cuda, cudnn, driver=driver)
    assert answer["verdict"] == verdict.verdict  # matrix prints the knowledge's verdict, nothing of its own
    by_check = {}
    for r in answer["reasons"]:
        by_check.setdefault(r["check"], []).append(r["ok"])
    build = COMPAT.build_for(cudnn, cuda)
    if build is None:
        return  # no row: the pair is judged by the release's builds alone (covered below by the matrix tests)
    built_for = build.variant[4:]
    cudnn_ok = by_check["cudnn-cuda"][0]
    # install's CUDA-match line
    assert compat_verdict(cudnn, built_for, cuda)[0] == cudnn_ok
    # check's rules, on a machine with this cuDNN build installed into this toolkit, and this driver
    facts = _machine(cudnn, built_for, cuda, branch)
    findings, _ = evaluate(facts, RuleContext(compat=COMPAT))
    cd501 = [f for f in findings if f.id == "CD501" and f.severity.value == "error"]
    assert bool(cd501) == (cudnn_ok is False), (cudnn, cuda, [f.title for f in cd501])
    toolkit_ok = COMPAT.driver_runs_cuda(driver, cuda)[0]
    cd301 = [f for f in findings if f.id == "CD301" and f.severity.value == "error"]
    assert bool(cd301) == (toolkit_ok is False), (driver, cuda)
    assert (toolkit_ok is False) == (by_check["driver"][0] is False)
    # explain: the findings it shows are the routed rules' findings on the same machine
    report = Report(facts=facts, findings=findings, rules_run=[f.id for f in findings])
    shown = _explain_findings(report, ["CD501", "CD301"])
    assert {f.id for f in shown if f.severity.value == "error"} == {f.id for f in cd501 + cd301}


def _explain_findings(report, rules):
    """What explain shows of a diagnosis for a text routed to `rules` (explain.routed_findings)."""
    from cudnn_doctor.explain import routed_findings

    return routed_findings(report.findings, rules)


@pytest.mark.parametrize("cudnn,cuda,expected", [
    ("9.1.0", "12.4", True), ("9.1.0", "12.6", True), ("9.1.0", "13.0", False), ("9.10.2", "11.2", False),
    ("8.9.7", "12.4", True), ("8.4.0", "10.1", False), ("9.28.1", "12.4", False),
])
def test_known_pairs(cudnn, cuda, expected):
    assert COMPAT.pair_verdict(cuda, cudnn).ok is expected
