"""CUDA environment variables that slow every program (facts.environment): read from the machine's environment on
Linux and on a Windows drive, judged, and fixed by a command a shell really runs."""
from __future__ import annotations

import shutil
import subprocess
from types import SimpleNamespace

import pytest

from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import CUDA_ENVIRONMENT, Facts
from cudnn_doctor.rules import RuleContext, evaluate

CASES = [
    # (variable, value, finding id or None when the value is harmless)
    ("CUDA_LAUNCH_BLOCKING", "1", "CD612"),
    ("CUDA_LAUNCH_BLOCKING", " 1", "CD612"),
    ("CUDA_LAUNCH_BLOCKING", "0", None),
    ("CUDA_LAUNCH_BLOCKING", "", None),
    ("CUDA_MODULE_LOADING", "EAGER", "CD613"),
    ("CUDA_MODULE_LOADING", "eager", "CD613"),
    ("CUDA_MODULE_LOADING", "LAZY", None),
    ("CUDA_MODULE_LOADING", "DEFAULT", None),
    ("CUDA_CACHE_DISABLE", "1", "CD614"),
    ("CUDA_CACHE_DISABLE", "0", None),
]
IDS = {case[2] for case in CASES if case[2]}


def _found(facts: Facts):
    return [f for f in evaluate(facts, RuleContext(compat=load_compat()))[0] if f.id in IDS]


def test_every_variable_judged_is_one_the_probe_reads():
    assert {case[0] for case in CASES} <= set(CUDA_ENVIRONMENT)


@pytest.mark.parametrize("name, value, expected", CASES)
def test_a_variable_is_judged_by_its_value(name, value, expected):
    found = _found(Facts(environment={name: value}))
    assert [f.id for f in found] == ([expected] if expected else [])
    if expected:
        assert found[0].evidence == {name: value} and found[0].remedy.commands


@pytest.mark.parametrize("name, value, expected", [c for c in CASES if c[2]])
def test_the_linux_fix_runs_and_takes_the_variable_away(name, value, expected):
    """The oracle is a real shell: with the variable exported, the fix's commands leave it judged harmless."""
    fix = _found(Facts(environment={name: value}))[0].remedy
    assert fix.shell == "sh" and not fix.root
    script = "export %s=%s\n%s\nprintf %%s \"${%s-unset}\"" % (name, subprocess.list2cmdline([value]),
                                                               "\n".join(fix.commands), name)
    after = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    assert not _found(Facts(environment={} if after == "unset" else {name: after}))


@pytest.mark.parametrize("name, value, expected", [c for c in CASES if c[2]])
def test_check_reads_the_variable_on_linux_and_on_a_windows_drive(machine, check_json, name, value, expected):
    machine.driver()
    _, doc = check_json(machine, "--env", "%s=%s" % (name, value))
    assert doc["facts"]["environment"] == {name: value}
    assert [f["id"] for f in doc["findings"] if f["id"] in IDS] == [expected]
    drive = machine.root.parent / "C"
    (drive / "Windows" / "System32").mkdir(parents=True)
    _, doc = check_json(SimpleNamespace(root=drive), "--env", r"PATH=C:\nothing", "--env", "%s=%s" % (name, value))
    found = [f for f in doc["findings"] if f["id"] in IDS]
    assert doc["facts"]["environment"] == {name: value} and [f["id"] for f in found] == [expected]
    remedy = found[0]["remedy"]
    assert remedy["shell"] == "powershell" and len(remedy["commands"]) == 1
    assert ("env:" + name).lower() in remedy["commands"][0].lower()  # PowerShell's Env: drive, any case
    if shutil.which("pwsh"):  # where PowerShell is installed, it is the oracle for its own line
        script = "$env:%s = '%s'; %s; Write-Output $env:%s" % (name, value, remedy["commands"][0], name)
        after = subprocess.run(["pwsh", "-NoProfile", "-Command", script], capture_output=True, text=True).stdout
        assert not _found(Facts(environment={name: after.strip()} if after.strip() else {}))


def test_nothing_set_is_nothing_reported(machine, check_json):
    machine.driver()
    _, doc = check_json(machine)
    assert doc["facts"]["environment"] == {} and not [f for f in doc["findings"] if f["id"] in IDS]
