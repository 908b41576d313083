"""NVIDIA_REQUIRE_* judged as libnvidia-container's src/cli/dsl.c and configure.c judge it: every operator, the
space/comma combinations, the parse quirks, and what the NVIDIA Container Toolkit hands over."""
import pytest

from cudnn_doctor.readers.nvidia_require import (NodeValues, compare_string, compare_version, evaluate, judge,
                                                 judge_brands, parse_term, requirements_from_env)

BRANDS = ["Quadro", "Tesla", "NVS", "GRID", "GeForce", "TITAN", "Unknown"]
NODE = NodeValues(cuda="12.2", driver="535.183.01", arch="8.0", brand="Tesla")


@pytest.mark.parametrize("v1,op,v2,want", [
    ("12.4", "=", "12.4", True), ("12.4", "=", "12.4.0", True), ("12.4.0.0", "=", "12.4", True),
    ("12.4", "=", "12.5", False), ("12.4", "!=", "12.5", True), ("12.4", "!=", "12.4.0", False),
    ("12.4", "<", "12.5", True), ("12.5", "<", "12.4", False), ("12.4", "<", "12.4", False),
    ("12.4", "<=", "12.4", True), ("12.4", "<=", "12.4.1", True), ("12.4.1", "<=", "12.4", False),
    ("12.10", ">", "12.9", True), ("12.4", ">", "12.4", False), ("12.4.1", ">", "12.4", True),
    ("12.4", ">=", "12.4", True), ("12.2", ">=", "12.4", False), ("13.0", ">=", "12.9", True),
    ("535.183.01", ">=", "535", True), ("535.183.01", "<", "536", True), ("470.57.02", "<", "471", True),
    ("12.05", ">", "12", True),  # the remainder after '.0' skipping is '5': greater
])
def test_version_operators(v1, op, v2, want):
    assert compare_version(v1, op, v2) is want


@pytest.mark.parametrize("v1,v2", [("12.4a", "12"), ("12", "12-rc"), ("12", ".5"), ("1" * 25, "1")])
def test_versions_other_than_digits_and_dots_are_invalid(v1, v2):
    assert compare_version(v1, ">=", v2) is None  # -1 in C: 'invalid expression'


def test_brand_compares_case_insensitively_with_equality_only():
    assert compare_string("Tesla", "=", "tesla") and compare_string("Tesla", "!=", "geforce")
    assert compare_string("Tesla", ">=", "tesla") is None


@pytest.mark.parametrize("term,want", [
    ("cuda>=12.4", ("cuda", ">=", "12.4")), ("CUDA>=12.4", ("cuda", ">=", "12.4")),
    ("driver!470", ("driver", "!=", "470")),  # a lone '!' matches '!=' on its first character
    ("arch=8.0", ("arch", "=", "8.0")), ("brand!=geforce", ("brand", "!=", "geforce")),
    ("driver<471", ("driver", "<", "471")), ("driver<=471", ("driver", "<=", "471")),
    ("cuda==12.4", None), ("cuda=<12", None), ("cuda<>12", None), ("cuda>=", None), (">=12", None),
    ("cuda", None), ("gpu>=1", None),
])
def test_terms_parse_as_evaluate_rule_does(term, want):
    assert parse_term(term) == want


def test_space_separates_alternatives_comma_joins_terms():
    req = "cuda>=12.4 brand=tesla,driver>=535,driver<536"
    assert evaluate(req, NODE).ok  # the second alternative holds: Tesla on 535
    assert not evaluate(req, NodeValues("12.2", "535.183.01", "8.0", "GeForce")).ok
    assert not evaluate(req, NodeValues("12.2", "550.54.14", "8.0", "Tesla")).ok  # 550 is outside 535's window
    assert evaluate("cuda>=12.0,driver>=535", NODE).ok and not evaluate("cuda>=12.0,driver>=550", NODE).ok


def test_refusal_message_is_the_first_alternative_as_the_runtime_prints_it():
    out = evaluate("cuda>=12.4 brand=tesla,driver>=470,driver<471", NODE)
    assert not out.ok and not out.invalid
    assert out.message == ("requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a "
                           "newer version, or use an earlier cuda container")
    assert evaluate("arch>=9.0", NODE).message == "requirement error: unsatisfied condition: arch>=9.0"


def test_evaluation_stops_at_the_first_deciding_term():
    assert evaluate("cuda>=11.0 foo>=1", NODE).ok  # never reaches the malformed alternative
    assert evaluate("cuda>=99,foo>=1 cuda>=12", NODE).ok  # the failing term ends its alternative first
    bad = evaluate("foo>=1 cuda>=11", NODE)
    assert not bad.ok and bad.invalid and bad.message == "requirement error: invalid expression"


def test_empty_pieces_are_skipped_and_do_not_reset_the_answer():
    assert evaluate("", NODE).ok and evaluate("  ", NODE).ok and evaluate("cuda>=12.0,,", NODE).ok
    assert not evaluate("cuda>=99 ,", NODE).ok  # an all-empty alternative keeps the previous refusal


def test_no_visible_gpu_makes_arch_and_brand_hold():
    no_gpu = NodeValues("12.2", "535.183.01", gpu=False)
    assert evaluate("arch>=9.0,brand=geforce", no_gpu).ok
    assert judge(["arch>=9.0"], [], no_gpu).ok and not judge(["arch>=9.0"], [NODE], no_gpu).ok


def test_every_gpu_is_judged():
    h100 = NodeValues("12.2", "535.183.01", "9.0", "Tesla")
    assert not judge(["arch>=9.0"], [h100, NODE], NODE).ok


def test_unknown_brand_is_tried_under_every_word_the_runtime_can_show():
    gpus = [NodeValues("12.2", "470.57.02", "8.0", None)]
    only_two = judge_brands(["cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471"],
                            gpus, NODE, BRANDS)
    assert only_two.outcome is None and set(only_two.refused_brands) == set(BRANDS) - {"Tesla", "Unknown"}
    every = " ".join("brand=%s,driver>=470,driver<471" % b.lower() for b in BRANDS)
    assert judge_brands(["cuda>=12.4 " + every], gpus, NODE, BRANDS).outcome.ok


def test_toolkit_requirements_from_the_image_env():
    assert requirements_from_env({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "NVIDIA_REQUIRE_ARCH": "arch>=8.0",
                                  "NVIDIA_REQUIRE_JETPACK": "jetpack>=5"}) == (["arch>=8.0", "cuda>=12.4"], None)
    assert requirements_from_env({"CUDA_VERSION": "11.8.0"}) == (["cuda>=11.8"], None)  # a legacy image
    assert requirements_from_env({"CUDA_VERSION": "12"}) == (["cuda>=12.0"], None)
    assert requirements_from_env({"CUDA_VERSION": "twelve"})[1]
    for true in ("1", "true", "True", "TRUE", "t", "T"):
        assert requirements_from_env({"NVIDIA_REQUIRE_CUDA": "cuda>=99", "NVIDIA_DISABLE_REQUIRE": true}) == ([], None)
    assert requirements_from_env({"NVIDIA_REQUIRE_CUDA": "cuda>=99", "NVIDIA_DISABLE_REQUIRE": "yes"})[0]
