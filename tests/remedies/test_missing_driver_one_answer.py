"""A missing driver gets one answer, decided by one builder (remedies.driver.missing_driver_fix) from where the
driver has to come from: check (CD101/CD801, every --for verdict, --smoke's CD510), smoke and explain agree on a
machine; no fix reinstalls a framework while the driver is missing."""
from __future__ import annotations

import pytest

from kit import FakeMachine, build_lib, have_gcc, FAKELIBS

from cudnn_doctor.diagnose import collect_facts
from cudnn_doctor.host import Host
from cudnn_doctor.knowledge import load_compat
from cudnn_doctor.model import Target
from cudnn_doctor.remedies.acting import building_for
from cudnn_doctor.rules import RuleContext, evaluate
from cudnn_doctor.probes.hostinfo import driver_place
from cudnn_doctor.smoke import run_smoke

CONTAINER = "docker run --gpus all"
HOST = "ubuntu-drivers install"  # under --root the tree's own: `sudo chroot ROOT ubuntu-drivers install`


def _machine(tmp_path, container: bool) -> FakeMachine:
    m = FakeMachine(tmp_path / ("container" if container else "host"))
    m.mkdir("/usr/lib")
    if container:
        m.file("/.dockerenv")
    return m


def _fixes(doc):
    return [f["fix"] for f in doc["findings"] if f.get("fix")]


@pytest.mark.parametrize("container", [False, True], ids=["host", "container"])
def test_check_for_torch_without_a_driver_says_driver_first(tmp_path, check_json, container):
    m = _machine(tmp_path, container)
    code, doc = check_json(m, "--for", "torch==2.5", env={"container": ""})
    fixes = _fixes(doc)
    assert code != 0 and fixes
    assert not any("pip install --force-reinstall torch" in f for f in fixes), fixes
    verdict = [f["fix"] for f in doc["findings"] if f["id"] == "CD920"]
    want, other = (CONTAINER, HOST) if container else (HOST, CONTAINER)
    assert verdict and want in verdict[0] and other not in verdict[0], verdict
    assert all(other not in f for f in fixes), fixes


@pytest.mark.skipif(not have_gcc(), reason="gcc builds the fake cuDNN")
@pytest.mark.parametrize("container", [False, True], ids=["host", "container"])
def test_smoke_without_libcuda_gives_checks_answer(tmp_path, check_json, container):
    m = _machine(tmp_path, container)
    _, doc = check_json(m, env={"container": ""})
    check_fix = " ".join(_fixes(doc))
    cudnn = str(build_lib("smoke_cudnn", source=FAKELIBS / "fake_cudnn_conv.c", CUDNN_V=90100))
    with building_for(Target()):
        result = run_smoke(cudnn, driver_library=str(tmp_path / "libcuda.so.1"), timeout=30.0,
                           host=Host(str(m.root), env={}))
    assert result.status == "SMOKE_NO_DRIVER_LIBRARY"
    want, other = (CONTAINER, HOST) if container else (HOST, CONTAINER)
    assert want in result.fix and other not in result.fix, result.fix
    assert want in check_fix and other not in check_fix
    # check --smoke's CD510 for the same result on the same machine: the same fix, from the same builder.
    facts = collect_facts(str(m.root), env={})
    findings, _ = evaluate(facts, RuleContext(compat=load_compat(), smoke=result, fix_target=Target()))
    [cd510] = [f for f in findings if f.id == "CD510"]
    assert cd510.remedy.text == result.fix


@pytest.mark.parametrize("place,marker", [("container", "/.dockerenv"), ("wsl", "/dev/dxg"), ("host", None)])
def test_the_place_is_read_from_the_machine(tmp_path, place, marker):
    m = FakeMachine(tmp_path / "m")
    m.mkdir("/usr/lib")
    if marker:
        m.file(marker)
    assert driver_place(Host(str(m.root), env={})) == place
