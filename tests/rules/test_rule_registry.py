"""The rule registry: each rule says where it applies and which command it judges; nothing rewrites the registry."""
from __future__ import annotations

from clirunner import CliRunner

from cudnn_doctor.cli import app
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Facts, Finding, Severity
from cudnn_doctor.model_windows import WindowsFacts
from cudnn_doctor.remedies import driver_upgrade_fix, stated
from cudnn_doctor.rules import (BENCH, CHECK, LINUX, RULES, WINDOWS, Rule, RuleContext, evaluate, registered)


def _ids(stage: str, platforms) -> set:
    return {r.id for r in registered(stage) if r.platforms == platforms}


def test_windows_rules_and_linux_only_rules_are_declared_at_registration():
    assert _ids(CHECK, WINDOWS) == {"CD150", "CD450", "CD650", "CD651", "CD652", "CD653", "CD654", "CD655", "CD656"}
    linux = _ids(CHECK, LINUX)
    assert {"CD101", "CD404", "CD601", "CD607", "CD801"} <= linux and not linux & _ids(CHECK, WINDOWS)
    # Every entry is the rule module's own function: nothing wraps or replaces the registered rules.
    assert all(r.func.__module__.startswith("cudnn_doctor.rules.") and r.func.__qualname__ == r.func.__name__
               for r in registered(CHECK) + registered(BENCH))


def test_bench_rules_are_in_the_registry_and_in_list_checks():
    assert [r.id for r in registered(BENCH)] == ["CD950", "CD951", "CD952", "CD953", "CD954", "CD955", "CD956",
                                                 "CD957"]
    listed = CliRunner().invoke(app, ["check", "--list-checks"]).stdout
    for rid in ("CD950", "CD955", "CD957", "CD650", "CD101"):
        assert rid in listed


def test_a_rule_for_the_other_platform_is_passed_over_but_counted():
    seen = []

    def judge(facts, ctx):
        seen.append(facts)
        return [Finding(id="CD998", severity=Severity.WARNING, title="t", remedy=stated("x"))]

    RULES.append(Rule("CD998", "linux-probe", "t", judge, LINUX))
    try:
        windows = Facts()
        windows.windows = WindowsFacts()
        _, ran = evaluate(windows, RuleContext(compat=load_compat()))
        assert "CD998" in ran and seen == []
        findings, _ = evaluate(Facts(), RuleContext(compat=load_compat()))
        assert [f.id for f in findings if f.id == "CD998"] == ["CD998"] and len(seen) == 1
    finally:
        RULES[:] = [r for r in RULES if r.id != "CD998"]


def test_check_never_runs_bench_rules():
    _, ran = evaluate(Facts(), RuleContext(compat=load_compat()))
    assert not any(r.startswith("CD95") for r in ran)


def test_the_driver_fix_is_written_for_the_platform_it_is_for(fix_target):
    linux = driver_upgrade_fix("550 or newer")
    assert linux.commands == ["sudo ubuntu-drivers install", "sudo reboot"] and linux.root
    windows = driver_upgrade_fix("550 or newer", "windows")
    assert "Windows installer" in windows.text and "sudo" not in windows.text and windows.commands == []


def test_rules_run_in_the_order_registry_lists_their_modules():
    """rules_run (and so every report) follows rules/registry.py, even when another module imported a rule module
    first (a rule module imported by itself registers its rules before the registry's earlier ones)."""
    import importlib

    import cudnn_doctor.rules as rules_pkg
    import cudnn_doctor.rules.registry as registry

    saved = list(rules_pkg.RULES)
    try:
        theano = [r for r in rules_pkg.RULES if r.func.__module__.endswith(".theano")]
        rules_pkg.RULES[:] = theano + [r for r in rules_pkg.RULES if r not in theano]  # as if imported first
        importlib.reload(registry)
        modules = [r.func.__module__ for r in rules_pkg.RULES]
        assert [registry._ORDER.index(m) for m in modules] == sorted(registry._ORDER.index(m) for m in modules)
        assert modules.index("cudnn_doctor.rules.leftovers") < modules.index("cudnn_doctor.rules.shadowing")
    finally:
        rules_pkg.RULES[:] = saved


def test_a_report_lists_every_check_rule_it_ran_in_registry_order(machine, check_json):
    """The one place rules_run is pinned (the golden files show a placeholder): `check --json` on a Linux machine
    and on a Windows drive lists every check-stage rule once, in registry order, bench's CD95x never."""
    from types import SimpleNamespace

    expected = [r.id for r in registered(CHECK)]
    assert len(expected) == len(set(expected)) and not any(i.startswith("CD95") for i in expected)
    machine.driver()
    assert check_json(machine)[1]["rules_run"] == expected
    windows = machine.root.parent / "C"
    (windows / "Windows" / "System32").mkdir(parents=True)
    assert check_json(SimpleNamespace(root=windows), "--env", r"PATH=C:\nothing")[1]["rules_run"] == expected


def test_a_duplicate_id_or_alias_is_refused_at_registration_naming_both_functions():
    import pytest

    from cudnn_doctor.rules import rule

    def again(facts, ctx):
        return []

    before = list(RULES)
    with pytest.raises(ValueError) as refused:
        rule("CD801", "container-twice", "t", section="driver")(again)
    message = str(refused.value)
    assert "test_rule_registry" in message and "cudnn_doctor.rules.containers.container" in message
    with pytest.raises(ValueError, match="container-without-gpu is already registered"):
        rule("CD899", "container-without-gpu", "t", section="driver")(again)
    with pytest.raises(ValueError, match="section 'gpu' is not one of"):
        rule("CD899", "fresh-alias", "t", section="gpu")
    assert RULES == before


def test_every_rule_declares_a_section_and_the_report_heads_are_sections():
    from cudnn_doctor.render.human import _sections
    from cudnn_doctor.rules import SECTIONS, section_of

    rules = registered(CHECK) + registered(BENCH)
    assert all(r.section in SECTIONS for r in rules)
    assert {key for key, _, _ in _sections(Facts(), 0)} <= set(SECTIONS)
    assert (section_of("CD510"), section_of("CD801"), section_of("CD001")) == ("smoke", "driver", "doctor")
